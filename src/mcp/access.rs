//! Who may call the HTTP server: bearer tokens, each read-only or read-write, from a token file
//! (one `TOKEN ro|rw NAME` a line) or from `STRATA_MCP_TOKEN` (one read-write token). Tokens are
//! kept as SHA-256 digests and compared in constant time; no error or log line carries one.

use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// The environment variable holding one read-write token.
pub const ENV_TOKEN: &str = "STRATA_MCP_TOKEN";
/// The name the environment's token goes by in logs.
pub const ENV_TOKEN_NAME: &str = "env";
/// The shortest token accepted: shorter ones are guessable.
pub const MIN_TOKEN_LEN: usize = 16;
const MAX_NAME_LEN: usize = 64;

/// What a token lets its holder do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Every tool and resource that only reads.
    ReadOnly,
    /// Everything, writes (`record_incident`) included.
    ReadWrite,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::ReadOnly => "ro",
            Role::ReadWrite => "rw",
        }
    }
}

/// What one HTTP request may do, as the HTTP layer found it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Access {
    /// The token's name; `None` on a server that asks for no token (loopback).
    pub name: Option<String>,
    pub role: Role,
}

impl Access {
    /// A server that asks for no token: everything, as before tokens existed.
    pub fn open() -> Access {
        Access {
            name: None,
            role: Role::ReadWrite,
        }
    }

    /// The holder, for logs and refusals: the token's name, never the token.
    pub fn holder(&self) -> &str {
        self.name.as_deref().unwrap_or("-")
    }
}

struct Token {
    digest: [u8; 32],
    access: Access,
}

/// The tokens a server accepts.
pub struct Tokens {
    tokens: Vec<Token>,
}

#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    #[error("cannot read the token file {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "the token file {path} may be read or written by other users (mode {mode:o}); it holds secrets, so it is refused: run `chmod 600 {path}`"
    )]
    Exposed { path: PathBuf, mode: u32 },
    #[error("{path}:{line}: {message}")]
    Line {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error("the token file {0} holds no token; expected lines `TOKEN ro|rw NAME`")]
    Empty(PathBuf),
    #[error("{ENV_TOKEN}: {0}")]
    Env(String),
}

impl Tokens {
    /// The tokens of `file` (when given) and of `env` (the value of `STRATA_MCP_TOKEN`, when
    /// set); `None` when neither is given.
    pub fn load(file: Option<&Path>, env: Option<&str>) -> Result<Option<Tokens>, TokenError> {
        let mut tokens = Vec::new();
        if let Some(path) = file {
            tokens = read_file(path)?;
        }
        if let Some(value) = env {
            check_token(value).map_err(TokenError::Env)?;
            let digest = digest(value);
            if tokens
                .iter()
                .any(|t: &Token| bool::from(t.digest.ct_eq(&digest)))
            {
                return Err(TokenError::Env(
                    "the same token is in the token file as well; keep it in one place".into(),
                ));
            }
            tokens.push(Token {
                digest,
                access: Access {
                    name: Some(ENV_TOKEN_NAME.into()),
                    role: Role::ReadWrite,
                },
            });
        }
        Ok((!tokens.is_empty()).then_some(Tokens { tokens }))
    }

    /// The access `presented` grants, compared with every token in constant time.
    pub fn check(&self, presented: &str) -> Option<&Access> {
        let presented = digest(presented);
        let mut found = None;
        for token in &self.tokens {
            if bool::from(token.digest.ct_eq(&presented)) {
                found = Some(&token.access);
            }
        }
        found
    }

    pub fn len(&self) -> usize {
        self.tokens.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }
}

fn digest(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

fn read_file(path: &Path) -> Result<Vec<Token>, TokenError> {
    let read = |source| TokenError::Read {
        path: path.to_path_buf(),
        source,
    };
    let mut file = std::fs::File::open(path).map_err(read)?;
    // The mode of the file opened, not of whatever the path names a moment later.
    let mode = file.metadata().map_err(read)?.permissions().mode();
    if mode & 0o006 != 0 {
        return Err(TokenError::Exposed {
            path: path.to_path_buf(),
            mode: mode & 0o7777,
        });
    }
    let mut text = String::new();
    file.read_to_string(&mut text).map_err(read)?;
    let mut tokens: Vec<(usize, Token)> = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        let at = |message: String| TokenError::Line {
            path: path.to_path_buf(),
            line: number,
            message,
        };
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let token = parse_line(line).map_err(at)?;
        for (earlier, seen) in &tokens {
            if bool::from(seen.digest.ct_eq(&token.digest)) {
                return Err(at(format!("the same token as line {earlier}")));
            }
            if seen.access.name == token.access.name {
                return Err(at(format!(
                    "the name {:?} is taken by line {earlier}; each token has its own name",
                    token.access.holder()
                )));
            }
        }
        tokens.push((number, token));
    }
    if tokens.is_empty() {
        return Err(TokenError::Empty(path.to_path_buf()));
    }
    Ok(tokens.into_iter().map(|(_, t)| t).collect())
}

/// One `TOKEN ro|rw NAME` line. Errors never quote a field: any of them may be a token
/// written in the wrong place.
fn parse_line(line: &str) -> Result<Token, String> {
    let fields: Vec<&str> = line.split_whitespace().collect();
    let [token, role, name] = fields[..] else {
        return Err(format!(
            "expected `TOKEN ro|rw NAME` (3 fields), found {} field{}",
            fields.len(),
            if fields.len() == 1 { "" } else { "s" }
        ));
    };
    check_token(token)?;
    let role = match role {
        "ro" => Role::ReadOnly,
        "rw" => Role::ReadWrite,
        _ => return Err("the second field must be `ro` (read-only) or `rw` (read-write)".into()),
    };
    let name_ok = name.len() <= MAX_NAME_LEN
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '@'));
    if !name_ok {
        return Err(format!(
            "the name (third field) must be at most {MAX_NAME_LEN} letters, digits or `-_.@`"
        ));
    }
    Ok(Token {
        digest: digest(token),
        access: Access {
            name: Some(name.to_string()),
            role,
        },
    })
}

/// A token is an RFC 6750 `b64token` of at least [`MIN_TOKEN_LEN`] characters.
fn check_token(token: &str) -> Result<(), String> {
    if token.len() < MIN_TOKEN_LEN {
        return Err(format!(
            "the token is {} characters; at least {MIN_TOKEN_LEN} are needed (e.g. `openssl rand -hex 32`)",
            token.chars().count()
        ));
    }
    let body = token.trim_end_matches('=');
    let valid = !body.is_empty()
        && body
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | '~' | '+' | '/'));
    if !valid {
        return Err(
            "the token may hold only letters, digits and `-._~+/` (then `=` padding)".into(),
        );
    }
    Ok(())
}

/// The token of an `Authorization` header value: `Bearer TOKEN`, the scheme in any case.
pub fn bearer(header: &str) -> Option<&str> {
    let (scheme, token) = header.trim().split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim())
        .filter(|t| !t.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    const RO: &str = "ro-token-0123456789abcdef";
    const RW: &str = "rw-token-0123456789abcdef";

    fn file(text: &str, mode: u32) -> tempfile::NamedTempFile {
        let f = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(f.path(), text).unwrap();
        std::fs::set_permissions(f.path(), std::fs::Permissions::from_mode(mode)).unwrap();
        f
    }

    #[test]
    fn a_token_file_grants_each_token_its_role() {
        let f = file(
            &format!("# team tokens\n{RO} ro grafana\n\n  {RW}  rw  agent@ci \n"),
            0o600,
        );
        let tokens = Tokens::load(Some(f.path()), None).unwrap().unwrap();
        assert_eq!(tokens.len(), 2);
        let ro = tokens.check(RO).unwrap();
        assert_eq!((ro.holder(), ro.role), ("grafana", Role::ReadOnly));
        let rw = tokens.check(RW).unwrap();
        assert_eq!((rw.holder(), rw.role), ("agent@ci", Role::ReadWrite));
        assert!(tokens.check("ro-token-0123456789abcdeX").is_none());
        assert!(tokens.check("").is_none());
    }

    #[test]
    fn the_environment_token_is_read_write_and_joins_the_file() {
        let f = file(&format!("{RO} ro grafana\n"), 0o640);
        let tokens = Tokens::load(Some(f.path()), Some(RW)).unwrap().unwrap();
        assert_eq!(tokens.check(RW).unwrap().role, Role::ReadWrite);
        assert_eq!(tokens.check(RW).unwrap().holder(), ENV_TOKEN_NAME);
        let same = Tokens::load(Some(f.path()), Some(RO)).err().unwrap();
        assert!(same.to_string().contains("token file as well"), "{same}");
        assert!(Tokens::load(None, None).unwrap().is_none());
        let short = Tokens::load(None, Some("abc")).err().unwrap().to_string();
        assert!(
            short.starts_with(ENV_TOKEN) && short.contains("at least 16"),
            "{short}"
        );
    }

    #[test]
    fn a_file_others_may_read_or_write_is_refused_saying_why() {
        for mode in [0o644, 0o602, 0o666] {
            let f = file(&format!("{RO} ro grafana\n"), mode);
            let e = Tokens::load(Some(f.path()), None)
                .err()
                .unwrap()
                .to_string();
            assert!(e.contains("other users") && e.contains("chmod 600"), "{e}");
        }
    }

    #[test]
    fn a_bad_line_is_named_and_never_quotes_a_token() {
        let cases = [
            (format!("{RO} ro\n"), "found 2 fields"),
            (format!("{RO} admin grafana\n"), "`ro` (read-only) or `rw`"),
            ("short ro grafana\n".to_string(), "at least 16"),
            (format!("{RO}\" ro grafana\n"), "only letters"),
            (format!("{RO} ro graf\u{e4}na\n"), "the name"),
            (
                format!("{RO} ro a\n{RO} rw b\n"),
                "the same token as line 2",
            ),
            (format!("{RO} ro a\n{RW} rw a\n"), "taken by line 2"),
            (format!("ro {RO} grafana\n"), "at least 16"),
            (format!("{RO} {RW} grafana\n"), "`ro` (read-only) or `rw`"),
        ];
        for (text, expected) in cases {
            let f = file(&format!("# comment\n{text}"), 0o600);
            let e = Tokens::load(Some(f.path()), None)
                .err()
                .unwrap()
                .to_string();
            assert!(e.contains(expected), "{text:?}: {e}");
            assert!(e.contains(":2:") || e.contains(":3:"), "{e}");
            assert!(!e.contains(RO) && !e.contains(RW), "a token leaked: {e}");
        }
        let empty = file("# nothing yet\n\n", 0o600);
        let e = Tokens::load(Some(empty.path()), None).err().unwrap();
        assert!(e.to_string().contains("holds no token"), "{e}");
    }

    #[test]
    fn the_bearer_scheme_is_read_in_any_case() {
        assert_eq!(bearer("Bearer abc"), Some("abc"));
        assert_eq!(bearer("bearer  abc "), Some("abc"));
        assert_eq!(bearer("Basic abc"), None);
        assert_eq!(bearer("Bearer "), None);
        assert_eq!(bearer("Bearer"), None);
    }
}
