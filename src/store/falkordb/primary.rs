//! The connection to the graph's server, and, through Redis Sentinel, to whichever server is
//! the primary now: after a failover the next request that finds the old primary gone (or
//! demoted to a read-only replica) asks the Sentinels again and reconnects. With Sentinel,
//! a write is acknowledged only once a replica has it (`WAIT`), so a failover that promotes
//! that replica keeps every acknowledged batch.

use std::sync::RwLock;
use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::sentinel::{SentinelClient, SentinelClientBuilder, SentinelServerType};

use super::url::FalkorUrl;

/// How long a write waits for a replica to confirm it before it is refused as unacknowledged.
pub(super) const REPLICA_WAIT: Duration = Duration::from_secs(2);

/// The current connection, and for Sentinel, how to find the next one.
pub(super) struct Primary {
    connection: RwLock<ConnectionManager>,
    sentinel: Option<Sentinels>,
    config: ConnectionManagerConfig,
}

/// How to find the primary again after a failover.
struct Sentinels {
    client: tokio::sync::Mutex<SentinelClient>,
    /// The name they monitor the primary by.
    name: String,
    /// The server they named last, `HOST:PORT`.
    named: RwLock<String>,
}

impl Primary {
    /// A lazy connection to `client`'s server.
    pub(super) fn direct(
        client: redis::Client,
        config: ConnectionManagerConfig,
    ) -> redis::RedisResult<Primary> {
        Ok(Primary {
            connection: RwLock::new(ConnectionManager::new_lazy_with_config(
                client,
                config.clone(),
            )?),
            sentinel: None,
            config,
        })
    }

    /// Asks the Sentinels of `url` for the primary now (inside the client runtime).
    pub(super) async fn through_sentinel(
        url: &FalkorUrl,
        config: ConnectionManagerConfig,
    ) -> redis::RedisResult<Primary> {
        let Some(set) = &url.sentinel else {
            return Err(redis::RedisError::from((
                redis::ErrorKind::InvalidClientConfig,
                "not a Sentinel URL",
            )));
        };
        let mut builder = SentinelClientBuilder::new(
            set.connection_addrs(),
            &set.primary,
            SentinelServerType::Master,
        )?;
        if let Some(user) = &url.username {
            builder = builder.set_client_to_redis_username(user);
        }
        if let Some(password) = url.password() {
            builder = builder.set_client_to_redis_password(password.expose());
        }
        let mut sentinel = builder.build()?;
        let client = match sentinel.async_get_client().await {
            Ok(client) => client,
            Err(e) => return Err(explain(&mut sentinel, &set.primary, e).await),
        };
        let address = client.get_connection_info().addr().to_string();
        Ok(Primary {
            connection: RwLock::new(ConnectionManager::new_lazy_with_config(
                client,
                config.clone(),
            )?),
            sentinel: Some(Sentinels {
                client: tokio::sync::Mutex::new(sentinel),
                name: set.primary.clone(),
                named: RwLock::new(address),
            }),
            config,
        })
    }

    pub(super) fn is_sentinel(&self) -> bool {
        self.sentinel.is_some()
    }

    /// Through Sentinel, the server requests go to now.
    pub(super) fn address(&self) -> Option<String> {
        let sentinels = self.sentinel.as_ref()?;
        sentinels.named.read().ok().map(|a| a.clone())
    }

    pub(super) fn connection(&self) -> Option<ConnectionManager> {
        self.connection.read().ok().map(|c| c.clone())
    }

    /// Asks the Sentinels where the primary is now and connects there. Until Sentinel has
    /// promoted a replica it names the old primary, and requests keep failing as before.
    pub(super) async fn follow(&self) -> redis::RedisResult<()> {
        let Some(sentinels) = &self.sentinel else {
            return Ok(());
        };
        let mut client = sentinels.client.lock().await;
        let primary = match client.async_get_client().await {
            Ok(primary) => primary,
            Err(e) => return Err(explain(&mut client, &sentinels.name, e).await),
        };
        let address = primary.get_connection_info().addr().to_string();
        let next = ConnectionManager::new_lazy_with_config(primary, self.config.clone())?;
        if let Ok(mut connection) = self.connection.write() {
            *connection = next;
        }
        if let Ok(mut named) = sentinels.named.write() {
            *named = address;
        }
        Ok(())
    }
}

/// The redis client's "master not found" when the server the Sentinels name does not answer,
/// said as it is: which address they name, and that it does not answer as a primary.
async fn explain(
    sentinel: &mut SentinelClient,
    name: &str,
    error: redis::RedisError,
) -> redis::RedisError {
    let Ok(client) = sentinel.async_get_sentinel_client().await else {
        return error;
    };
    let Ok(mut connection) = client.get_multiplexed_async_connection().await else {
        return error;
    };
    let named: redis::RedisResult<(String, u16)> = redis::cmd("SENTINEL")
        .arg("GET-MASTER-ADDR-BY-NAME")
        .arg(name)
        .query_async(&mut connection)
        .await;
    match named {
        Ok((host, port)) => redis::RedisError::from(std::io::Error::new(
            std::io::ErrorKind::ConnectionRefused,
            format!(
                "the Sentinels name {host}:{port} as the primary and it does not answer as one"
            ),
        )),
        Err(_) => error,
    }
}

/// An answer that means the server asked is no longer (or not yet) the primary: gone, or
/// demoted to a replica that refuses writes.
pub(super) fn lost_primary(e: &redis::RedisError) -> bool {
    e.is_io_error()
        || e.is_connection_dropped()
        || e.is_connection_refusal()
        || e.is_timeout()
        || matches!(e.code(), Some("READONLY" | "MASTERDOWN" | "LOADING"))
}
