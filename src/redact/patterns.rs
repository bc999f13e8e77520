//! The built-in patterns, in the order they are applied.
//!
//! Order matters because each rule runs on the output of the ones before it:
//!
//! 1. `private-key`: a PEM block is multi-line base64 that would otherwise be picked apart
//!    by every later rule. A `BEGIN` with no `END` (truncated paste) hides the rest of the text.
//! 2. `password` in URLs: `postgres://app:pw@db.example.com` would otherwise read as the
//!    e-mail `pw@db.example.com`, and its host may be an IP address.
//! 3. `jwt`: before bearer tokens and the generic rules, so `Bearer eyJ…` becomes
//!    `Bearer <jwt>` and the more specific kind is what the reader sees.
//! 4. `access-key` (AWS, GCP, Azure `AccountKey=`, GitHub, Slack): specific prefixes, before
//!    the generic bearer rule for the same reason.
//! 5. `token` after `Bearer`: any remaining opaque token.
//! 6. `email`.
//! 7. `ipv6`: before IPv4 so `::ffff:192.0.2.1` is one address, not a tail of one.
//! 8. `ipv4`.
//! 9. `phone`: last, the most heuristic; E.164 (`+…`, a parenthesised group allowed only
//!    right after the country code) before the North American forms (area code 2–9xx) so
//!    `+1 (555) 123-4567` is one number.
//!
//! Extra patterns from configuration run after all of these.

use regex::Regex;

use super::checks;
use super::rule::{Check, Rule};

pub(crate) struct Builtin {
    pub(crate) name: &'static str,
    pub(crate) pattern: &'static str,
    pub(crate) check: Check,
}

const fn builtin(name: &'static str, pattern: &'static str, check: Check) -> Builtin {
    Builtin {
        name,
        pattern,
        check,
    }
}

/// `(?-u:\b)` is an ASCII word boundary: cheaper than the Unicode one, and enough here.
pub(crate) const BUILTINS: &[Builtin] = &[
    builtin(
        "private-key",
        r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----(?:(?s:.*?)-----END[A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----|(?s:.*))",
        checks::whole,
    ),
    builtin(
        "password",
        r"[A-Za-z][A-Za-z0-9+.-]*://([^\s:/?#@]*):([^\s/?#]+)@",
        checks::url_password,
    ),
    builtin(
        "jwt",
        r"eyJ[A-Za-z0-9_-]{2,}\.[A-Za-z0-9_-]{2,}\.[A-Za-z0-9_-]*",
        checks::whole,
    ),
    builtin(
        "access-key",
        r"(?-u:\b)(?:AKIA|ASIA)[A-Z0-9]{16}(?-u:\b)",
        checks::whole,
    ),
    builtin(
        "access-key",
        r"(?-u:\b)AIza[0-9A-Za-z_-]{35}",
        checks::whole,
    ),
    builtin(
        "access-key",
        r"(?i:AccountKey|SharedAccessKey)=([A-Za-z0-9+/]{20,}={0,2})",
        checks::first_group,
    ),
    builtin(
        "access-key",
        r"(?-u:\b)(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})",
        checks::whole,
    ),
    builtin(
        "access-key",
        r"(?-u:\b)xox[abposr]-[A-Za-z0-9-]{10,}",
        checks::whole,
    ),
    builtin(
        "token",
        r"(?i:(?-u:\b)bearer)[ \t]+([A-Za-z0-9._~+/-]+=*)",
        checks::bearer_token,
    ),
    builtin(
        "email",
        r"[A-Za-z0-9._%+-]+@(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?\.)+[A-Za-z]{2,}",
        checks::whole,
    ),
    builtin(
        "ipv6",
        r"(?:[0-9A-Fa-f]{0,4}:){2,7}(?:[0-9]{1,3}(?:\.[0-9]{1,3}){3}|[0-9A-Fa-f]{1,4})?",
        checks::ipv6,
    ),
    builtin(
        "ipv4",
        r"(?-u:\b)(?:[0-9]{1,3}\.){3}[0-9]{1,3}(?-u:\b)",
        checks::ipv4,
    ),
    builtin(
        "phone",
        r"\+[1-9][0-9]{0,3}(?:[ .-]?\([0-9]{1,4}\))?(?:[0-9]|[ .-][0-9]){5,24}",
        checks::e164,
    ),
    builtin(
        "phone",
        r"(1[-. ])?(\([2-9][0-9]{2}\) ?|[2-9][0-9]{2}[-.])[0-9]{3}([-.])[0-9]{4}",
        checks::nanp,
    ),
];

/// Compiles the built-ins. They are constants covered by a unit test, so a failure here is
/// a programming error; it is logged and that rule is left out rather than panicking.
pub(crate) fn compile() -> Vec<Rule> {
    BUILTINS
        .iter()
        .filter_map(|b| match Regex::new(b.pattern) {
            Ok(regex) => Some(Rule::new(b.name, regex, b.check)),
            Err(error) => {
                tracing::error!(pattern = b.name, %error, "built-in redaction pattern does not compile");
                None
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_compiles() {
        for b in BUILTINS {
            assert!(
                Regex::new(b.pattern).is_ok(),
                "built-in `{}` does not compile",
                b.name
            );
        }
        assert_eq!(compile().len(), BUILTINS.len());
    }

    #[test]
    fn no_builtin_matches_a_placeholder() {
        let rules = compile();
        let placeholders = rules.iter().map(|r| r.placeholder().to_owned());
        let in_context = [
            "Bearer <token>",
            "AccountKey=<access-key>",
            "https://user:<password>@host",
        ];
        for p in placeholders.chain(in_context.map(String::from)) {
            for rule in &rules {
                assert!(!rule.finds(&p), "`{}` matches `{p}`", rule.name());
            }
        }
    }
}
