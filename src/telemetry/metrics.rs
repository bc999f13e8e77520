//! The counters as Prometheus text (exposition format 0.0.4), encoded by `prometheus-client`:
//! what `strata mcp --http` serves at `/metrics` and `strata metrics` prints once.

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::registry::{Registry, Unit};

use super::counters::Snapshot;
use super::observation::Outcome;
use super::warm::WarmSignal;

/// The `Content-Type` of what [`render`] writes.
pub const CONTENT_TYPE: &str = prometheus_client::encoding::prometheus_text::CONTENT_TYPE;

/// What a scrape reports beside the counters: read from the store and the indexes then.
#[derive(Clone, Debug, Default)]
pub struct Gauges {
    /// Episodes in the store; `None` when it could not be read.
    pub episodes: Option<u64>,
    /// (index, episodes it does not hold yet).
    pub index_lag: Vec<(String, u64)>,
}

/// Everything one scrape shows.
#[derive(Clone, Debug)]
pub struct Scrape {
    pub counters: Snapshot,
    pub warm: WarmSignal,
    pub gauges: Gauges,
}

/// The scrape as Prometheus text.
pub fn render(scrape: Scrape) -> Result<String, std::fmt::Error> {
    let mut registry = Registry::default();
    registry.register_collector(Box::new(scrape));
    let mut text = String::new();
    prometheus_client::encoding::prometheus_text::encode(&mut text, &registry)?;
    Ok(text)
}

type Labels<'a> = Vec<(&'static str, &'a str)>;

impl Collector for Scrape {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let modes = &self.counters.modes;
        let mut family = encoder.encode_descriptor(
            "strata_recall",
            "Recalls per mode and lane (a leg, or fused) by outcome: hit (at least one), empty, timeout, failed",
            None,
            MetricType::Counter,
        )?;
        for m in modes {
            for lane in &m.lanes {
                let counts = [lane.with_hits, lane.empty, lane.timeouts, lane.failures];
                for (outcome, n) in Outcome::ALL.iter().zip(counts) {
                    let labels: Labels = vec![
                        ("mode", m.mode.as_str()),
                        ("leg", lane.lane.as_str()),
                        ("outcome", outcome.as_str()),
                    ];
                    ConstCounter::new(n).encode(family.encode_family(&labels)?)?;
                }
            }
        }
        let mut family = encoder.encode_descriptor(
            "strata_recall_hits",
            "Hits per mode and leg summed over recalls (fused: results, before a shadow recall withheld them)",
            None,
            MetricType::Counter,
        )?;
        for m in modes {
            for lane in &m.lanes {
                let labels: Labels = vec![("mode", m.mode.as_str()), ("leg", lane.lane.as_str())];
                ConstCounter::new(lane.hits).encode(family.encode_family(&labels)?)?;
            }
        }
        let mut family = encoder.encode_descriptor(
            "strata_recall_warm",
            "Recalls whose fused top k held an episode known before the query's knowledge time",
            None,
            MetricType::Counter,
        )?;
        for m in modes {
            let labels: Labels = vec![("mode", m.mode.as_str())];
            ConstCounter::new(m.warm).encode(family.encode_family(&labels)?)?;
        }
        let mut family = encoder.encode_descriptor(
            "strata_recall_latency",
            "Recall latency per mode and leg, and of the whole recall (fused)",
            Some(&Unit::Seconds),
            MetricType::Histogram,
        )?;
        for m in modes {
            for lane in &m.lanes {
                let labels: Labels = vec![("mode", m.mode.as_str()), ("leg", lane.lane.as_str())];
                family.encode_family(&labels)?.encode_histogram::<Labels>(
                    lane.latency.sum_seconds,
                    lane.latency.count,
                    &lane.latency.buckets(),
                    None,
                )?;
            }
        }
        let warm = &self.warm;
        ConstGauge::new(warm.ratio.unwrap_or(0.0)).encode(encoder.encode_descriptor(
            "strata_warm_ratio",
            "Share of the last recalls (strata_warm_window_recalls of them) that were warm; 0 with none",
            None,
            MetricType::Gauge,
        )?)?;
        ConstGauge::new(warm.recalls as i64).encode(encoder.encode_descriptor(
            "strata_warm_window_recalls",
            "Recalls the warm ratio was taken over (at most the configured window)",
            None,
            MetricType::Gauge,
        )?)?;
        if let Some(n) = self.gauges.episodes {
            ConstGauge::new(n as i64).encode(encoder.encode_descriptor(
                "strata_episodes",
                "Episodes stored",
                None,
                MetricType::Gauge,
            )?)?;
        }
        let mut family = encoder.encode_descriptor(
            "strata_index_lag_episodes",
            "Episodes stored that an index does not hold yet",
            None,
            MetricType::Gauge,
        )?;
        for (index, lag) in &self.gauges.index_lag {
            let labels: Labels = vec![("index", index.as_str())];
            ConstGauge::new(*lag as i64).encode(family.encode_family(&labels)?)?;
        }
        let mut family = encoder.encode_descriptor(
            "strata_writer_lock_waits",
            "Times a writer had to wait for another's turn, by lock",
            None,
            MetricType::Counter,
        )?;
        for lock in &self.counters.writer_locks {
            let labels: Labels = vec![("lock", lock.lock.as_str())];
            ConstCounter::new(lock.waits).encode(family.encode_family(&labels)?)?;
        }
        let mut family = encoder.encode_descriptor(
            "strata_writer_lock_wait",
            "Time writers spent waiting for another's turn, by lock",
            Some(&Unit::Seconds),
            MetricType::Counter,
        )?;
        for lock in &self.counters.writer_locks {
            let labels: Labels = vec![("lock", lock.lock.as_str())];
            ConstCounter::new(lock.waited_seconds).encode(family.encode_family(&labels)?)?;
        }
        Ok(())
    }
}
