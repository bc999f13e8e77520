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
    sentinel: Option<tokio::sync::Mutex<SentinelClient>>,
    config: ConnectionManagerConfig,
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
        let client = sentinel.async_get_client().await?;
        Ok(Primary {
            connection: RwLock::new(ConnectionManager::new_lazy_with_config(
                client,
                config.clone(),
            )?),
            sentinel: Some(tokio::sync::Mutex::new(sentinel)),
            config,
        })
    }

    pub(super) fn is_sentinel(&self) -> bool {
        self.sentinel.is_some()
    }

    pub(super) fn connection(&self) -> Option<ConnectionManager> {
        self.connection.read().ok().map(|c| c.clone())
    }

    /// Asks the Sentinels where the primary is now and connects there. Until Sentinel has
    /// promoted a replica it names the old primary, and requests keep failing as before.
    pub(super) async fn follow(&self) -> redis::RedisResult<()> {
        let Some(sentinel) = &self.sentinel else {
            return Ok(());
        };
        let client = sentinel.lock().await.async_get_client().await?;
        let next = ConnectionManager::new_lazy_with_config(client, self.config.clone())?;
        if let Ok(mut connection) = self.connection.write() {
            *connection = next;
        }
        Ok(())
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
