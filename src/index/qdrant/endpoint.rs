//! `qdrant://HOST[:PORT]`, or `qdrants://…` over TLS: where the gRPC API of a Qdrant server
//! listens. The API key comes from [`API_KEY_ENV`], never from the URL, so that a location
//! can be shown anywhere.

pub const DEFAULT_PORT: u16 = 6334;
pub(super) const SCHEME: &str = "qdrant://";
pub(super) const TLS_SCHEME: &str = "qdrants://";
/// The API key sent to the server, when it wants one.
pub const API_KEY_ENV: &str = "STRATA_QDRANT_API_KEY";

#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Endpoint {
    /// A name, an IPv4 address or a bracketed IPv6 address.
    pub host: String,
    pub port: u16,
    pub tls: bool,
}

impl Endpoint {
    pub fn authority(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }

    /// The URL the client connects to.
    pub fn http(&self) -> String {
        let scheme = if self.tls { "https" } else { "http" };
        format!("{scheme}://{}", self.authority())
    }

    /// The location as the user wrote it, for messages.
    pub fn shown(&self) -> String {
        let scheme = if self.tls { TLS_SCHEME } else { SCHEME };
        format!("{scheme}{}", self.authority())
    }
}

/// A Qdrant location that does not parse: what was given (credentials masked) and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "expected a URL like qdrant://HOST:PORT (the gRPC port, {DEFAULT_PORT} if left out; \
     qdrants:// over TLS), got {shown:?}: {why}"
)]
pub struct EndpointError {
    shown: String,
    why: String,
}

pub(super) fn parse_url(url: &str) -> Result<Endpoint, EndpointError> {
    let shown = crate::store::falkordb::mask_credentials(url);
    let bad = |why: &str| EndpointError {
        shown: shown.clone(),
        why: why.to_string(),
    };
    let (tls, rest) = match url.strip_prefix(TLS_SCHEME) {
        Some(rest) => (true, rest),
        None => (
            false,
            url.strip_prefix(SCHEME)
                .ok_or_else(|| bad("it does not start with qdrant:// or qdrants://"))?,
        ),
    };
    let rest = rest.strip_suffix('/').unwrap_or(rest);
    if let Some(c) = rest
        .chars()
        .find(|c| matches!(c, '/' | '?' | '#' | '@') || c.is_whitespace())
    {
        return Err(bad(&format!(
            "{c:?} is not allowed: no path, query, credentials or spaces (the API key goes in \
             {API_KEY_ENV})"
        )));
    }
    let (host, port) = if rest.starts_with('[') {
        let end = rest
            .find(']')
            .ok_or_else(|| bad("an IPv6 address needs its closing ']'"))?;
        let (host, after) = rest.split_at(end + 1);
        match after {
            "" => (host, None),
            _ => match after.strip_prefix(':') {
                Some(port) => (host, Some(port)),
                None => return Err(bad("only :PORT may follow the IPv6 address")),
            },
        }
    } else {
        match rest.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (rest, None),
        }
    };
    if host.is_empty() || host == "[]" {
        return Err(bad("the host is missing"));
    }
    let port = match port {
        None => DEFAULT_PORT,
        Some(p) => match p.parse::<u16>() {
            Ok(0) | Err(_) => return Err(bad(&format!("{p:?} is not a port (1-65535)"))),
            Ok(port) => port,
        },
    };
    Ok(Endpoint {
        host: host.to_string(),
        port,
        tls,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_map_to_grpc_endpoints() {
        let ok = |url: &str| parse_url(url).unwrap().http();
        assert_eq!(ok("qdrant://localhost:6334"), "http://localhost:6334");
        assert_eq!(
            ok("qdrant://qdrant.internal"),
            "http://qdrant.internal:6334"
        );
        assert_eq!(ok("qdrant://10.0.0.7:7000/"), "http://10.0.0.7:7000");
        assert_eq!(ok("qdrant://[::1]:6400"), "http://[::1]:6400");
        assert_eq!(ok("qdrant://[::1]"), "http://[::1]:6334");
        assert_eq!(
            ok("qdrants://vectors.internal"),
            "https://vectors.internal:6334"
        );
        assert_eq!(parse_url("qdrants://h:7").unwrap().shown(), "qdrants://h:7");
    }

    #[test]
    fn bad_urls_say_what_was_expected() {
        for (url, why) in [
            ("http://localhost:6334", "does not start with qdrant://"),
            ("localhost:6334", "does not start with qdrant://"),
            ("qdrants://", "host is missing"),
            ("qdrant://", "host is missing"),
            ("qdrant://:6334", "host is missing"),
            ("qdrant://host:", "\"\" is not a port"),
            ("qdrant://host:abc", "\"abc\" is not a port"),
            ("qdrant://host:0", "\"0\" is not a port"),
            ("qdrant://host:70000", "\"70000\" is not a port"),
            ("qdrant://host:1:2", "\"1:2\" is not a port"),
            ("qdrant://host:6334/collections", "no path"),
            ("qdrant://user@host", "credentials"),
            ("qdrant://[::1", "closing ']'"),
            ("qdrant://[::1]x", "only :PORT"),
        ] {
            let e = parse_url(url).unwrap_err().to_string();
            assert!(e.contains("expected a URL like qdrant://HOST:PORT"), "{e}");
            assert!(e.contains(&format!("{url:?}")), "{e}");
            assert!(e.contains(why), "{url}: {e}");
        }
        let e = parse_url("qdrant://key:s3cret@host")
            .unwrap_err()
            .to_string();
        assert!(!e.contains("s3cret") && e.contains(API_KEY_ENV), "{e}");
    }
}
