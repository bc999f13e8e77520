//! The embedded vector index: one LMDB environment per embedding model, recording the model,
//! dimension and the store it was built from, shared by every process on the data directory.
//! Each process keeps the vectors in one contiguous matrix for exact cosine search and reads
//! in what other processes appended, through the index's own append log, before searching.

use super::sync::TEXT_VERSION;
use std::cmp::{Ordering, Reverse};
use std::collections::{BinaryHeap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use heed::types::Bytes;
use heed::{Database, PutFlags, RoTxn, RwTxn};

use super::IndexError;
use crate::lmdb::{self, SharedEnv, WriterGuard, WriterLock};
use crate::model::{AsOf, Timestamp};

type Db = Database<'static, Bytes, Bytes>;

/// A refresh lets go of the mapped pages of the stored vectors it read every this many rows.
const RELEASE_AFTER_ROWS: usize = 16_384;

/// One vector and the times that decide whether an as-of query may see it.
pub struct VectorRow {
    pub fingerprint: String,
    pub ingested_at: Timestamp,
    pub t_valid: Timestamp,
    pub concluded_at: Timestamp,
    pub vector: Vec<f32>,
}

/// The vectors in memory, quantised to int8 with one scale per row (a quarter of the
/// memory of f32); the scan ranks by the quantised scores and the best candidates are
/// scored again exactly from the stored f32 vectors.
#[derive(Default)]
struct Matrix {
    positions: HashMap<String, usize>,
    fingerprints: Vec<String>,
    /// Where each row's f32 vector is stored (its key in `rows`).
    sequences: Vec<u64>,
    ingested_at: Vec<i64>,
    t_valid: Vec<i64>,
    codes: Vec<i8>,
    scales: Vec<f32>,
}

/// Symmetric int8 codes of `vector` into `codes`, and their scale.
fn quantise(vector: &[f32], codes: &mut [i8]) -> f32 {
    let top = vector.iter().fold(0f32, |m, x| m.max(x.abs()));
    if top == 0.0 || !top.is_finite() {
        codes.fill(0);
        return 0.0;
    }
    let scale = top / 127.0;
    for (c, x) in codes.iter_mut().zip(vector) {
        *c = (x / scale).round().clamp(-127.0, 127.0) as i8;
    }
    scale
}

impl Matrix {
    fn reserve(&mut self, rows: usize, dimension: usize) {
        self.positions.reserve(rows);
        self.fingerprints.reserve(rows);
        self.sequences.reserve(rows);
        self.ingested_at.reserve(rows);
        self.t_valid.reserve(rows);
        self.codes.reserve(rows * dimension);
        self.scales.reserve(rows);
    }

    fn push(&mut self, row: &StoredRow<'_>, vector: &[f32]) {
        let StoredRow {
            sequence,
            fingerprint,
            ingested_at,
            t_valid,
        } = *row;
        let d = vector.len();
        if let Some(&i) = self.positions.get(fingerprint) {
            self.sequences[i] = sequence;
            self.ingested_at[i] = ingested_at;
            self.t_valid[i] = t_valid;
            self.scales[i] = quantise(vector, &mut self.codes[i * d..(i + 1) * d]);
            return;
        }
        self.positions
            .insert(fingerprint.to_string(), self.fingerprints.len());
        self.fingerprints.push(fingerprint.to_string());
        self.sequences.push(sequence);
        self.ingested_at.push(ingested_at);
        self.t_valid.push(t_valid);
        let at = self.codes.len();
        self.codes.resize(at + d, 0);
        self.scales.push(quantise(vector, &mut self.codes[at..]));
    }
}

pub struct VectorIndex {
    path: PathBuf,
    model: String,
    dimension: usize,
    shared: Arc<SharedEnv>,
    tables: Tables,
    lock: WriterLock,
    loaded: RwLock<Loaded>,
    /// Why the index was emptied on open to be rebuilt from the store, if it was.
    pub rebuilt: Option<String>,
}

/// A search hit; ties on score fall back to the fingerprint so results are deterministic.
#[derive(Clone, Debug, PartialEq)]
pub struct Scored {
    pub fingerprint: String,
    pub score: f32,
}

/// A candidate row: better = higher score, then smaller fingerprint, whatever the row order.
struct HeapItem<'a>(f32, usize, &'a str);
impl PartialEq for HeapItem<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for HeapItem<'_> {}
impl PartialOrd for HeapItem<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for HeapItem<'_> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0).then_with(|| other.2.cmp(self.2))
    }
}

const PARALLEL_ROWS: usize = 20_000;

/// Dot product in eight independent lanes, which the compiler turns into SIMD.
pub(crate) fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut lanes = [0f32; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in ca.zip(cb) {
        for i in 0..8 {
            lanes[i] += x[i] * y[i];
        }
    }
    lanes.iter().sum::<f32>() + tail
}

/// `codes · query`, the query unquantised, in eight independent lanes.
fn dot_codes(codes: &[i8], query: &[f32]) -> f32 {
    let mut lanes = [0f32; 8];
    let (cc, cq) = (codes.chunks_exact(8), query.chunks_exact(8));
    let tail: f32 = cc
        .remainder()
        .iter()
        .zip(cq.remainder())
        .map(|(c, q)| f32::from(*c) * q)
        .sum();
    for (c, q) in cc.zip(cq) {
        for i in 0..8 {
            lanes[i] += f32::from(c[i]) * q[i];
        }
    }
    lanes.iter().sum::<f32>() + tail
}

/// Candidates the quantised scan keeps for each result asked for, before exact scoring;
/// and at least this many besides.
const RERANK_FACTOR: usize = 2;
const RERANK_EXTRA: usize = 32;

/// The best `limit` rows of `range` visible at the as-of point, by quantised score.
fn scan<'m>(
    m: &'m Matrix,
    dimension: usize,
    query: &[f32],
    as_of: &AsOf,
    limit: usize,
    range: std::ops::Range<usize>,
) -> BinaryHeap<Reverse<HeapItem<'m>>> {
    let (k, v) = (as_of.known_at.millis(), as_of.valid_at.millis());
    let mut heap: BinaryHeap<Reverse<HeapItem<'m>>> = BinaryHeap::with_capacity(limit + 1);
    for i in range {
        if m.ingested_at[i] > k || m.t_valid[i] > v {
            continue;
        }
        let score = m.scales[i] * dot_codes(&m.codes[i * dimension..(i + 1) * dimension], query);
        if heap
            .peek()
            .is_some_and(|Reverse(HeapItem(worst, _, _))| heap.len() == limit && score < *worst)
        {
            continue;
        }
        heap.push(Reverse(HeapItem(score, i, &m.fingerprints[i])));
        if heap.len() > limit {
            heap.pop();
        }
    }
    heap
}

fn slug(model: &str) -> String {
    model
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect()
}

/// The index of `model` in `dir`. Each layout has a directory of its own, so a process of an
/// older release still running beside this one keeps its own index and never writes rows of
/// its layout into this one.
pub fn index_path(dir: &Path, model: &str) -> PathBuf {
    dir.join(format!("vectors{LAYOUT}-{}", slug(model)))
}

/// meta: model, dimension, text_version, store_id, watermark, epoch (bumped when cleared)
/// log: append sequence (u64 BE) -> [`encode_row`]: the rows in the order they were written,
/// which other processes read from where they left off; always appended, so its pages are
/// full. A row written again for the same fingerprint replaces its earlier one.
/// vectors: fingerprint -> its row's sequence
#[derive(Clone, Copy)]
struct Tables {
    meta: Db,
    vectors: Db,
    log: Db,
}

/// The layout of the tables above, named by the index's directory ([`index_path`]).
const LAYOUT: &str = "2";

/// A stored row's header: where it is, whose vector, and its times.
#[derive(Clone, Copy)]
struct StoredRow<'a> {
    sequence: u64,
    fingerprint: &'a str,
    ingested_at: i64,
    t_valid: i64,
}

/// `fingerprint length (u16 LE) | fingerprint | ingested_at | t_valid | f32 LE ...`
fn encode_row(out: &mut Vec<u8>, r: &VectorRow) {
    out.clear();
    let fp = r.fingerprint.as_bytes();
    out.extend_from_slice(&(fp.len() as u16).to_le_bytes());
    out.extend_from_slice(fp);
    out.extend_from_slice(&r.ingested_at.millis().to_le_bytes());
    out.extend_from_slice(&r.t_valid.millis().to_le_bytes());
    for x in &r.vector {
        out.extend_from_slice(&x.to_le_bytes());
    }
}

/// What this process has read into its matrix.
#[derive(Default)]
struct Loaded {
    epoch: u64,
    sequence: u64,
    matrix: Matrix,
}

fn get_meta(t: &Tables, txn: &RoTxn, key: &str) -> Result<Option<String>, heed::Error> {
    Ok(t.meta
        .get(txn, key.as_bytes())?
        .map(|v| String::from_utf8_lossy(v).into_owned()))
}

fn put_meta(t: &Tables, txn: &mut RwTxn, key: &str, value: &str) -> Result<(), heed::Error> {
    t.meta.put(txn, key.as_bytes(), value.as_bytes())
}

fn last_sequence(t: &Tables, txn: &RoTxn) -> Result<u64, heed::Error> {
    Ok(t.log
        .last(txn)?
        .and_then(|(k, _)| <[u8; 8]>::try_from(k).ok())
        .map_or(0, u64::from_be_bytes))
}

impl VectorIndex {
    /// Opens (creating if needed) the index for `model` in `dir`, built from the store
    /// `store_id`; refuses an index built by another model or at another dimension, and
    /// starts afresh (saying so in [`Self::rebuilt`]) one built from another store or from an
    /// older episode text.
    pub fn open(
        dir: &Path,
        model: &str,
        dimension: usize,
        store_id: Option<&str>,
    ) -> Result<Self, IndexError> {
        let path = index_path(dir, model);
        let err = |e: &dyn std::fmt::Display| IndexError::Vectors {
            path: path.clone(),
            message: e.to_string(),
        };
        let shared = lmdb::open(&path).map_err(|e| err(&e))?;
        let lock = WriterLock::new(path.join("catch-up.lock"));
        let env = &shared.env;
        if shared.read_only {
            return Self::open_read_only(path, model, dimension, shared, lock);
        }
        let made = env
            .create_databases_and_commit(
                env.write_txn().map_err(|e| err(&e))?,
                |dbo, txn| -> Result<_, heed::Error> {
                    let mut make = |name| dbo.create_database::<Bytes, Bytes>(txn, Some(name));
                    Ok(heed::CommitOrAbort::<_, ()>::Commit([
                        make("meta")?,
                        make("vectors")?,
                        make("log")?,
                    ]))
                },
            )
            .map_err(|e| err(&e))?;
        let [meta, vectors, log] = made
            .commit()
            .ok_or_else(|| err(&"creating the tables was aborted"))?;
        let t = Tables { meta, vectors, log };
        let mut wtxn = env.write_txn().map_err(|e| err(&e))?;
        let get = |txn: &RoTxn, k: &str| get_meta(&t, txn, k).map_err(|e| err(&e));
        let found_model = get(&wtxn, "model")?;
        let found_dimension = get(&wtxn, "dimension")?;
        let current_text = TEXT_VERSION.to_string();
        let mut rebuilt = None;
        match (found_model, found_dimension) {
            (Some(m), Some(d)) => {
                let d: usize = d.parse().map_err(|e| err(&e))?;
                if m != model || d != dimension {
                    return Err(IndexError::EmbedderMismatch {
                        path,
                        found_model: m,
                        found_dimension: d,
                        model: model.to_string(),
                        dimension,
                    });
                }
                if get(&wtxn, "text_version")?.as_deref() != Some(current_text.as_str()) {
                    rebuilt = Some("built from an older episode text".to_string());
                } else if let Some(id) = store_id
                    && get(&wtxn, "store_id")?.as_deref() != Some(id)
                {
                    rebuilt = Some("built from another store".to_string());
                }
            }
            _ => {
                put_meta(&t, &mut wtxn, "model", model).map_err(|e| err(&e))?;
                put_meta(&t, &mut wtxn, "dimension", &dimension.to_string())
                    .map_err(|e| err(&e))?;
                put_meta(&t, &mut wtxn, "text_version", &current_text).map_err(|e| err(&e))?;
                if let Some(id) = store_id {
                    put_meta(&t, &mut wtxn, "store_id", id).map_err(|e| err(&e))?;
                }
            }
        }
        wtxn.commit().map_err(|e| err(&e))?;
        let index = VectorIndex {
            path,
            model: model.to_string(),
            dimension,
            shared,
            tables: t,
            lock,
            loaded: RwLock::new(Loaded::default()),
            rebuilt: rebuilt.clone(),
        };
        if rebuilt.is_some() {
            // An older text with no known store keeps whatever identity it recorded.
            let id = match store_id {
                Some(id) => Some(id.to_string()),
                None => {
                    let txn = index.shared.env.read_txn().map_err(|e| index.err(&e))?;
                    get_meta(&t, &txn, "store_id").map_err(|e| index.err(&e))?
                }
            };
            index.clear(id.as_deref().unwrap_or("unidentified"))?;
        }
        index.refresh()?;
        Ok(index)
    }

    /// On a read-only filesystem: the index as it stands, if it was built by this embedder.
    fn open_read_only(
        path: PathBuf,
        model: &str,
        dimension: usize,
        shared: Arc<SharedEnv>,
        lock: WriterLock,
    ) -> Result<Self, IndexError> {
        let err = |e: &dyn std::fmt::Display| IndexError::Vectors {
            path: path.clone(),
            message: e.to_string(),
        };
        let env = &shared.env;
        let opened = env
            .open_databases_and_commit(
                env.read_txn().map_err(|e| err(&e))?,
                |dbo, txn| -> Result<_, heed::Error> {
                    let open = |name| dbo.open_database::<Bytes, Bytes>(txn, Some(name));
                    Ok(heed::CommitOrAbort::<_, ()>::Commit([
                        open("meta")?,
                        open("vectors")?,
                        open("log")?,
                    ]))
                },
            )
            .map_err(|e| err(&e))?;
        let Some([Some(meta), Some(vectors), Some(log)]) = opened.commit() else {
            return Err(err(
                &"no vector index here, and the filesystem is read-only",
            ));
        };
        let t = Tables { meta, vectors, log };
        {
            let txn = env.read_txn().map_err(|e| err(&e))?;
            let found_model = get_meta(&t, &txn, "model").map_err(|e| err(&e))?;
            let found_dimension = get_meta(&t, &txn, "dimension")
                .map_err(|e| err(&e))?
                .and_then(|d| d.parse().ok());
            if found_model.as_deref() != Some(model) || found_dimension != Some(dimension) {
                return Err(IndexError::EmbedderMismatch {
                    path,
                    found_model: found_model.unwrap_or_default(),
                    found_dimension: found_dimension.unwrap_or(0),
                    model: model.to_string(),
                    dimension,
                });
            }
        }
        let index = VectorIndex {
            path,
            model: model.to_string(),
            dimension,
            shared,
            tables: t,
            lock,
            loaded: RwLock::new(Loaded::default()),
            rebuilt: None,
        };
        index.refresh()?;
        Ok(index)
    }

    fn err(&self, e: &dyn std::fmt::Display) -> IndexError {
        IndexError::Vectors {
            path: self.path.clone(),
            message: e.to_string(),
        }
    }

    /// Empties the index for a rebuild from `store_id`, for every process (they see the
    /// epoch change and drop what they had read).
    pub fn clear(&self, store_id: &str) -> Result<(), IndexError> {
        let t = self.tables;
        let mut txn = self.shared.env.write_txn().map_err(|e| self.err(&e))?;
        let epoch = get_meta(&t, &txn, "epoch")
            .map_err(|e| self.err(&e))?
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0);
        let run = |txn: &mut RwTxn| -> Result<(), heed::Error> {
            t.vectors.clear(txn)?;
            t.log.clear(txn)?;
            put_meta(&t, txn, "watermark", "0")?;
            put_meta(&t, txn, "epoch", &(epoch + 1).to_string())?;
            put_meta(&t, txn, "text_version", &TEXT_VERSION.to_string())?;
            put_meta(&t, txn, "store_id", store_id)
        };
        run(&mut txn).map_err(|e| self.err(&e))?;
        txn.commit().map_err(|e| self.err(&e))?;
        self.refresh()
    }

    /// Reads in the rows appended since this process last looked (all of them after a clear).
    fn refresh(&self) -> Result<(), IndexError> {
        let t = self.tables;
        let txn = self.shared.env.read_txn().map_err(|e| self.err(&e))?;
        let epoch = get_meta(&t, &txn, "epoch")
            .map_err(|e| self.err(&e))?
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0);
        let last = last_sequence(&t, &txn).map_err(|e| self.err(&e))?;
        {
            let loaded = self.loaded.read().map_err(|e| self.err(&e))?;
            if loaded.epoch == epoch && loaded.sequence == last {
                return Ok(());
            }
        }
        let mut loaded = self.loaded.write().map_err(|e| self.err(&e))?;
        if loaded.epoch != epoch {
            *loaded = Loaded {
                epoch,
                ..Loaded::default()
            };
        }
        let mut read = 0usize;
        let mut vector = Vec::with_capacity(self.dimension);
        let from = (loaded.sequence + 1).to_be_bytes();
        let range = (
            std::ops::Bound::Included(from.as_slice()),
            std::ops::Bound::Unbounded,
        );
        if loaded.sequence == 0 {
            let rows = t.vectors.len(&txn).map_err(|e| self.err(&e))? as usize;
            loaded.matrix.reserve(rows, self.dimension);
        }
        for row in t.log.range(&txn, &range).map_err(|e| self.err(&e))? {
            let (key, bytes) = row.map_err(|e| self.err(&e))?;
            let stored = self.decode_into(key, bytes, &mut vector)?;
            loaded.matrix.push(&stored, &vector);
            read += 1;
            if read.is_multiple_of(RELEASE_AFTER_ROWS) {
                // Each stored vector is read once here, to quantise it; searches read back
                // only their few candidates, so the pages need not stay resident.
                self.shared.release_mapped_pages();
            }
        }
        loaded.sequence = last;
        if read >= RELEASE_AFTER_ROWS {
            self.shared.release_mapped_pages();
        }
        Ok(())
    }

    /// The stored f32 vector of `fingerprint` into `vector`, read at `sequence` where this
    /// process last saw it; if another process wrote it again (or rebuilt the index) since,
    /// from where it is now. `false`: it is no longer stored.
    fn stored_vector(
        &self,
        txn: &RoTxn,
        sequence: u64,
        fingerprint: &str,
        vector: &mut Vec<f32>,
    ) -> Result<bool, IndexError> {
        let key = sequence.to_be_bytes();
        if let Some(bytes) = self.tables.log.get(txn, &key).map_err(|e| self.err(&e))?
            && self.decode_into(&key, bytes, vector)?.fingerprint == fingerprint
        {
            return Ok(true);
        }
        let Some(now) = self
            .tables
            .vectors
            .get(txn, fingerprint.as_bytes())
            .map_err(|e| self.err(&e))?
            .and_then(|v| <[u8; 8]>::try_from(v).ok())
        else {
            return Ok(false);
        };
        let Some(bytes) = self.tables.log.get(txn, &now).map_err(|e| self.err(&e))? else {
            return Ok(false);
        };
        Ok(self.decode_into(&now, bytes, vector)?.fingerprint == fingerprint)
    }

    /// A stored row (`key` is its sequence): its header, and its vector into `vector`.
    fn decode_into<'b>(
        &self,
        key: &[u8],
        bytes: &'b [u8],
        vector: &mut Vec<f32>,
    ) -> Result<StoredRow<'b>, IndexError> {
        let bad = |what: &str| self.err(&format!("row {}: {what}", String::from_utf8_lossy(key)));
        let sequence = <[u8; 8]>::try_from(key)
            .map(u64::from_be_bytes)
            .map_err(|_| bad("malformed sequence"))?;
        let (len, rest) = bytes
            .split_first_chunk::<2>()
            .ok_or_else(|| bad("too short"))?;
        let len = u16::from_le_bytes(*len) as usize;
        if rest.len() != len + 16 + 4 * self.dimension {
            return Err(bad(&format!("{} bytes", bytes.len())));
        }
        let (fp, rest) = rest.split_at(len);
        let fingerprint = std::str::from_utf8(fp).map_err(|_| bad("fingerprint not UTF-8"))?;
        let word = |at: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&rest[at..at + 8]);
            i64::from_le_bytes(b)
        };
        vector.clear();
        vector.extend(
            rest[16..]
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])),
        );
        Ok(StoredRow {
            sequence,
            fingerprint,
            ingested_at: word(0),
            t_valid: word(8),
        })
    }

    pub fn model(&self) -> &str {
        &self.model
    }

    pub fn dimension(&self) -> usize {
        self.dimension
    }

    pub fn len(&self) -> usize {
        let _ = self.refresh();
        self.loaded
            .read()
            .map_or(0, |l| l.matrix.fingerprints.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the vector of `fingerprint` is stored.
    pub fn contains(&self, fingerprint: &str) -> Result<bool, IndexError> {
        let txn = self.shared.env.read_txn().map_err(|e| self.err(&e))?;
        Ok(self
            .tables
            .vectors
            .get(&txn, fingerprint.as_bytes())
            .map_err(|e| self.err(&e))?
            .is_some())
    }

    /// The store ingest sequence this index has read up to.
    pub fn watermark(&self) -> Result<u64, IndexError> {
        let txn = self.shared.env.read_txn().map_err(|e| self.err(&e))?;
        Ok(get_meta(&self.tables, &txn, "watermark")
            .map_err(|e| self.err(&e))?
            .and_then(|v| v.parse().ok())
            .unwrap_or(0))
    }

    /// Held while catching the index up, so two processes never embed the same episodes.
    pub fn catch_up_guard(&self) -> Result<WriterGuard, IndexError> {
        self.lock
            .acquire(WriterLock::default_wait())
            .map_err(|e| self.err(&e))
    }

    /// Adds rows (upserting by fingerprint) and advances the watermark in one transaction.
    pub fn append(&self, rows: &[VectorRow], watermark: u64) -> Result<(), IndexError> {
        for r in rows {
            if r.vector.len() != self.dimension {
                return Err(IndexError::Dimension {
                    expected: self.dimension,
                    got: r.vector.len(),
                });
            }
        }
        let t = self.tables;
        let mut txn = self.shared.env.write_txn().map_err(|e| self.err(&e))?;
        let run = |txn: &mut RwTxn| -> Result<(), heed::Error> {
            let mut sequence = last_sequence(&t, txn)?;
            let mut bytes = Vec::with_capacity(32 + 4 * self.dimension);
            for r in rows {
                let fp = r.fingerprint.as_bytes();
                if let Some(earlier) = t.vectors.get(txn, fp)? {
                    let earlier = earlier.to_vec();
                    t.log.delete(txn, &earlier)?;
                }
                sequence += 1;
                encode_row(&mut bytes, r);
                t.log
                    .put_with_flags(txn, PutFlags::APPEND, &sequence.to_be_bytes(), &bytes)?;
                t.vectors.put(txn, fp, &sequence.to_be_bytes())?;
            }
            put_meta(&t, txn, "watermark", &watermark.to_string())
        };
        run(&mut txn).map_err(|e| self.err(&e))?;
        txn.commit().map_err(|e| self.err(&e))?;
        self.refresh()
    }

    /// Exact cosine kNN (vectors are unit length) over vectors known at K and begun by V.
    pub fn search(
        &self,
        query: &[f32],
        as_of: &AsOf,
        limit: usize,
    ) -> Result<Vec<Scored>, IndexError> {
        if query.len() != self.dimension {
            return Err(IndexError::Dimension {
                expected: self.dimension,
                got: query.len(),
            });
        }
        self.refresh()?;
        let loaded = self.loaded.read().map_err(|e| self.err(&e))?;
        let m = &loaded.matrix;
        let rows = m.fingerprints.len();
        let pool = limit
            .saturating_mul(RERANK_FACTOR)
            .saturating_add(RERANK_EXTRA);
        // Two halves on two threads once the scan is long enough to pay for a thread.
        let heap = if rows >= PARALLEL_ROWS {
            let mid = rows / 2;
            let (a, b) = std::thread::scope(|scope| {
                let left = scope.spawn(|| scan(m, self.dimension, query, as_of, pool, 0..mid));
                let right = scan(m, self.dimension, query, as_of, pool, mid..rows);
                (left.join(), right)
            });
            let mut merged = a.map_err(|_| self.err(&"search thread panicked"))?;
            for item in b {
                merged.push(item);
                if merged.len() > pool {
                    merged.pop();
                }
            }
            merged
        } else {
            scan(m, self.dimension, query, as_of, pool, 0..rows)
        };
        // The candidates scored exactly, from the stored vectors.
        let txn = self.shared.env.read_txn().map_err(|e| self.err(&e))?;
        let mut hits = Vec::with_capacity(heap.len());
        let mut vector = Vec::with_capacity(self.dimension);
        for Reverse(HeapItem(_, i, _)) in heap {
            let fingerprint = &m.fingerprints[i];
            if !self.stored_vector(&txn, m.sequences[i], fingerprint, &mut vector)? {
                continue;
            }
            hits.push(Scored {
                fingerprint: fingerprint.clone(),
                score: dot(&vector, query),
            });
        }
        hits.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then_with(|| a.fingerprint.cmp(&b.fingerprint))
        });
        hits.truncate(limit);
        Ok(hits)
    }
}
