use std::fmt;
use std::str::FromStr;

/// `falkordb://HOST:PORT/GRAPH`: where the graph lives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FalkorUrl {
    pub host: String,
    pub port: u16,
    pub graph: String,
}

const DEFAULT_PORT: u16 = 6379;
const DEFAULT_GRAPH: &str = "incident_memory";

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("expected a store URL like falkordb://HOST:PORT/GRAPH, got {given:?}: {why}")]
pub struct FalkorUrlError {
    given: String,
    why: &'static str,
}

impl FromStr for FalkorUrl {
    type Err = FalkorUrlError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let fail = |why| FalkorUrlError {
            given: s.to_string(),
            why,
        };
        let rest = s
            .strip_prefix("falkordb://")
            .ok_or_else(|| fail("the scheme must be falkordb://"))?;
        let (authority, graph) = rest.split_once('/').unwrap_or((rest, DEFAULT_GRAPH));
        let graph = if graph.is_empty() {
            DEFAULT_GRAPH
        } else {
            graph
        };
        if graph
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || c == '/')
        {
            return Err(fail(
                "the graph name may not contain spaces, '/' or control characters",
            ));
        }
        let (host, port) = match authority.rsplit_once(':') {
            Some((h, p)) => (
                h,
                p.parse()
                    .map_err(|_| fail("the port must be a number 1-65535"))?,
            ),
            None => (authority, DEFAULT_PORT),
        };
        if host.is_empty() {
            return Err(fail("the host is missing"));
        }
        if port == 0 {
            return Err(fail("the port must be a number 1-65535"));
        }
        Ok(FalkorUrl {
            host: host.to_string(),
            port,
            graph: graph.to_string(),
        })
    }
}

impl FalkorUrl {
    pub fn address(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }

    pub(super) fn redis_url(&self) -> String {
        format!("redis://{}:{}/", self.host, self.port)
    }

    /// A directory name for the indexes derived from this graph.
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
        write!(f, "falkordb://{}:{}/{}", self.host, self.port, self.graph)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_host_port_and_graph() {
        let u: FalkorUrl = "falkordb://127.0.0.1:6390/mem".parse().unwrap();
        assert_eq!(
            (u.host.as_str(), u.port, u.graph.as_str()),
            ("127.0.0.1", 6390, "mem")
        );
        let d: FalkorUrl = "falkordb://db".parse().unwrap();
        assert_eq!((d.port, d.graph.as_str()), (6379, "incident_memory"));
        assert_eq!(u.to_string(), "falkordb://127.0.0.1:6390/mem");
    }

    #[test]
    fn bad_urls_say_what_was_expected() {
        for bad in [
            "redis://x:1/g",
            "falkordb://:1/g",
            "falkordb://x:y/g",
            "falkordb://x:0/g",
            "falkordb://x:1/a b",
        ] {
            let e = bad.parse::<FalkorUrl>().unwrap_err().to_string();
            assert!(e.contains("falkordb://HOST:PORT/GRAPH"), "{e}");
        }
    }
}
