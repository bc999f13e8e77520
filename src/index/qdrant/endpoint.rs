//! `qdrant://HOST[:PORT]`: where the gRPC API of a Qdrant server listens.

pub const DEFAULT_PORT: u16 = 6334;
pub(super) const SCHEME: &str = "qdrant://";

#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Endpoint {
    /// A name, an IPv4 address or a bracketed IPv6 address.
    pub host: String,
    pub port: u16,
}

impl Endpoint {
    pub fn authority(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }

    pub fn http(&self) -> String {
        format!("http://{}", self.authority())
    }
}

pub(super) fn parse_url(url: &str) -> Result<Endpoint, String> {
    let bad = |why: &str| {
        format!(
            "expected a URL like qdrant://HOST:PORT (the gRPC port, {DEFAULT_PORT} if left \
             out), got {url:?}: {why}"
        )
    };
    let rest = url
        .strip_prefix(SCHEME)
        .ok_or_else(|| bad("it does not start with qdrant://"))?;
    let rest = rest.strip_suffix('/').unwrap_or(rest);
    if let Some(c) = rest
        .chars()
        .find(|c| matches!(c, '/' | '?' | '#' | '@') || c.is_whitespace())
    {
        return Err(bad(&format!(
            "{c:?} is not allowed: no path, query, credentials or spaces"
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
    }

    #[test]
    fn bad_urls_say_what_was_expected() {
        for (url, why) in [
            ("http://localhost:6334", "does not start with qdrant://"),
            ("localhost:6334", "does not start with qdrant://"),
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
            let e = parse_url(url).unwrap_err();
            assert!(e.contains("expected a URL like qdrant://HOST:PORT"), "{e}");
            assert!(e.contains(&format!("{url:?}")), "{e}");
            assert!(e.contains(why), "{url}: {e}");
        }
    }
}
