//! The recall counters on disk: an LMDB environment of their own. `counters` holds one u64
//! (little-endian) per name — `recall/MODE/LANE/NAME`, `lock/LOCK/NAME` — and `recent` the
//! last [`KEPT`] recalls in the order they were recorded, for the warm signal's window.
//! Every batch of observations is one write transaction: read, add, write back, so writers
//! in any number of processes take turns and no increment is lost.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use heed::types::Bytes;
use heed::{Database, RoTxn, RwTxn, WithoutTls};
use serde::Serialize;

use super::TelemetryError;
use super::observation::{Lane, Observation, Outcome};
use super::warm::RecentRecall;
use crate::lmdb::{self, SharedEnv};
use crate::recall::RecallMode;

/// Upper bounds (seconds) of the latency histograms' buckets; one more counts the rest.
pub const LATENCY_BOUNDS: [f64; 11] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
];
/// Recent recalls kept for the warm signal's window (the window is at most this).
pub const KEPT: u64 = 10_000;
const NEXT: &[u8] = b"recent/next";

type Db = Database<'static, Bytes, Bytes>;
/// The writers' turn file: held exclusively across each write (LMDB serialises the writes
/// themselves), so a process that reads without a slot in LMDB's reader table can keep
/// writers out while it reads ([`SharedEnv::read_txn`]).
const TURN_FILE: &str = "counters.lock";

pub struct Counters {
    shared: Arc<SharedEnv>,
    counters: Db,
    recent: Db,
}

/// Everything counted since the counters began.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Snapshot {
    /// Both modes, active first.
    pub modes: Vec<ModeCounts>,
    /// Each writer lock some process had to wait for.
    pub writer_locks: Vec<LockWaits>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ModeCounts {
    pub mode: RecallMode,
    pub recalls: u64,
    /// Recalls whose fused top k held an episode known before their knowledge time.
    pub warm: u64,
    /// semantic, bm25, graph, fused.
    pub lanes: Vec<LaneCounts>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LaneCounts {
    pub lane: Lane,
    /// Queries it answered or failed to (a leg switched off is not asked).
    pub queries: u64,
    /// Queries with at least one hit (for `fused`: at least one result).
    pub with_hits: u64,
    pub empty: u64,
    pub timeouts: u64,
    pub failures: u64,
    /// Hits summed over the queries (for `fused`: results).
    pub hits: u64,
    pub latency: Latency,
}

/// A latency histogram: counts per bucket of [`LATENCY_BOUNDS`], the last one above them.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Latency {
    pub count: u64,
    pub sum_seconds: f64,
    pub bounds_seconds: Vec<f64>,
    pub per_bucket: Vec<u64>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LockWaits {
    /// The lock file's name: `writer.lock` for the store, others for the indexes.
    pub lock: String,
    pub waits: u64,
    pub waited_seconds: f64,
}

impl ModeCounts {
    pub fn lane(&self, lane: Lane) -> Option<&LaneCounts> {
        self.lanes.iter().find(|l| l.lane == lane)
    }
}

impl Latency {
    /// (upper bound, count in that bucket alone), the last bound infinite: what
    /// `prometheus-client` encodes, adding them up into Prometheus' cumulative buckets.
    pub fn buckets(&self) -> Vec<(f64, u64)> {
        self.per_bucket
            .iter()
            .enumerate()
            .map(|(i, n)| {
                (
                    self.bounds_seconds.get(i).copied().unwrap_or(f64::INFINITY),
                    *n,
                )
            })
            .collect()
    }

    pub fn mean_ms(&self) -> Option<f64> {
        (self.count > 0).then(|| self.sum_seconds * 1e3 / self.count as f64)
    }
}

impl Snapshot {
    /// Every count 0: what a memory nobody recalled from shows.
    pub fn zero() -> Snapshot {
        Snapshot {
            modes: mode_counts(|_| Ok::<_, TelemetryError>(0)).unwrap_or_default(),
            writer_locks: Vec::new(),
        }
    }

    pub fn mode(&self, mode: RecallMode) -> Option<&ModeCounts> {
        self.modes.iter().find(|m| m.mode == mode)
    }

    pub fn recalls(&self) -> u64 {
        self.modes.iter().map(|m| m.recalls).sum()
    }
}

/// Both modes' counts, each counter read by `get`.
fn mode_counts(
    get: impl Fn(&[u8]) -> Result<u64, TelemetryError>,
) -> Result<Vec<ModeCounts>, TelemetryError> {
    let mut modes = Vec::new();
    for mode in RecallMode::ALL {
        let mut lanes = Vec::new();
        for lane in Lane::ALL {
            let get = |name: &str| get(&lane_key(mode, lane, name));
            let mut outcomes = [0u64; 4];
            for (i, outcome) in Outcome::ALL.iter().enumerate() {
                outcomes[i] = get(outcome.as_str())?;
            }
            let per_bucket = (0..=LATENCY_BOUNDS.len())
                .map(|i| get(&format!("le/{i}")))
                .collect::<Result<Vec<_>, _>>()?;
            let [hit, empty, timeouts, failures] = outcomes;
            lanes.push(LaneCounts {
                lane,
                queries: outcomes.iter().sum(),
                with_hits: hit,
                empty,
                timeouts,
                failures,
                hits: get("hits")?,
                latency: Latency {
                    count: per_bucket.iter().sum(),
                    sum_seconds: get("latency_us")? as f64 / 1e6,
                    bounds_seconds: LATENCY_BOUNDS.to_vec(),
                    per_bucket,
                },
            });
        }
        let recalls = lanes
            .iter()
            .find(|l| l.lane == Lane::Fused)
            .map_or(0, |l| l.queries);
        modes.push(ModeCounts {
            mode,
            recalls,
            warm: get(&warm_key(mode))?,
            lanes,
        });
    }
    Ok(modes)
}

fn lane_key(mode: RecallMode, lane: Lane, name: &str) -> Vec<u8> {
    format!("recall/{}/{}/{name}", mode.as_str(), lane.as_str()).into_bytes()
}

fn warm_key(mode: RecallMode) -> Vec<u8> {
    format!("recall/{}/warm", mode.as_str()).into_bytes()
}

fn lock_key(lock: &str, name: &str) -> Vec<u8> {
    format!("lock/{lock}/{name}").into_bytes()
}

fn bucket(latency_ms: f64) -> usize {
    let seconds = latency_ms / 1e3;
    LATENCY_BOUNDS
        .iter()
        .position(|b| seconds <= *b)
        .unwrap_or(LATENCY_BOUNDS.len())
}

fn micros(ms: f64) -> u64 {
    (ms.max(0.0) * 1e3).round() as u64
}

/// Waits for the counters' turn file; the turn ends when the file is dropped. Not a
/// [`crate::lmdb::WriterLock`]: its waits are what the counters count, and a counter's own
/// turn is not a writer's wait for the store.
fn take_turn(dir: &Path) -> std::io::Result<std::fs::File> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(dir.join(TURN_FILE))?;
    file.lock()?;
    Ok(file)
}

fn decode(bytes: &[u8]) -> u64 {
    bytes.try_into().map_or(0, u64::from_le_bytes)
}

impl Counters {
    /// Opens the counters in `dir` for recording, creating them.
    pub fn open(dir: &Path) -> Result<Counters, TelemetryError> {
        let open_err = |e: &dyn std::fmt::Display| TelemetryError::Open {
            path: dir.to_path_buf(),
            message: e.to_string(),
        };
        let shared = lmdb::open(dir, TURN_FILE).map_err(|e| open_err(&e))?;
        if shared.read_only {
            return Err(TelemetryError::ReadOnly {
                path: dir.to_path_buf(),
            });
        }
        let env = &shared.env;
        let _turn = take_turn(dir).map_err(|e| open_err(&e))?;
        let made = env
            .create_databases_and_commit(
                env.write_txn().map_err(|e| open_err(&e))?,
                |dbo, txn| -> Result<_, heed::Error> {
                    let mut make = |name| dbo.create_database::<Bytes, Bytes>(txn, Some(name));
                    Ok(heed::CommitOrAbort::<_, ()>::Commit([
                        make("counters")?,
                        make("recent")?,
                    ]))
                },
            )
            .map_err(|e| open_err(&e))?;
        let [counters, recent] = made
            .commit()
            .ok_or_else(|| open_err(&"creating the tables was aborted"))?;
        Ok(Counters {
            shared,
            counters,
            recent,
        })
    }

    /// Opens the counters in `dir` for reading; `None` when nothing was ever recorded there
    /// (nothing is created).
    pub fn open_existing(dir: &Path) -> Result<Option<Counters>, TelemetryError> {
        if !dir.join("data.mdb").exists() {
            return Ok(None);
        }
        let open_err = |e: &dyn std::fmt::Display| TelemetryError::Open {
            path: dir.to_path_buf(),
            message: e.to_string(),
        };
        let shared = lmdb::open(dir, TURN_FILE).map_err(|e| open_err(&e))?;
        let env = &shared.env;
        let opened = env
            .open_databases_and_commit(
                env.read_txn().map_err(|e| open_err(&e))?,
                |dbo, txn| -> Result<_, heed::Error> {
                    let open = |name| dbo.open_database::<Bytes, Bytes>(txn, Some(name));
                    Ok(heed::CommitOrAbort::<_, ()>::Commit([
                        open("counters")?,
                        open("recent")?,
                    ]))
                },
            )
            .map_err(|e| open_err(&e))?;
        let Some([Some(counters), Some(recent)]) = opened.commit() else {
            return Ok(None);
        };
        Ok(Some(Counters {
            shared,
            counters,
            recent,
        }))
    }

    pub fn dir(&self) -> &Path {
        &self.shared.dir
    }

    fn err(&self, e: &dyn std::fmt::Display) -> TelemetryError {
        TelemetryError::Access {
            path: self.shared.dir.clone(),
            message: e.to_string(),
        }
    }

    /// Adds a batch of recalls, in one transaction.
    pub fn apply(&self, batch: &[Observation]) -> Result<(), TelemetryError> {
        if batch.is_empty() {
            return Ok(());
        }
        let mut deltas: BTreeMap<Vec<u8>, u64> = BTreeMap::new();
        let mut add = |key: Vec<u8>, n: u64| *deltas.entry(key).or_default() += n;
        for o in batch {
            for (lane, seen) in o.lanes() {
                add(lane_key(o.mode, lane, seen.outcome.as_str()), 1);
                add(lane_key(o.mode, lane, "hits"), seen.hits as u64);
                add(
                    lane_key(o.mode, lane, "latency_us"),
                    micros(seen.latency_ms),
                );
                add(
                    lane_key(o.mode, lane, &format!("le/{}", bucket(seen.latency_ms))),
                    1,
                );
            }
            if o.warm {
                add(warm_key(o.mode), 1);
            }
        }
        let _turn = take_turn(&self.shared.dir).map_err(|e| self.err(&e))?;
        let mut txn = self.shared.env.write_txn().map_err(|e| self.err(&e))?;
        self.add_all(&mut txn, &deltas)?;
        self.append_recent(&mut txn, batch)?;
        txn.commit().map_err(|e| self.err(&e))
    }

    /// One wait of `waited` for the writer lock named `lock`.
    pub fn record_wait(&self, lock: &str, waited: Duration) -> Result<(), TelemetryError> {
        let deltas = BTreeMap::from([
            (lock_key(lock, "waits"), 1),
            (lock_key(lock, "wait_us"), waited.as_micros() as u64),
        ]);
        let _turn = take_turn(&self.shared.dir).map_err(|e| self.err(&e))?;
        let mut txn = self.shared.env.write_txn().map_err(|e| self.err(&e))?;
        self.add_all(&mut txn, &deltas)?;
        txn.commit().map_err(|e| self.err(&e))
    }

    fn add_all(
        &self,
        txn: &mut RwTxn<'_>,
        deltas: &BTreeMap<Vec<u8>, u64>,
    ) -> Result<(), TelemetryError> {
        for (key, delta) in deltas {
            let now = self.get(txn, key)?;
            self.counters
                .put(txn, key, &now.saturating_add(*delta).to_le_bytes())
                .map_err(|e| self.err(&e))?;
        }
        Ok(())
    }

    /// Appends the batch to `recent` and lets go of what falls out of [`KEPT`].
    fn append_recent(
        &self,
        txn: &mut RwTxn<'_>,
        batch: &[Observation],
    ) -> Result<(), TelemetryError> {
        let first = self.get(txn, NEXT)?;
        let mut next = first;
        for o in batch {
            let recent = RecentRecall {
                mode: o.mode,
                warm: o.warm,
                at_ms: o.at_ms,
            };
            self.recent
                .put(txn, &next.to_be_bytes(), &recent.encode())
                .map_err(|e| self.err(&e))?;
            next += 1;
        }
        self.counters
            .put(txn, NEXT, &next.to_le_bytes())
            .map_err(|e| self.err(&e))?;
        for seq in first.saturating_sub(KEPT)..next.saturating_sub(KEPT) {
            self.recent
                .delete(txn, &seq.to_be_bytes())
                .map_err(|e| self.err(&e))?;
        }
        Ok(())
    }

    fn get(&self, txn: &RoTxn<'_, WithoutTls>, key: &[u8]) -> Result<u64, TelemetryError> {
        Ok(self
            .counters
            .get(txn, key)
            .map_err(|e| self.err(&e))?
            .map_or(0, decode))
    }

    /// Every counter, read in one snapshot.
    pub fn snapshot(&self) -> Result<Snapshot, TelemetryError> {
        let txn = self.shared.read_txn().map_err(|e| self.err(&e))?;
        let modes = mode_counts(|key| self.get(&txn, key))?;
        let mut locks: BTreeMap<String, LockWaits> = BTreeMap::new();
        for row in self
            .counters
            .prefix_iter(&txn, b"lock/")
            .map_err(|e| self.err(&e))?
        {
            let (key, value) = row.map_err(|e| self.err(&e))?;
            let key = String::from_utf8_lossy(key);
            let Some((lock, name)) = key
                .strip_prefix("lock/")
                .and_then(|rest| rest.rsplit_once('/'))
            else {
                continue;
            };
            let entry = locks.entry(lock.to_string()).or_insert_with(|| LockWaits {
                lock: lock.to_string(),
                waits: 0,
                waited_seconds: 0.0,
            });
            match name {
                "waits" => entry.waits = decode(value),
                "wait_us" => entry.waited_seconds = decode(value) as f64 / 1e6,
                _ => {}
            }
        }
        Ok(Snapshot {
            modes,
            writer_locks: locks.into_values().collect(),
        })
    }

    /// The last `n` recalls recorded, newest first.
    pub fn recent(&self, n: usize) -> Result<Vec<RecentRecall>, TelemetryError> {
        let txn = self.shared.read_txn().map_err(|e| self.err(&e))?;
        let mut out = Vec::with_capacity(n.min(KEPT as usize));
        for row in self.recent.rev_iter(&txn).map_err(|e| self.err(&e))? {
            if out.len() >= n {
                break;
            }
            let (_, value) = row.map_err(|e| self.err(&e))?;
            if let Some(r) = RecentRecall::decode(value) {
                out.push(r);
            }
        }
        Ok(out)
    }
}

/// Reads a memory's counters and its warm signal, as an operator watches them.
#[derive(Clone, Debug)]
pub struct CounterReader {
    pub dir: std::path::PathBuf,
    /// Recalls the warm signal looks back over.
    pub window: usize,
    /// The warm share at which the memory looks ready.
    pub ready_at: f64,
}

impl CounterReader {
    /// Every counter and the warm signal; zeros when nothing was recorded yet (nothing is
    /// created).
    pub fn read(&self) -> Result<(Snapshot, super::WarmSignal), TelemetryError> {
        match Counters::open_existing(&self.dir)? {
            Some(c) => Ok((
                c.snapshot()?,
                super::WarmSignal::of(&c.recent(self.window)?, self.window, self.ready_at),
            )),
            None => Ok((
                Snapshot::zero(),
                super::WarmSignal::of(&[], self.window, self.ready_at),
            )),
        }
    }
}

impl std::fmt::Debug for Counters {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Counters")
            .field("dir", &self.shared.dir)
            .finish()
    }
}
