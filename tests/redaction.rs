//! The redaction layer: a table-driven corpus (secrets and near-misses), a property test
//! over random text with inserted secrets, and configured extra patterns.

use std::borrow::Cow;
use std::net::Ipv6Addr;

use proptest::prelude::*;
use strata::redact::{RedactError, Redactor, redact};

const JWT: &str = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U";

/// Input → exact expected output.
const CASES: &[(&str, &str)] = &[
    // e-mail
    ("contact alice@example.com today", "contact <email> today"),
    ("cc Bob.Smith+ops@mail.corp.example.org.", "cc <email>."),
    ("mailto:oncall@payments.io", "mailto:<email>"),
    // IPv4
    ("host 10.0.12.7 unreachable", "host <ipv4> unreachable"),
    (
        "peer 192.168.1.254:5432 refused",
        "peer <ipv4>:5432 refused",
    ),
    (
        "route 10.0.0.0/8 via 255.255.255.0",
        "route <ipv4>/8 via <ipv4>",
    ),
    ("(203.0.113.9)", "(<ipv4>)"),
    // IPv6
    ("from 2001:db8:85a3::8a2e:370:7334 via", "from <ipv6> via"),
    (
        "full 2001:0db8:0000:0000:0000:ff00:0042:8329 up",
        "full <ipv6> up",
    ),
    ("listen [::1]:8080", "listen [<ipv6>]:8080"),
    ("mapped ::ffff:192.0.2.128 seen", "mapped <ipv6> seen"),
    ("link fe80::1ff:fe23:4567:890a%eth0", "link <ipv6>%eth0"),
    // bearer tokens and JWTs
    (
        "Authorization: Bearer abcDEF123456ghiJKL789",
        "Authorization: Bearer <token>",
    ),
    (
        "authorization: bearer 9f8e7d6c5b4a3210.x",
        "authorization: bearer <token>",
    ),
    (
        "Authorization: Bearer eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "Authorization: Bearer <jwt>",
    ),
    (
        "cookie session=eyJhbGciOiJub25lIn0.eyJ1c2VyIjoiYm9iIn0. ok",
        "cookie session=<jwt> ok",
    ),
    // cloud access keys
    (
        "aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
        "aws_access_key_id = <access-key>",
    ),
    (
        "sts ASIAY34FZKBOKMUTVV7A expired",
        "sts <access-key> expired",
    ),
    (
        "key=AIzaSyA-1234567890abcdefghijklmnopqrstu&q=1",
        "key=<access-key>&q=1",
    ),
    (
        "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;EndpointSuffix=core.windows.net",
        "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=<access-key>;EndpointSuffix=core.windows.net",
    ),
    (
        "GITHUB_TOKEN=ghp_16C7e42F292c6912E7710c838347Ae178B4a",
        "GITHUB_TOKEN=<access-key>",
    ),
    (
        "pat github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJ used",
        "pat <access-key> used",
    ),
    (
        "slack xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
        "slack <access-key>",
    ),
    // private keys
    (
        "before\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA1c7+9z5Pad7OejecsQ0bu3aozN3tihPmljnnudb9G3HECdnH\nlWu2/a1gB9JW5TBQ+AVpum9Okx7KfqkfBKL9mcHgSL0yWMdjMfNOqNtrQqKlN4kE\n-----END RSA PRIVATE KEY-----\nafter",
        "before\n<private-key>\nafter",
    ),
    (
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ==\n-----END OPENSSH PRIVATE KEY----- done",
        "<private-key> done",
    ),
    (
        "pasted -----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC (truncated)",
        "pasted <private-key>",
    ),
    // passwords in URLs
    (
        "postgres://app:s3cr3t@db.internal:5432/prod",
        "postgres://app:<password>@db.internal:5432/prod",
    ),
    (
        "redis://:hunter2@10.1.2.3:6379/0",
        "redis://:<password>@<ipv4>:6379/0",
    ),
    (
        "https://alice:p@ss@example.com/x",
        "https://alice:<password>@example.com/x",
    ),
    // phone numbers
    ("call +1 415 555 2671 now", "call <phone> now"),
    ("sms +14155552671.", "sms <phone>."),
    ("uk desk +44 20 7946 0958", "uk desk <phone>"),
    ("de +49 (0)30 1234567", "de <phone>"),
    ("office (555) 123-4567 ext", "office <phone> ext"),
    (
        "cell 555-123-4567, home 555.987.6543",
        "cell <phone>, home <phone>",
    ),
    ("toll free 1-800-555-0199", "toll free <phone>"),
    ("us +1 (555) 123-4567", "us <phone>"),
    ("+4412345678 (555) 123-4567", "<phone> <phone>"),
    (
        "tel:+1-415-555-2671 (+1 415 555 2671)",
        "tel:<phone> (<phone>)",
    ),
    // scripts written without spaces
    (
        "服务器10.0.0.1宕机，电话555-123-4567",
        "服务器<ipv4>宕机，电话<phone>",
    ),
    // several kinds at once, and already-redacted text
    (
        "user bob@corp.io from 203.0.113.9 with Bearer tok_9f8e7d6c5b4a3 paged +1 415 555 2671",
        "user <email> from <ipv4> with Bearer <token> paged <phone>",
    ),
    (
        "<email> <ipv4> <ipv6> <jwt> <access-key> <private-key> <phone> Bearer <token> postgres://app:<password>@db",
        "<email> <ipv4> <ipv6> <jwt> <access-key> <private-key> <phone> Bearer <token> postgres://app:<password>@db",
    ),
];

/// Text that looks a little like a secret and must come back byte-identical.
const NEAR_MISSES: &[&str] = &[
    "release 1.2.3 shipped",
    "upgraded to v10.4.1.2 today",
    "build 10.4.1.2.5 deployed",
    "from 1.10.4.1.2 onward",
    "not an address 10.0.0.256",
    "at 2026-03-04T05:06:07Z the pager fired",
    "at 2026-03-04T05:06:07.123+01:00 it recovered",
    "between 12:30:45 and 12:31:02",
    "commit 3f9c2a1b4d5e6f708192a3b4c5d6e7f8091a2b3c",
    "short sha 3f9c2a1 reverted",
    "trace 123e4567-e89b-12d3-a456-426614174000",
    "listening on localhost:8080 and 0:9090",
    "std::vector<int> and std::collections::HashMap and a::b",
    "the :: operator",
    "see /var/log/nginx/error.log:1234",
    "p99 was 250ms over 1234567 requests",
    "date 2024-01-15 and 15.01.2024",
    "image nginx:1.25.3-alpine",
    "mac 00:1a:2b:3c:4d:5e",
    "Bearer authentication is required",
    "delta +1234 rows, +15000000 bytes",
    "ghp_short AKIA alone xoxb-",
    "user@localhost",
    "ids 4155552671 and 100-200-3000",
    "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
];

#[test]
fn corpus_is_big_enough() {
    assert!(CASES.len() + NEAR_MISSES.len() >= 30);
    assert!(NEAR_MISSES.len() >= 10);
}

#[test]
fn corpus_redacts_exactly() {
    let r = Redactor::new();
    let failures: Vec<String> = CASES
        .iter()
        .filter(|(input, expected)| r.redact(input) != *expected)
        .map(|(input, expected)| {
            format!(
                "{input:?}\n  expected {expected:?}\n  got      {:?}",
                r.redact(input)
            )
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn corpus_is_idempotent_and_clean() {
    let r = Redactor::new();
    for (_, expected) in CASES {
        assert!(
            matches!(r.redact(expected), Cow::Borrowed(_)),
            "{expected:?} changed again"
        );
        assert!(
            !r.finds_secret(expected),
            "{expected:?} still finds a secret"
        );
    }
}

#[test]
fn near_misses_stay_byte_identical() {
    let r = Redactor::new();
    let failures: Vec<String> = NEAR_MISSES
        .iter()
        .filter(|text| {
            !matches!(r.redact(text), Cow::Borrowed(t) if t == **text) || r.finds_secret(text)
        })
        .map(|text| format!("{text:?} became {:?}", r.redact(text)))
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn process_wide_redact_uses_the_builtins() {
    assert_eq!(redact(JWT), "<jwt>");
    assert_eq!(Redactor::default().redact("a@b.io"), "<email>");
    assert!(matches!(
        redact("nothing here"),
        Cow::Borrowed("nothing here")
    ));
}

#[test]
fn extra_patterns_apply_after_builtins() -> Result<(), RedactError> {
    let extra = [
        ("customer".to_owned(), r"CUST-[0-9]{6}".to_owned()),
        ("host_name".to_owned(), r"\bprod-db-[0-9]+\b".to_owned()),
    ];
    let r = Redactor::with_extra(&extra)?;
    assert_eq!(
        r.redact("CUST-123456 on prod-db-7 mailed a@b.io"),
        "<customer> on <host_name> mailed <email>"
    );
    assert!(r.finds_secret("CUST-000001"));
    assert!(!Redactor::new().finds_secret("CUST-000001"));
    Ok(())
}

#[test]
fn bad_extra_regex_is_an_error_naming_it() {
    let extra = [("ticket".to_owned(), "TICK-([0-9]+".to_owned())];
    let err = Redactor::with_extra(&extra).expect_err("unclosed group");
    assert!(
        matches!(&err, RedactError::InvalidRegex { name, .. } if name == "ticket"),
        "{err:?}"
    );
    let message = err.to_string();
    assert!(
        message.contains("`ticket`") && message.contains("not a valid regex"),
        "{message}"
    );
    assert!(message.contains("unclosed group"), "{message}");
}

#[test]
fn extra_names_and_placeholder_matches_are_rejected() {
    let bad_name = [("has space".to_owned(), "x".to_owned())];
    assert!(
        matches!(Redactor::with_extra(&bad_name), Err(RedactError::InvalidName { name }) if name == "has space")
    );

    let greedy = [("word".to_owned(), "[a-z]+".to_owned())];
    let err = Redactor::with_extra(&greedy).expect_err("matches `<email>`");
    assert!(
        matches!(&err, RedactError::MatchesPlaceholder { name, .. } if name == "word"),
        "{err:?}"
    );

    // A name that a built-in would redact cannot be a placeholder either.
    let shadowed = [("AKIAIOSFODNN7EXAMPLE".to_owned(), "zzz".to_owned())];
    assert!(matches!(
        Redactor::with_extra(&shadowed),
        Err(RedactError::MatchesPlaceholder { name, .. }) if name == "access-key"
    ));
}

// ---- property test ----

/// A secret as inserted into text, and the part of it that must not survive redaction.
#[derive(Clone, Debug)]
struct Secret {
    text: String,
    core: String,
}

fn whole(text: String) -> Secret {
    Secret {
        core: text.clone(),
        text,
    }
}

fn ipv6() -> impl Strategy<Value = Secret> {
    let first = prop::sample::select(vec![0x2001u16, 0xfe80, 0xfd12, 0x2a03]);
    let rest = prop::collection::vec(prop_oneof![Just(0u16), any::<u16>()], 7);
    (first, rest, any::<bool>()).prop_map(|(first, rest, full)| {
        let mut groups = [first; 8];
        groups[1..].copy_from_slice(&rest);
        if full {
            whole(groups.map(|g| format!("{g:04x}")).join(":"))
        } else {
            whole(Ipv6Addr::from(groups).to_string())
        }
    })
}

fn private_key() -> impl Strategy<Value = Secret> {
    let kind = prop::sample::select(vec!["RSA ", "EC ", "OPENSSH ", "ENCRYPTED ", ""]);
    (kind, prop::collection::vec("[A-Za-z0-9+/]{64}", 1..4)).prop_map(|(kind, lines)| {
        let body = lines.join("\n");
        Secret {
            text: format!(
                "-----BEGIN {kind}PRIVATE KEY-----\n{body}\n-----END {kind}PRIVATE KEY-----"
            ),
            core: body,
        }
    })
}

fn secret() -> impl Strategy<Value = Secret> {
    prop_oneof![
        ("[a-z]{3,10}(\\.[a-z]{2,6})?", "[a-z]{3,10}", "(com|org|io|net)")
            .prop_map(|(u, d, t)| whole(format!("{u}@{d}.{t}"))),
        any::<[u8; 4]>().prop_map(|o| whole(format!("{}.{}.{}.{}", o[0], o[1], o[2], o[3]))),
        ipv6(),
        ("[A-Za-z0-9_-]{10,40}", "[A-Za-z0-9_-]{10,40}", "[A-Za-z0-9_-]{10,43}")
            .prop_map(|(a, b, c)| whole(format!("eyJ{a}.eyJ{b}.{c}"))),
        "[A-Za-z0-9._-]{24,40}".prop_map(|t| Secret { text: format!("Bearer {t}"), core: t }),
        "(AKIA|ASIA)[A-Z0-9]{16}".prop_map(whole),
        "AIza[0-9A-Za-z_-]{35}".prop_map(whole),
        "[A-Za-z0-9+/]{40,86}".prop_map(|k| Secret {
            text: format!("DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={k}==;EndpointSuffix=core.windows.net"),
            core: k,
        }),
        "(gh[pous]_[A-Za-z0-9]{36}|github_pat_[A-Za-z0-9_]{82})".prop_map(whole),
        "xox[bpas]-[0-9]{10,12}-[A-Za-z0-9]{20,24}".prop_map(whole),
        private_key(),
        (
            "(postgres|redis|https|amqp)",
            "[a-z]{3,8}",
            "[A-Za-z0-9!$%^*~]{8,16}",
            "[a-z]{3,8}\\.(internal|example\\.com)"
        )
            .prop_map(|(s, u, p, h)| Secret { text: format!("{s}://{u}:{p}@{h}/db"), core: p }),
        ("[1-9][0-9]{0,2}", "[0-9]{3}", "[0-9]{3}", "[0-9]{4}", 0..3usize).prop_map(|(cc, a, b, c, style)| {
            whole(match style {
                0 => format!("+{cc}{a}{b}{c}"),
                1 => format!("+{cc} {a} {b} {c}"),
                _ => format!("+{cc}-{a}-{b}-{c}"),
            })
        }),
        ("[2-9][0-9]{2}", "[0-9]{3}", "[0-9]{4}", 0..3usize).prop_map(|(a, b, c, style)| {
            whole(match style {
                0 => format!("({a}) {b}-{c}"),
                1 => format!("{a}-{b}-{c}"),
                _ => format!("{a}.{b}.{c}"),
            })
        }),
    ]
}

/// Random text: printable ASCII (with newlines) or arbitrary non-control Unicode.
fn noise() -> impl Strategy<Value = String> {
    prop_oneof!["[ -~\n]{0,24}", "\\PC{0,12}"]
}

/// Words and near-misses that must never be redacted, whatever their neighbours.
fn benign() -> impl Strategy<Value = String> {
    let mut tokens: Vec<&'static str> = NEAR_MISSES.to_vec();
    tokens.extend([
        "deploy",
        "rolled back",
        "the pager fired",
        "latency",
        "p50",
        "node-7",
        "v2",
        "42",
        "::",
        "é",
    ]);
    let sep = prop::sample::select(vec![" ", "\n", ", ", "; ", "\t"]);
    prop::collection::vec((prop::sample::select(tokens), sep), 0..12)
        .prop_map(|parts| parts.into_iter().flat_map(|(t, s)| [t, s]).collect())
}

#[derive(Clone, Debug)]
enum Piece {
    Noise(String),
    Secret(Secret),
}

fn piece() -> impl Strategy<Value = Piece> {
    prop_oneof![
        noise().prop_map(Piece::Noise),
        benign().prop_map(Piece::Noise),
        secret().prop_map(Piece::Secret)
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn secrets_never_survive(pieces in prop::collection::vec(piece(), 0..8)) {
        let r = Redactor::new();
        let text = pieces
            .iter()
            .map(|p| match p {
                Piece::Noise(s) => s.as_str(),
                Piece::Secret(s) => s.text.as_str(),
            })
            .collect::<Vec<_>>()
            .join(" ");
        let out = r.redact(&text);
        prop_assert!(!r.finds_secret(&out), "still a secret in {:?}", out);
        let again = r.redact(&out);
        prop_assert!(matches!(again, Cow::Borrowed(_)), "not idempotent: {:?} -> {:?}", out, again);
        for piece in &pieces {
            if let Piece::Secret(s) = piece {
                prop_assert!(!out.contains(&s.core), "{:?} survived in {:?}", s.core, out);
            }
        }
    }

    #[test]
    fn text_without_secrets_is_borrowed(text in benign()) {
        let r = Redactor::new();
        prop_assert!(!r.finds_secret(&text), "false positive in {:?}", text);
        prop_assert!(matches!(r.redact(&text), Cow::Borrowed(t) if t == text), "changed {:?}", text);
    }

    #[test]
    fn each_secret_alone_is_found(s in secret()) {
        let r = Redactor::new();
        prop_assert!(r.finds_secret(&s.text), "missed {:?}", s.text);
        prop_assert!(!r.redact(&s.text).contains(&s.core));
    }
}
