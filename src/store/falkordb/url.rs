use std::fmt;
use std::str::FromStr;

use percent_encoding::{AsciiSet, CONTROLS, percent_decode_str, utf8_percent_encode};

/// What a user name may not hold as it is in a URL.
const USERINFO: &AsciiSet = &CONTROLS
    .add(b':')
    .add(b'@')
    .add(b'/')
    .add(b'%')
    .add(b'?')
    .add(b'#')
    .add(b' ');

/// `falkordb://[USER[:PASSWORD]@]HOST:PORT/GRAPH`, or `falkordbs://…` over TLS: where the
/// graph lives. The password never leaves this value except to authenticate: it is shown as
/// `***` wherever the location is shown.
///
/// `falkordb+sentinel://[USER[:PASSWORD]@]HOST:PORT[,HOST:PORT…]/GRAPH[?primary=NAME]`: the
/// graph on whichever server the Redis Sentinels at those addresses name as the primary of
/// `NAME` (`strata` by default); `host` and `port` are then the first Sentinel's, and the
/// credentials are the data servers'.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FalkorUrl {
    pub host: String,
    pub port: u16,
    pub graph: String,
    pub tls: bool,
    pub username: Option<String>,
    pub password: Option<Password>,
    pub sentinel: Option<SentinelSet>,
}

/// The Sentinels that know where the primary is, and the name they monitor it by.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SentinelSet {
    pub nodes: Vec<(String, u16)>,
    pub primary: String,
}

/// The name Sentinels monitor the primary by when the URL does not say.
pub const DEFAULT_PRIMARY_NAME: &str = "strata";

/// A password, shown as `***` by `Debug` so that no log or error can print it.
#[derive(Clone, PartialEq, Eq)]
pub struct Password(String);

impl Password {
    pub fn new(secret: impl Into<String>) -> Self {
        Password(secret.into())
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Password {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

/// The password when the URL has none, so that it need not appear in a command line.
pub const PASSWORD_ENV: &str = "STRATA_FALKORDB_PASSWORD";

const DEFAULT_PORT: u16 = 6379;
const DEFAULT_GRAPH: &str = "incident_memory";
const SCHEME: &str = "falkordb://";
const TLS_SCHEME: &str = "falkordbs://";
const SENTINEL_SCHEME: &str = "falkordb+sentinel://";

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error(
    "expected a store URL like falkordb://[USER:PASSWORD@]HOST:PORT/GRAPH (falkordbs:// for TLS, \
     falkordb+sentinel://HOST:PORT,HOST:PORT/GRAPH?primary=NAME through Redis Sentinel), got {given:?}: {why}"
)]
pub struct FalkorUrlError {
    /// What was given, its password masked.
    given: String,
    why: &'static str,
}

/// `s` with anything that may be a password (between the first `:` of what could be user
/// info and the last `@`) replaced by `***`: for showing a location that failed to parse,
/// where masking too much is fine and too little is not.
pub fn mask_credentials(s: &str) -> String {
    let start = match (s.find("://"), s.find('@')) {
        (Some(scheme), Some(at)) if scheme < at => scheme + 3,
        (Some(scheme), None) => scheme + 3,
        _ => 0,
    };
    let Some(at) = s[start..].rfind('@').map(|i| start + i) else {
        return s.to_string();
    };
    match s[start..at].find(':') {
        Some(colon) => format!("{}:***{}", &s[..start + colon], &s[at..]),
        None => s.to_string(),
    }
}

impl FromStr for FalkorUrl {
    type Err = FalkorUrlError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let fail = |why| FalkorUrlError {
            given: mask_credentials(s),
            why,
        };
        let (tls, sentinel, rest) = if let Some(rest) = s.strip_prefix(TLS_SCHEME) {
            (true, false, rest)
        } else if let Some(rest) = s.strip_prefix(SENTINEL_SCHEME) {
            (false, true, rest)
        } else {
            (
                false,
                false,
                s.strip_prefix(SCHEME).ok_or_else(|| {
                    fail("the scheme must be falkordb://, falkordbs:// or falkordb+sentinel://")
                })?,
            )
        };
        let (rest, primary) = match rest.split_once('?') {
            Some((rest, query)) if sentinel => match query.strip_prefix("primary=") {
                Some(name) if !name.is_empty() && name.chars().all(is_name_char) => {
                    (rest, Some(name))
                }
                _ => {
                    return Err(fail(
                        "after '?' only primary=NAME may follow (letters, digits, '-', '_', '.')",
                    ));
                }
            },
            _ => (rest, None),
        };
        let (authority, graph) = rest.split_once('/').unwrap_or((rest, DEFAULT_GRAPH));
        let graph = if graph.is_empty() {
            DEFAULT_GRAPH
        } else {
            graph
        };
        if graph
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || matches!(c, '/' | '@' | '?' | '#'))
        {
            return Err(fail(
                "the graph name may not contain spaces, '/', '@', '?', '#' or control characters \
                 (percent-encode them in a user or password: %2F, %40, %3F, %23)",
            ));
        }
        let (userinfo, hostport) = match authority.rsplit_once('@') {
            Some((u, h)) => (Some(u), h),
            None => (None, authority),
        };
        let decode = |part: &str| {
            percent_decode_str(part)
                .decode_utf8()
                .map(|d| d.into_owned())
                .map_err(|_| fail("the user and password must be UTF-8 once %-decoded"))
        };
        let (username, password) = match userinfo {
            None => (None, None),
            Some(u) => {
                let (user, password) = match u.split_once(':') {
                    Some((user, password)) => (user, Some(password)),
                    None => (u, None),
                };
                let user = decode(user)?;
                let password = password.map(decode).transpose()?;
                (
                    (!user.is_empty()).then_some(user),
                    password.filter(|p| !p.is_empty()).map(Password),
                )
            }
        };
        let mut nodes = Vec::new();
        for hostport in hostport.split(',') {
            nodes.push(host_and_port(hostport, &fail)?);
        }
        if nodes.len() > 1 && !sentinel {
            return Err(fail(
                "one HOST:PORT only; several are Sentinels' (falkordb+sentinel://)",
            ));
        }
        let (host, port) = nodes[0].clone();
        Ok(FalkorUrl {
            host,
            port,
            graph: graph.to_string(),
            tls,
            username,
            password,
            sentinel: sentinel.then(|| SentinelSet {
                nodes,
                primary: primary.unwrap_or(DEFAULT_PRIMARY_NAME).to_string(),
            }),
        })
    }
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')
}

/// `HOST[:PORT]` (the port 6379 when absent; an IPv6 address in brackets).
fn host_and_port(
    hostport: &str,
    fail: &dyn Fn(&'static str) -> FalkorUrlError,
) -> Result<(String, u16), FalkorUrlError> {
    {
        // A bracketed IPv6 address holds colons of its own.
        let split =
            match hostport.find(']') {
                Some(end) if hostport.starts_with('[') => match &hostport[end + 1..] {
                    "" => (hostport, None),
                    after => (
                        &hostport[..end + 1],
                        Some(after.strip_prefix(':').ok_or_else(|| {
                            fail("only :PORT may follow a bracketed IPv6 address")
                        })?),
                    ),
                },
                _ => match hostport.rsplit_once(':') {
                    Some((h, p)) => (h, Some(p)),
                    None => (hostport, None),
                },
            };
        let (host, port) = match split {
            (h, Some(p)) => (
                h,
                p.parse()
                    .map_err(|_| fail("the port must be a number 1-65535"))?,
            ),
            (h, None) => (h, DEFAULT_PORT),
        };
        if host.is_empty() {
            return Err(fail("the host is missing"));
        }
        if host
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || c == '@')
        {
            return Err(fail(
                "the host may not contain spaces, '@' or control characters",
            ));
        }
        if port == 0 {
            return Err(fail("the port must be a number 1-65535"));
        }
        Ok((host.to_string(), port))
    }
}

impl FalkorUrl {
    /// The server, or for Sentinel the primary's name and the Sentinels asked for it.
    pub fn address(&self) -> String {
        match &self.sentinel {
            Some(s) => format!(
                "the primary {:?} named by Sentinel at {}",
                s.primary,
                s.addresses()
            ),
            None => format!("{}:{}", self.host, self.port),
        }
    }

    /// The same location without its password, whose `Display` parses back to it: for
    /// handing to another process, with the password passed in [`PASSWORD_ENV`].
    pub fn without_password(&self) -> FalkorUrl {
        FalkorUrl {
            password: None,
            ..self.clone()
        }
    }

    /// The password to authenticate with: the URL's, else [`PASSWORD_ENV`]'s.
    pub(crate) fn password(&self) -> Option<Password> {
        self.password.clone().or_else(|| {
            std::env::var(PASSWORD_ENV)
                .ok()
                .filter(|p| !p.is_empty())
                .map(Password)
        })
    }

    /// Where and how to connect: TLS or not, and the credentials.
    pub fn connection_info(&self) -> redis::RedisResult<redis::ConnectionInfo> {
        let host = self
            .host
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .unwrap_or(&self.host)
            .to_string();
        let address = if self.tls {
            redis::ConnectionAddr::TcpTls {
                host,
                port: self.port,
                insecure: false,
                tls_params: None,
            }
        } else {
            redis::ConnectionAddr::Tcp(host, self.port)
        };
        let mut settings = redis::RedisConnectionInfo::default();
        if let Some(user) = &self.username {
            settings = settings.set_username(user);
        }
        if let Some(password) = self.password() {
            settings = settings.set_password(password.expose());
        }
        redis::IntoConnectionInfo::into_connection_info(address)
            .map(|info| info.set_redis_settings(settings))
    }

    /// A directory name for the indexes derived from this graph: the server and the graph,
    /// never the credentials, and the same over TLS or not.
    pub fn slug(&self) -> String {
        format!("falkordb-{}-{}-{}", self.host, self.port, self.graph)
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    }
}

impl fmt::Display for FalkorUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match (self.tls, self.sentinel.is_some()) {
            (_, true) => SENTINEL_SCHEME,
            (true, false) => TLS_SCHEME,
            (false, false) => SCHEME,
        })?;
        match (&self.username, &self.password) {
            (Some(user), Some(_)) => write!(f, "{}:***@", utf8_percent_encode(user, USERINFO))?,
            (None, Some(_)) => f.write_str(":***@")?,
            (Some(user), None) => write!(f, "{}@", utf8_percent_encode(user, USERINFO))?,
            (None, None) => {}
        }
        match &self.sentinel {
            Some(s) => write!(f, "{}/{}?primary={}", s.addresses(), self.graph, s.primary),
            None => write!(f, "{}:{}/{}", self.host, self.port, self.graph),
        }
    }
}

impl SentinelSet {
    /// `HOST:PORT,HOST:PORT…`
    pub fn addresses(&self) -> String {
        self.nodes
            .iter()
            .map(|(h, p)| format!("{h}:{p}"))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Where each Sentinel listens (plain TCP: Sentinels carry no data).
    pub fn connection_addrs(&self) -> Vec<redis::ConnectionAddr> {
        self.nodes
            .iter()
            .map(|(h, p)| {
                let host = h
                    .strip_prefix('[')
                    .and_then(|h| h.strip_suffix(']'))
                    .unwrap_or(h);
                redis::ConnectionAddr::Tcp(host.to_string(), *p)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_host_port_and_graph() {
        let u: FalkorUrl = "falkordb://127.0.0.1:6390/mem".parse().unwrap();
        assert_eq!(
            (u.host.as_str(), u.port, u.graph.as_str(), u.tls),
            ("127.0.0.1", 6390, "mem", false)
        );
        let d: FalkorUrl = "falkordb://db".parse().unwrap();
        assert_eq!((d.port, d.graph.as_str()), (6379, "incident_memory"));
        assert_eq!(u.to_string(), "falkordb://127.0.0.1:6390/mem");
    }

    #[test]
    fn sentinel_urls_name_every_sentinel_and_the_primary() {
        let u: FalkorUrl =
            "falkordb+sentinel://app:pw@127.0.0.1:26379,[::1]:26380,s3/mem?primary=cache-1"
                .parse()
                .unwrap();
        let set = u.sentinel.clone().unwrap();
        assert_eq!(
            set.nodes,
            vec![
                ("127.0.0.1".to_string(), 26379),
                ("[::1]".to_string(), 26380),
                ("s3".to_string(), 6379)
            ]
        );
        assert_eq!((set.primary.as_str(), u.graph.as_str()), ("cache-1", "mem"));
        assert_eq!((u.host.as_str(), u.port), ("127.0.0.1", 26379));
        let shown = u.to_string();
        assert_eq!(
            shown,
            "falkordb+sentinel://app:***@127.0.0.1:26379,[::1]:26380,s3:6379/mem?primary=cache-1"
        );
        assert_eq!(shown.replace("***", "pw").parse::<FalkorUrl>().unwrap(), u);
        let d: FalkorUrl = "falkordb+sentinel://a:1,b:2/g".parse().unwrap();
        assert_eq!(d.sentinel.unwrap().primary, DEFAULT_PRIMARY_NAME);
        for (bad, why) in [
            ("falkordb://a:1,b:2/g", "several are Sentinels'"),
            ("falkordb+sentinel://a:1/g?primary=", "primary=NAME"),
            ("falkordb+sentinel://a:1/g?master=x", "primary=NAME"),
            ("falkordb+sentinel://a:1,,b:2/g", "the host is missing"),
        ] {
            let err = bad.parse::<FalkorUrl>().unwrap_err().to_string();
            assert!(err.contains(why), "{bad}: {err}");
        }
    }

    #[test]
    fn credentials_are_parsed_and_never_shown() {
        let u: FalkorUrl = "falkordbs://default:s3cret@db.internal:6380/g"
            .parse()
            .unwrap();
        assert!(u.tls);
        assert_eq!(u.host, "db.internal");
        assert_eq!(u.port, 6380);
        assert_eq!(u.username.as_deref(), Some("default"));
        assert_eq!(u.password.as_ref().map(Password::expose), Some("s3cret"));
        assert_eq!(u.to_string(), "falkordbs://default:***@db.internal:6380/g");
        assert!(!format!("{u:?}").contains("s3cret"), "{u:?}");
        assert_eq!(u.slug(), "falkordb-db.internal-6380-g");
        let info = u.connection_info().unwrap();
        assert_eq!(info.redis_settings().password(), Some("s3cret"));
        assert_eq!(info.redis_settings().username(), Some("default"));
        assert!(matches!(
            info.addr(),
            redis::ConnectionAddr::TcpTls { host, port: 6380, insecure: false, .. } if host == "db.internal"
        ));

        let only_password: FalkorUrl = "falkordb://:p%40ss%3Aword@h:1/g".parse().unwrap();
        assert_eq!(only_password.username, None);
        assert_eq!(
            only_password.password.as_ref().map(Password::expose),
            Some("p@ss:word"),
            "percent-encoded characters are decoded"
        );
        assert_eq!(only_password.to_string(), "falkordb://:***@h:1/g");
        let v6: FalkorUrl = "falkordb://[::1]:7000/g".parse().unwrap();
        assert_eq!((v6.host.as_str(), v6.port), ("[::1]", 7000));
        let v6: FalkorUrl = "falkordb://[::1]/g".parse().unwrap();
        assert_eq!((v6.host.as_str(), v6.port), ("[::1]", 6379));
        let odd: FalkorUrl = "falkordb://a%40b%3Ac:p@h:1/g".parse().unwrap();
        assert_eq!(odd.username.as_deref(), Some("a@b:c"));
        let shown: FalkorUrl = odd.without_password().to_string().parse().unwrap();
        assert_eq!(shown, odd.without_password(), "{odd}");
        let only_user: FalkorUrl = "falkordb://reader@h:1/g".parse().unwrap();
        assert_eq!(only_user.to_string(), "falkordb://reader@h:1/g");
        assert!(matches!(
            only_user.connection_info().unwrap().addr(),
            redis::ConnectionAddr::Tcp(h, 1) if h == "h"
        ));
    }

    #[test]
    fn bad_urls_say_what_was_expected_without_the_password() {
        for bad in [
            "redis://x:1/g",
            "falkordb://:1/g",
            "falkordb://x:y/g",
            "falkordb://x:0/g",
            "falkordb://x:1/a b",
            "falkordb://u:hunter2@:1/g",
            "falkordb://u:hunter2@x:y/g",
            "falkordb://u:hunter2@x y:1/g",
            "falkordb://u:1234/hunter2@h:1/g",
        ] {
            let e = bad.parse::<FalkorUrl>().unwrap_err().to_string();
            assert!(
                e.contains("falkordb://[USER:PASSWORD@]HOST:PORT/GRAPH"),
                "{e}"
            );
            assert!(!e.contains("hunter2"), "{e}");
        }
    }

    #[test]
    fn masking_leaves_what_has_no_password() {
        assert_eq!(
            mask_credentials("falkordb://u:pw@h:1/g"),
            "falkordb://u:***@h:1/g"
        );
        assert_eq!(
            mask_credentials("falkordb://:pw@h/g"),
            "falkordb://:***@h/g"
        );
        assert_eq!(mask_credentials("falkordb://u@h:1/g"), "falkordb://u@h:1/g");
        assert_eq!(mask_credentials(":pw@://"), ":***@://");
        assert_eq!(
            mask_credentials("falkordb://u:p@ss/w@h:1/g"),
            "falkordb://u:***@h:1/g"
        );
        assert_eq!(mask_credentials("no scheme"), "no scheme");
        assert_eq!(mask_credentials("u:pw@h:1"), "u:***@h:1");
    }
}
