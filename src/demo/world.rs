//! Static catalogue of the demo stack and of the recurring fault causes.
//!
//! Templates use `{placeholder}` slots that the generator fills per occurrence:
//! `{host}`, `{users}`, `{mins}`, `{n}`, `{pct}`, `{patch}`, `{pool}`, `{pool2}`,
//! `{gb}`, `{dim}`, `{dim2}`, `{skew}`, `{hours}`, `{change}` and `{key}`.

/// The self-hosted services the agent operates.
#[derive(Clone, Copy)]
pub(crate) enum Service {
    /// Identity provider and SSO portal in front of every web UI.
    Authelia,
    /// LDAP directory backing authelia's user database.
    Lldap,
    /// Reverse proxy terminating TLS for all public routes.
    Caddy,
    /// Primary relational datastore.
    Postgres,
    /// Connection pooler in front of postgres.
    Pgbouncer,
    /// Graph store holding the incident knowledge graph.
    Falkordb,
    /// Vector store for semantic recall.
    Qdrant,
    /// text-embeddings-inference server producing the vectors stored in qdrant.
    TeiEmbed,
    /// S3-compatible object storage for backups and attachments.
    Minio,
    /// Message bus with JetStream persistence.
    Nats,
    /// Session cache used by authelia.
    Redis,
    /// Dashboards, logged into through authelia OIDC.
    Grafana,
    /// GitOps deploy controller.
    Argocd,
}

impl Service {
    pub(crate) const fn name(self) -> &'static str {
        match self {
            Self::Authelia => "authelia",
            Self::Lldap => "lldap",
            Self::Caddy => "caddy",
            Self::Postgres => "postgres",
            Self::Pgbouncer => "pgbouncer",
            Self::Falkordb => "falkordb",
            Self::Qdrant => "qdrant",
            Self::TeiEmbed => "tei-embed",
            Self::Minio => "minio",
            Self::Nats => "nats",
            Self::Redis => "redis",
            Self::Grafana => "grafana",
            Self::Argocd => "argocd",
        }
    }
}

pub(crate) const HOSTS: [&str; 3] = ["node-a", "node-b", "node-c"];

#[derive(Clone, Copy)]
pub(crate) enum FaultClass {
    Auth,
    Data,
    Deploy,
}

impl FaultClass {
    pub(crate) const fn as_str(self) -> &'static str {
        match self {
            Self::Auth => "auth",
            Self::Data => "data",
            Self::Deploy => "deploy",
        }
    }
}

/// The kind of change entity that resolves an occurrence.
#[derive(Clone, Copy)]
pub(crate) enum ChangeKind {
    /// `change:cfg-NNNN`
    Config,
    /// `change:pr-NNNN`
    PullRequest,
    /// `change:rollback-<service>-NNN`
    Rollback,
}

pub(crate) struct Cause {
    pub(crate) id: &'static str,
    pub(crate) class: FaultClass,
    /// Relative frequency on top of the guaranteed minimum occurrences.
    pub(crate) weight: u32,
    pub(crate) services: &'static [Service],
    /// The fault lives on one node, so every occurrence mentions a host.
    pub(crate) host_bound: bool,
    pub(crate) config_key: Option<&'static str>,
    pub(crate) change: ChangeKind,
    /// Each occurrence's fix replaces the previous occurrence's change.
    pub(crate) chained: bool,
    pub(crate) summaries: &'static [&'static str],
    pub(crate) resolutions: &'static [&'static str],
}

pub(crate) static CAUSES: &[Cause] = &[
    // ---- auth / login -------------------------------------------------------------
    Cause {
        id: "auth-session-secret-rotated",
        class: FaultClass::Auth,
        weight: 6,
        services: &[Service::Authelia, Service::Redis],
        host_bound: false,
        config_key: Some("authelia.session.secret"),
        change: ChangeKind::Config,
        chained: true,
        summaries: &[
            "Login loop on the SSO portal: the authelia session secret was rotated by the secrets job but authelia was never restarted, so every session cookie failed validation and users bounced back to the login page. {users} users affected for {mins} minutes.",
            "Users logged out right after entering their TOTP code; authelia logs showed 'unable to decrypt session' followed by 401 Unauthorized on /api/verify. The session secret had been rotated in the vault without a rolling restart of authelia on {host}.",
            "SSO redirect loop for about {mins} min after the nightly secret rotation; authelia still held the old session secret in memory and rejected cookies issued by the other replica ({users} users, 401 Unauthorized from caddy forward_auth).",
        ],
        resolutions: &[
            "Restarted authelia on {host} so it loaded the rotated session secret, flushed stale sessions from redis and shipped {change} so the rotation job triggers a rolling restart.",
            "Rolled both authelia replicas, purged the session keyspace in redis ({n} keys) and applied {change} tying {key} rotation to a restart hook.",
            "Restarted authelia to reload the secret and confirmed logins end to end; {change} moves the session secret to a file mount watched by the pod.",
        ],
    },
    Cause {
        id: "auth-ldap-bind-password-expired",
        class: FaultClass::Auth,
        weight: 5,
        services: &[Service::Authelia, Service::Lldap],
        host_bound: false,
        config_key: Some("authelia.authentication_backend.ldap.password"),
        change: ChangeKind::Config,
        chained: true,
        summaries: &[
            "Nobody could log in: authelia returned 'LDAP Result Code 49 Invalid Credentials' for the service bind user because its lldap password expired under the 90-day policy. {users} login attempts failed over {mins} minutes.",
            "SSO logins failing with 'failed to bind to LDAP: Invalid Credentials' in authelia; the uid=authelia bind account in lldap had its password expire. Outage lasted {mins} min.",
            "Authentication backend down: authelia could not bind to lldap (LDAP Result Code 49) after the service account password aged out, so {users} users got 'Incorrect username or password'.",
        ],
        resolutions: &[
            "Reset the bind account password in lldap, updated {key} in the authelia secrets via {change} and restarted authelia; logins recovered immediately.",
            "Issued a new password for the authelia bind user, marked it non-expiring in lldap and rolled {change}.",
            "Rotated the LDAP bind credential, pushed it with {change} and added an alert 14 days before any service-account password expires.",
        ],
    },
    Cause {
        id: "auth-totp-clock-skew",
        class: FaultClass::Auth,
        weight: 3,
        services: &[Service::Authelia],
        host_bound: true,
        config_key: Some("chrony.server"),
        change: ChangeKind::Config,
        chained: false,
        summaries: &[
            "TOTP codes rejected for everyone routed to authelia on {host}: the node clock drifted {skew}s after chronyd stopped syncing, so one-time passwords fell outside the validity window.",
            "Second factor failing intermittently ('The one-time password could not be validated'); only requests served by authelia on {host} failed. NTP offset on {host} was +{skew}s.",
            "2FA broken for {users} users for {mins} min; clock skew of {skew} seconds on {host} made authelia reject valid TOTP codes.",
        ],
        resolutions: &[
            "Restarted chronyd on {host}, stepped the clock back into sync and applied {change} pointing {key} at the internal NTP pool.",
            "Forced a clock step with chronyc makestep on {host}; {change} adds a node alert when the NTP offset exceeds 5s.",
        ],
    },
    Cause {
        id: "auth-oidc-redirect-mismatch",
        class: FaultClass::Auth,
        weight: 3,
        services: &[Service::Authelia, Service::Caddy, Service::Grafana],
        host_bound: false,
        config_key: Some("identity_providers.oidc.clients.redirect_uris"),
        change: ChangeKind::PullRequest,
        chained: false,
        summaries: &[
            "Grafana SSO broken after a caddy route change: authelia answered 'invalid_request: The redirect_uri does not match any of the OAuth 2.0 Client's pre-registered redirect_uris' and users were stuck on the consent page.",
            "OIDC login to grafana failing with a redirect_uri mismatch since caddy started serving it under a new path; {users} users unable to log in for {mins} min.",
            "After grafana moved behind a new caddy host rule the OIDC callback URL changed and authelia rejected the authorization request (redirect_uri mismatch, HTTP 400).",
        ],
        resolutions: &[
            "Added the new callback URL to {key} for the grafana client in authelia via {change} and reloaded authelia.",
            "Merged {change} aligning the caddy route with the registered redirect URI; grafana OIDC login confirmed working.",
        ],
    },
    Cause {
        id: "auth-redis-session-eviction",
        class: FaultClass::Auth,
        weight: 4,
        services: &[Service::Redis, Service::Authelia],
        host_bound: false,
        config_key: Some("redis.maxmemory"),
        change: ChangeKind::Config,
        chained: false,
        summaries: &[
            "Users randomly logged out of SSO every few minutes; redis hit maxmemory ({pct}% of the limit) and the allkeys-lru policy evicted authelia session keys. {n} sessions lost.",
            "Session store evicting keys: redis evicted_keys jumped to {n} and authelia sessions vanished, forcing {users} users to log in again repeatedly for {mins} minutes.",
            "Intermittent 401 Unauthorized right after a successful login; authelia sessions were missing from redis because memory sat at {pct}% and eviction kicked in.",
        ],
        resolutions: &[
            "Raised {key} and switched the eviction policy to volatile-lru via {change}; sessions survive again and evicted_keys is flat.",
            "Increased the redis memory limit, set TTLs on cache keys that had none and applied {change}.",
            "Applied {change} doubling redis maxmemory and added an alert on evicted_keys > 0.",
        ],
    },
    // ---- data / datastore ---------------------------------------------------------
    Cause {
        id: "data-pgbouncer-pool-exhausted",
        class: FaultClass::Data,
        weight: 6,
        services: &[Service::Postgres, Service::Pgbouncer],
        host_bound: false,
        config_key: Some("pgbouncer.default_pool_size"),
        change: ChangeKind::Config,
        chained: true,
        summaries: &[
            "API requests timing out with 'FATAL: too many connections for role app' from postgres; the pgbouncer pool (default_pool_size {pool}) was exhausted and {n} clients queued in cl_waiting.",
            "Connection exhaustion: pgbouncer pool saturated (cl_waiting {n}) and queries failed with 'context deadline exceeded' for {mins} minutes.",
            "Postgres rejected new connections ('FATAL: sorry, too many clients already') after a worker scale-up; pgbouncer pool size {pool} was too small for the new replica count.",
        ],
        resolutions: &[
            "Raised {key} from {pool} to {pool2} and lowered server_idle_timeout via {change}; waiting clients drained within a minute.",
            "Applied {change}: pgbouncer pool size {pool2}, max_client_conn raised, idle-in-transaction sessions on postgres terminated.",
            "Reloaded pgbouncer with default_pool_size={pool2} ({change}) and capped worker concurrency.",
        ],
    },
    Cause {
        id: "data-postgres-wal-disk-full",
        class: FaultClass::Data,
        weight: 4,
        services: &[Service::Postgres],
        host_bound: true,
        config_key: Some("postgres.max_wal_size"),
        change: ChangeKind::Config,
        chained: false,
        summaries: &[
            "Postgres on {host} stopped taking writes: 'PANIC: could not write to file pg_wal/xlogtemp: No space left on device'; the {gb} GB WAL volume was at 100%.",
            "Disk full on the postgres WAL volume on {host} after a stuck replication slot retained WAL; writes failed for {mins} min.",
            "Writes to postgres failing with 'No space left on device'; pg_wal grew to {gb} GB on {host} because archive_command kept failing.",
        ],
        resolutions: &[
            "Dropped the inactive replication slot, let checkpoints recycle WAL, grew the volume and applied {change} lowering {key}.",
            "Fixed the archive_command credentials, cleared archived WAL and expanded the volume on {host} by {gb} GB ({change}).",
        ],
    },
    Cause {
        id: "data-qdrant-dimension-mismatch",
        class: FaultClass::Data,
        weight: 4,
        services: &[Service::Qdrant, Service::TeiEmbed],
        host_bound: false,
        config_key: Some("qdrant.collection.vector_size"),
        change: ChangeKind::PullRequest,
        chained: false,
        summaries: &[
            "Semantic recall erroring: qdrant rejected upserts with 'Wrong input: Vector dimension error: expected dim: {dim}, got {dim2}' after the embedding model on tei-embed was changed.",
            "Vector search broken after an embedding model swap; tei-embed now emits {dim2}-dim vectors but the qdrant collection is configured for {dim}. {n} upserts failed.",
            "Indexing pipeline failing with 400 Bad Request from qdrant (vector dimension error, expected {dim}, got {dim2}) since the tei-embed model upgrade.",
        ],
        resolutions: &[
            "Created a new collection with vector size {dim2}, re-embedded {n} documents and switched the alias ({change}).",
            "Pinned tei-embed back to the previous model until the migration is done; {change} makes {key} follow the model config.",
        ],
    },
    Cause {
        id: "data-falkordb-oom-bfs",
        class: FaultClass::Data,
        weight: 3,
        services: &[Service::Falkordb],
        host_bound: false,
        config_key: Some("falkordb.query_mem_capacity"),
        change: ChangeKind::Config,
        chained: false,
        summaries: &[
            "FalkorDB killed by the OOM killer on {host} while running an unbounded BFS over the incident graph; graph queries failed with 'Connection reset by peer' for {mins} min.",
            "Graph store out of memory: a variable-length path query expanded {n}k nodes, falkordb hit its {gb} GB limit and restarted.",
            "falkordb returned 'Query's mem consumption exceeded capacity' and then crashed with OOMKilled; recall requests that traverse the graph timed out.",
        ],
        resolutions: &[
            "Set {key} to cap per-query memory and bounded the traversal depth in the recall query ({change}).",
            "Restarted falkordb, added a hop limit to the BFS query and shipped {change} with a query timeout and memory caps.",
        ],
    },
    Cause {
        id: "data-minio-bucket-policy-reset",
        class: FaultClass::Data,
        weight: 3,
        services: &[Service::Minio],
        host_bound: false,
        config_key: Some("minio.bucket.policy"),
        change: ChangeKind::Config,
        chained: false,
        summaries: &[
            "Attachment downloads failing with 403 AccessDenied from minio; the bucket policy was reset to private by the minio upgrade.",
            "Backups and attachments unreachable: minio returned 'Access Denied.' for anonymous reads because the bucket policy was lost when the bucket was re-created.",
            "{n} failed GETs against minio in {mins} min (403 AccessDenied); the attachments bucket policy was missing after an mc mirror restore.",
        ],
        resolutions: &[
            "Re-applied the bucket policy with mc anonymous set download and committed it as code in {change}.",
            "Restored {key} from git and added a drift check ({change}).",
        ],
    },
    Cause {
        id: "data-nats-jetstream-limits",
        class: FaultClass::Data,
        weight: 3,
        services: &[Service::Nats],
        host_bound: false,
        config_key: Some("nats.jetstream.max_bytes"),
        change: ChangeKind::Config,
        chained: false,
        summaries: &[
            "Event ingestion stalled: nats JetStream rejected publishes with 'nats: maximum bytes exceeded' on the INCIDENTS stream; {n} messages dropped.",
            "Publishers hitting 'context deadline exceeded' while waiting for JetStream acks; the stream reached max_msgs with discard policy new.",
            "JetStream stream limits reached ({pct}% of max_bytes), consumer lag grew for {mins} min and downstream workers sat idle.",
        ],
        resolutions: &[
            "Raised {key}, switched the discard policy to old and added an age limit via {change}.",
            "Purged acknowledged messages, grew the stream storage by {gb} GB and applied {change}.",
        ],
    },
    // ---- deploy / config ----------------------------------------------------------
    Cause {
        id: "deploy-argocd-wrong-env-values",
        class: FaultClass::Deploy,
        weight: 4,
        services: &[Service::Argocd, Service::Postgres],
        host_bound: false,
        config_key: Some("argocd.app.valueFiles"),
        change: ChangeKind::Rollback,
        chained: false,
        summaries: &[
            "ArgoCD sync applied values-staging.yaml to production: workers started with the staging DATABASE_URL and wrote to the wrong postgres for {mins} minutes.",
            "Auto-sync in argocd picked up a valueFiles change that swapped env values; prod pods came up with staging credentials and failed with 'password authentication failed for user app'.",
            "Wrong environment values deployed by argocd; {n} requests were served with the staging config before the alert fired.",
        ],
        resolutions: &[
            "Rolled the argocd application back to the previous revision ({change}), disabled auto-sync and fixed {key}.",
            "Reverted with {change}, re-synced with the prod values file and added a guard that fails the sync when env does not match the cluster label.",
        ],
    },
    Cause {
        id: "deploy-caddy-tls-renewal-failed",
        class: FaultClass::Deploy,
        weight: 5,
        services: &[Service::Caddy],
        host_bound: false,
        config_key: Some("caddy.tls.dns_provider"),
        change: ChangeKind::Config,
        chained: true,
        summaries: &[
            "All public routes served an expired certificate: clients failed with 'x509: certificate has expired or is not yet valid'; caddy ACME renewal had been failing for {hours} hours.",
            "TLS certificate renewal failure in caddy: the DNS-01 challenge errored because the DNS API token was revoked and the cert expired; {users} users saw browser warnings for {mins} min.",
            "Caddy could not renew the wildcard certificate (acme: error presenting token: HTTP 403); webhooks from external services failed with x509: certificate has expired.",
        ],
        resolutions: &[
            "Issued a new DNS provider API token, updated {key} via {change} and forced renewal with a caddy reload.",
            "Applied {change} adding a ZeroSSL issuer fallback and renewed the certificate manually.",
            "Rotated the DNS API credential ({change}), reloaded caddy and added a certificate expiry alert at 14 days.",
        ],
    },
    Cause {
        id: "deploy-tei-pooling-default-changed",
        class: FaultClass::Deploy,
        weight: 4,
        services: &[Service::TeiEmbed, Service::Qdrant],
        host_bound: false,
        config_key: Some("tei.pooling"),
        change: ChangeKind::PullRequest,
        chained: true,
        summaries: &[
            "Recall quality collapsed after the tei-embed image upgrade to 1.{patch}: the new release changed the default pooling from mean to cls, so fresh vectors no longer matched those stored in qdrant.",
            "Similarity scores dropped from ~0.8 to ~0.3 after a text-embeddings-inference upgrade; tei-embed default pooling changed and queries returned unrelated incidents.",
            "The tei-embed upgrade silently changed pooling; {n} embeddings were written with incompatible pooling and qdrant nearest-neighbour results were garbage for {mins} min.",
        ],
        resolutions: &[
            "Pinned --pooling mean in the tei-embed args ({change}) and re-embedded the {n} affected points.",
            "Merged {change} setting {key} explicitly and pinning the image digest; re-indexed qdrant.",
        ],
    },
    Cause {
        id: "deploy-feature-flag-bad-rollout",
        class: FaultClass::Deploy,
        weight: 3,
        services: &[Service::Argocd, Service::Falkordb],
        host_bound: false,
        config_key: Some("flags.graph_recall_v2"),
        change: ChangeKind::Rollback,
        chained: false,
        summaries: &[
            "Enabling the graph_recall_v2 feature flag for 100% of traffic sent unbounded queries to falkordb; p99 latency rose to {n} ms and requests failed with context deadline exceeded.",
            "Bad feature flag rollout: the flag was flipped globally instead of a {pct}% canary and recall requests errored for {mins} min.",
            "After the flag rollout via argocd, recall endpoints returned 500s ('graph query timed out'); {users} agent sessions affected.",
        ],
        resolutions: &[
            "Turned the flag off ({change}) and re-rolled it as a 5% canary after fixing the query.",
            "Reverted {key} with {change} and added a rollout percentage guard.",
        ],
    },
    Cause {
        id: "deploy-helm-limits-too-low",
        class: FaultClass::Deploy,
        weight: 3,
        services: &[Service::Argocd, Service::Grafana],
        host_bound: false,
        config_key: Some("resources.limits.memory"),
        change: ChangeKind::PullRequest,
        chained: false,
        summaries: &[
            "grafana pods in CrashLoopBackOff with OOMKilled after the helm chart bump lowered resources.limits.memory to 256Mi; dashboards down for {mins} min.",
            "Helm chart upgrade shipped resource limits that were too low: grafana restarted {n} times (OOMKilled) on {host}.",
            "Dashboards intermittently returning 502 from caddy because grafana kept getting OOMKilled; the new chart's default limits were too low.",
        ],
        resolutions: &[
            "Raised {key} to 1Gi in the values override ({change}) and synced via argocd.",
            "Merged {change} restoring the previous limits and opened a follow-up to review VPA recommendations.",
        ],
    },
];
