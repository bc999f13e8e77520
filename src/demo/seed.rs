use super::generate;
use crate::ingest::{self, BatchBuilder, IngestError, IngestFailure};
use crate::model::Timestamp;
use crate::store::{ApplyReport, MemoryStore};

/// Writes the demo memory through the same validation as `strata ingest`, each record at its
/// own historical knowledge time. Seeding twice changes nothing.
pub fn seed(store: &dyn MemoryStore) -> Result<ApplyReport, IngestFailure> {
    let mut builder = BatchBuilder::new();
    let mut errors = Vec::new();
    for (i, r) in generate().records.into_iter().enumerate() {
        let origin = format!("demo[{i}]");
        match ingest::parse_record(&r.record) {
            Ok(draft) => {
                if let Err(e) = builder.push(
                    origin,
                    draft,
                    Timestamp::from_datetime(r.ingested_at).into(),
                ) {
                    errors.push(e);
                }
            }
            Err(fields) => errors.extend(
                fields
                    .into_iter()
                    .map(|f| IngestError::new(origin.clone(), f.field, f.message)),
            ),
        }
    }
    for (i, (repo, path, service)) in CODE_UNITS.iter().enumerate() {
        let unit = crate::learning::CodeUnit::new(repo, path, service);
        if let Err(e) = builder.push_code_unit(format!("demo-code[{i}]"), "code_units".into(), unit)
        {
            errors.push(e);
        }
    }
    if !errors.is_empty() {
        return Err(IngestFailure::Invalid(errors));
    }
    ingest::write(store, &builder.finish().batch)
}

/// The demo stack's configuration repository: the files each service is deployed from.
const CODE_UNITS: &[(&str, &str, &str)] = &[
    ("homelab/stack", "authelia/configuration.yml", "authelia"),
    ("homelab/stack", "authelia/secrets.sops.yaml", "authelia"),
    ("homelab/stack", "lldap/lldap_config.toml", "lldap"),
    ("homelab/stack", "caddy/Caddyfile", "caddy"),
    ("homelab/stack", "postgres/postgresql.conf", "postgres"),
    ("homelab/stack", "pgbouncer/pgbouncer.ini", "pgbouncer"),
    ("homelab/stack", "falkordb/falkordb.conf", "falkordb"),
    ("homelab/stack", "qdrant/config.yaml", "qdrant"),
    ("homelab/stack", "tei-embed/deployment.yaml", "tei-embed"),
    ("homelab/stack", "minio/minio.env", "minio"),
    ("homelab/stack", "nats/nats-server.conf", "nats"),
    ("homelab/stack", "redis/redis.conf", "redis"),
    ("homelab/stack", "grafana/grafana.ini", "grafana"),
    ("homelab/stack", "argocd/applications.yaml", "argocd"),
];
