//! Optional OpenTelemetry export of Strata's spans (OTLP over HTTP, protobuf), off unless
//! `[telemetry] otlp_endpoint` or `STRATA_OTLP_ENDPOINT` names a collector.
//!
//! Only spans leave the process, never events: the `recall` span's fields are counts and
//! times (see [`crate::recall::RecallEngine::recall_explained`]), while an event's message
//! may name what it is about. Spans go out in batches from the exporter's own thread, so a
//! slow or absent collector never holds up a recall; what cannot be sent is dropped.

use std::time::Duration;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, WithExportConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_subscriber::Layer;
use tracing_subscriber::filter::filter_fn;
use tracing_subscriber::registry::LookupSpan;

/// The path a collector takes traces on, after its base address (OTLP/HTTP).
const TRACES_PATH: &str = "/v1/traces";

/// How long one export may take before its spans are dropped.
const EXPORT_TIMEOUT: Duration = Duration::from_secs(5);

#[derive(Debug, thiserror::Error)]
pub enum OtlpError {
    #[error("OTLP endpoint {endpoint:?}: expected an http:// or https:// address")]
    Scheme { endpoint: String },
    #[error("OTLP endpoint {endpoint:?}: {message}")]
    Exporter { endpoint: String, message: String },
}

/// The exporter behind the layer: dropping it sends what is still queued and stops it.
pub struct OtlpExport {
    provider: SdkTracerProvider,
}

impl Drop for OtlpExport {
    fn drop(&mut self) {
        // A collector that is gone by now loses the last batch; exit goes on.
        let _ = self.provider.shutdown();
    }
}

impl std::fmt::Debug for OtlpExport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OtlpExport")
    }
}

/// The traces URL for a collector's base address (`http://host:4318`), as the OTLP
/// specification builds it from `OTEL_EXPORTER_OTLP_ENDPOINT`; a URL that already ends in
/// `/v1/traces` is taken as it is.
pub fn traces_url(endpoint: &str) -> Result<String, OtlpError> {
    let endpoint = endpoint.trim();
    if !(endpoint.starts_with("http://") || endpoint.starts_with("https://")) {
        return Err(OtlpError::Scheme {
            endpoint: endpoint.to_string(),
        });
    }
    if endpoint.trim_end_matches('/').ends_with(TRACES_PATH) {
        return Ok(endpoint.trim_end_matches('/').to_string());
    }
    Ok(format!("{}{TRACES_PATH}", endpoint.trim_end_matches('/')))
}

/// A layer that exports Strata's spans to the collector at `endpoint`, and the export to keep
/// alive for as long as spans should go out.
pub fn layer<S>(endpoint: &str) -> Result<(impl Layer<S> + Send + Sync, OtlpExport), OtlpError>
where
    S: tracing::Subscriber + for<'span> LookupSpan<'span> + Send + Sync,
{
    let url = traces_url(endpoint)?;
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpBinary)
        .with_endpoint(url.clone())
        .with_timeout(EXPORT_TIMEOUT)
        .build()
        .map_err(|e| OtlpError::Exporter {
            endpoint: url,
            message: e.to_string(),
        })?;
    let provider = SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(
            Resource::builder()
                .with_service_name("strata")
                .with_attribute(opentelemetry::KeyValue::new(
                    "service.version",
                    env!("CARGO_PKG_VERSION"),
                ))
                .build(),
        )
        .build();
    let tracer = provider.tracer("strata");
    let layer = tracing_opentelemetry::layer()
        .with_tracer(tracer)
        .with_location(false)
        .with_threads(false)
        .with_filter(filter_fn(|meta| {
            meta.is_span() && meta.target().starts_with("strata")
        }));
    Ok((layer, OtlpExport { provider }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_base_address_gets_the_traces_path_once() {
        assert_eq!(
            traces_url("http://127.0.0.1:4318").unwrap(),
            "http://127.0.0.1:4318/v1/traces"
        );
        assert_eq!(
            traces_url("https://otel.example:4318/").unwrap(),
            "https://otel.example:4318/v1/traces"
        );
        assert_eq!(
            traces_url("http://c:4318/v1/traces").unwrap(),
            "http://c:4318/v1/traces"
        );
        assert!(matches!(
            traces_url("127.0.0.1:4317"),
            Err(OtlpError::Scheme { .. })
        ));
    }
}
