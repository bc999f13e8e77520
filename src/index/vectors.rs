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
use crate::lmdb::{self, SharedEnv, WriterGuard, WriterLock, seal};
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
    /// When a later text of the same episode begins ([`super::versions`]): the row is not
    /// current from then on (`i64::MAX`: it stays current).
    known_until: Vec<i64>,
    /// The rows of each episode with a corrected text: (when each text begins, the text as
    /// first written at `i64::MIN`; its row), in order.
    texts: HashMap<String, Vec<(i64, usize)>>,
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
        self.known_until.reserve(rows);
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
        let row = self.fingerprints.len();
        self.positions.insert(fingerprint.to_string(), row);
        self.fingerprints.push(fingerprint.to_string());
        self.sequences.push(sequence);
        self.ingested_at.push(ingested_at);
        self.t_valid.push(t_valid);
        self.known_until.push(i64::MAX);
        let at = self.codes.len();
        self.codes.resize(at + d, 0);
        self.scales.push(quantise(vector, &mut self.codes[at..]));
        self.note_text(fingerprint, row);
    }

    /// Ends the knowledge interval of the texts a new row of an episode follows, and of the
    /// new row where a later text is held already, so the scan passes over texts that are
    /// not current at the query's K.
    fn note_text(&mut self, key: &str, row: usize) {
        let (fingerprint, from) = super::versions::parse_key(key);
        let from = from.map_or(i64::MIN, Timestamp::millis);
        let texts = match self.texts.get_mut(fingerprint) {
            Some(texts) => texts,
            None if from == i64::MIN => return,
            None => {
                let mut texts = Vec::new();
                if let Some(&first) = self.positions.get(fingerprint) {
                    texts.push((i64::MIN, first));
                }
                self.texts.entry(fingerprint.to_string()).or_insert(texts)
            }
        };
        let at = texts.partition_point(|(f, _)| *f < from);
        texts.insert(at, (from, row));
        for pair in texts.windows(2) {
            self.known_until[pair[0].1] = pair[1].0;
        }
        if let Some(&(_, last)) = texts.last() {
            self.known_until[last] = i64::MAX;
        }
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
        if m.ingested_at[i] > k || m.t_valid[i] > v || m.known_until[i] <= k {
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
/// Every value ends in a checksum of its key and bytes ([`seal`]).
#[derive(Clone, Copy)]
struct Tables {
    meta: Db,
    vectors: Db,
    log: Db,
}

/// The writers' turn file in the index's directory.
const CATCH_UP_LOCK: &str = "catch-up.lock";

/// An index error for a failed read of the index at `path`.
fn read_error(path: &Path, e: ReadError) -> IndexError {
    match e {
        ReadError::Damaged(message) => IndexError::Damaged {
            what: "vector",
            path: path.to_path_buf(),
            message,
        },
        ReadError::Other(e) => IndexError::Vectors {
            path: path.to_path_buf(),
            message: e.to_string(),
        },
    }
}

/// Whether the index's directory is one this process cannot write (then a damaged index is
/// reported, not moved).
fn lmdb_read_only(path: &Path) -> bool {
    let probe = path.join(format!(".write-probe-{}", std::process::id()));
    match std::fs::write(&probe, b"") {
        Ok(()) => {
            let _ = std::fs::remove_file(&probe);
            false
        }
        Err(e) => lmdb::is_read_only_error(&e),
    }
}

/// The layout of the tables above, named by the index's directory ([`index_path`]). 3: a
/// row's fingerprint length is 32 bits (2 held it in 16), and every value is sealed.
const LAYOUT: &str = "3";

/// A stored row's header: where it is, whose vector, and its times.
#[derive(Clone, Copy)]
struct StoredRow<'a> {
    sequence: u64,
    fingerprint: &'a str,
    ingested_at: i64,
    t_valid: i64,
}

/// `fingerprint length (u32 LE) | fingerprint | ingested_at | t_valid | f32 LE ...`: a
/// fingerprint another program wrote to a graph may be of any length.
fn encode_row(out: &mut Vec<u8>, r: &VectorRow) -> Result<(), String> {
    out.clear();
    let fp = r.fingerprint.as_bytes();
    let len = u32::try_from(fp.len())
        .map_err(|_| format!("a fingerprint of {} bytes is too long to index", fp.len()))?;
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(fp);
    out.extend_from_slice(&r.ingested_at.millis().to_le_bytes());
    out.extend_from_slice(&r.t_valid.millis().to_le_bytes());
    for x in &r.vector {
        out.extend_from_slice(&x.to_le_bytes());
    }
    Ok(())
}

/// Why a read of the index failed: its own files (damaged, to be rebuilt), or something else.
enum ReadError {
    Damaged(String),
    Other(heed::Error),
}

impl From<heed::Error> for ReadError {
    fn from(e: heed::Error) -> Self {
        if lmdb::is_damage(&e) {
            ReadError::Damaged(e.to_string())
        } else {
            ReadError::Other(e)
        }
    }
}

/// The value at `key`, once it is inside the file and its checksum holds.
fn get_sealed<'t>(
    shared: &SharedEnv,
    db: &Db,
    txn: &'t RoTxn,
    key: &[u8],
) -> Result<Option<&'t [u8]>, ReadError> {
    let Some(stored) = db.get(txn, key)? else {
        return Ok(None);
    };
    open_sealed(shared, key, stored).map(Some)
}

fn open_sealed<'t>(
    shared: &SharedEnv,
    key: &[u8],
    stored: &'t [u8],
) -> Result<&'t [u8], ReadError> {
    if !shared.holds(key) || !shared.holds(stored) {
        return Err(ReadError::Damaged(
            "a row runs past the end of the file".into(),
        ));
    }
    seal::unseal(key, stored).map_err(|e| ReadError::Damaged(format!("a row: {e}")))
}

fn put_sealed(db: &Db, txn: &mut RwTxn, key: &[u8], value: &[u8]) -> Result<(), heed::Error> {
    db.put(txn, key, &seal::sealed(key, value))
}

/// What this process has read into its matrix.
#[derive(Default)]
struct Loaded {
    epoch: u64,
    sequence: u64,
    matrix: Matrix,
}

fn get_meta(
    shared: &SharedEnv,
    t: &Tables,
    txn: &RoTxn,
    key: &str,
) -> Result<Option<String>, ReadError> {
    get_sealed(shared, &t.meta, txn, key.as_bytes())?
        .map(|v| {
            String::from_utf8(v.to_vec())
                .map_err(|_| ReadError::Damaged(format!("its {key} is not text")))
        })
        .transpose()
}

fn put_meta(t: &Tables, txn: &mut RwTxn, key: &str, value: &str) -> Result<(), heed::Error> {
    put_sealed(&t.meta, txn, key.as_bytes(), value.as_bytes())
}

fn last_sequence(t: &Tables, txn: &RoTxn) -> Result<u64, ReadError> {
    match t.log.last(txn)? {
        None => Ok(0),
        Some((k, _)) => <[u8; 8]>::try_from(k)
            .map(u64::from_be_bytes)
            .map_err(|_| ReadError::Damaged("its last row's key is not a sequence".into())),
    }
}

/// A number the index keeps in its meta table (absent: 0).
fn meta_number(shared: &SharedEnv, t: &Tables, txn: &RoTxn, key: &str) -> Result<u64, ReadError> {
    match get_meta(shared, t, txn, key)? {
        None => Ok(0),
        Some(v) => v
            .parse()
            .map_err(|_| ReadError::Damaged(format!("its {key} {v:?} is not a number"))),
    }
}

impl VectorIndex {
    /// Opens (creating if needed) the index for `model` in `dir`, built from the store
    /// `store_id`; refuses an index built by another model or at another dimension, and
    /// starts afresh (saying so in [`Self::rebuilt`]) one built from another store or from an
    /// older episode text. An index whose files are damaged is moved aside and started afresh
    /// too, to be rebuilt from the store.
    pub fn open(
        dir: &Path,
        model: &str,
        dimension: usize,
        store_id: Option<&str>,
    ) -> Result<Self, IndexError> {
        let path = index_path(dir, model);
        match Self::open_at(&path, model, dimension, store_id) {
            Err(IndexError::Damaged { message, .. }) if !lmdb_read_only(&path) => {
                let aside = path.with_file_name(format!(
                    "{}.damaged-{}",
                    path.file_name()
                        .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
                    Timestamp::now().millis()
                ));
                std::fs::rename(&path, &aside).map_err(|e| IndexError::Vectors {
                    path: path.clone(),
                    message: format!("damaged ({message}), and it cannot be moved aside: {e}"),
                })?;
                tracing::warn!(from = %path.display(), to = %aside.display(), %message, "moved the damaged vector index aside");
                let mut index = Self::open_at(&path, model, dimension, store_id)?;
                index.rebuilt = Some(format!(
                    "damaged ({message}; moved aside to {})",
                    aside.display()
                ));
                Ok(index)
            }
            other => other,
        }
    }

    fn open_at(
        path: &Path,
        model: &str,
        dimension: usize,
        store_id: Option<&str>,
    ) -> Result<Self, IndexError> {
        let path = path.to_path_buf();
        let err = |e: &dyn std::fmt::Display| IndexError::Vectors {
            path: path.clone(),
            message: e.to_string(),
        };
        let shared = lmdb::open(&path, CATCH_UP_LOCK).map_err(|e| match e {
            lmdb::OpenError::Damaged(d) => IndexError::Damaged {
                what: "vector",
                path: path.clone(),
                message: d.to_string(),
            },
            lmdb::OpenError::Lmdb(e) if lmdb::is_damage(&e) => IndexError::Damaged {
                what: "vector",
                path: path.clone(),
                message: e.to_string(),
            },
            other => err(&other),
        })?;
        let lock = WriterLock::new(path.join(CATCH_UP_LOCK));
        let env = &shared.env;
        if shared.read_only {
            return Self::open_read_only(path, model, dimension, shared, lock);
        }
        let damaged = |e: ReadError| read_error(&path, e);
        let made = env
            .create_databases_and_commit(
                env.write_txn().map_err(|e| damaged(e.into()))?,
                |dbo, txn| -> Result<_, heed::Error> {
                    let mut make = |name| dbo.create_database::<Bytes, Bytes>(txn, Some(name));
                    Ok(heed::CommitOrAbort::<_, ()>::Commit([
                        make("meta")?,
                        make("vectors")?,
                        make("log")?,
                    ]))
                },
            )
            .map_err(|e| damaged(e.into()))?;
        let [meta, vectors, log] = made
            .commit()
            .ok_or_else(|| err(&"creating the tables was aborted"))?;
        let t = Tables { meta, vectors, log };
        let mut wtxn = env.write_txn().map_err(|e| damaged(e.into()))?;
        let get = |txn: &RoTxn, k: &str| get_meta(&shared, &t, txn, k).map_err(damaged);
        let found_model = get(&wtxn, "model")?;
        let found_dimension = get(&wtxn, "dimension")?;
        let current_text = TEXT_VERSION.to_string();
        let mut rebuilt = None;
        match (found_model, found_dimension) {
            (Some(m), Some(d)) => {
                let d: usize = d.parse().map_err(|_| {
                    damaged(ReadError::Damaged(format!(
                        "its dimension {d:?} is not a number"
                    )))
                })?;
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
                    let txn = index
                        .shared
                        .read_txn()
                        .map_err(|e| index.read_err(e.into()))?;
                    get_meta(&index.shared, &t, &txn, "store_id").map_err(|e| index.read_err(e))?
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
        let damaged = |e: ReadError| read_error(&path, e);
        let env = &shared.env;
        let opened = env
            .open_databases_and_commit(
                env.read_txn().map_err(|e| damaged(e.into()))?,
                |dbo, txn| -> Result<_, heed::Error> {
                    let open = |name| dbo.open_database::<Bytes, Bytes>(txn, Some(name));
                    Ok(heed::CommitOrAbort::<_, ()>::Commit([
                        open("meta")?,
                        open("vectors")?,
                        open("log")?,
                    ]))
                },
            )
            .map_err(|e| damaged(e.into()))?;
        let Some([Some(meta), Some(vectors), Some(log)]) = opened.commit() else {
            return Err(err(
                &"no vector index here, and the filesystem is read-only",
            ));
        };
        let t = Tables { meta, vectors, log };
        {
            let txn = shared.read_txn().map_err(|e| damaged(e.into()))?;
            let found_model = get_meta(&shared, &t, &txn, "model").map_err(damaged)?;
            let found_dimension = get_meta(&shared, &t, &txn, "dimension")
                .map_err(damaged)?
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

    fn read_err(&self, e: ReadError) -> IndexError {
        read_error(&self.path, e)
    }

    /// Empties the index for a rebuild from `store_id`, for every process (they see the
    /// epoch change and drop what they had read).
    pub fn clear(&self, store_id: &str) -> Result<(), IndexError> {
        let t = self.tables;
        let mut txn = self.shared.env.write_txn().map_err(|e| self.write_err(e))?;
        let epoch = meta_number(&self.shared, &t, &txn, "epoch").map_err(|e| self.read_err(e))?;
        let run = |txn: &mut RwTxn| -> Result<(), heed::Error> {
            t.vectors.clear(txn)?;
            t.log.clear(txn)?;
            put_meta(&t, txn, "watermark", "0")?;
            put_meta(&t, txn, "corrections", "0")?;
            put_meta(&t, txn, "versions", "0")?;
            put_meta(&t, txn, "epoch", &epoch.saturating_add(1).to_string())?;
            put_meta(&t, txn, "text_version", &TEXT_VERSION.to_string())?;
            put_meta(&t, txn, "store_id", store_id)
        };
        run(&mut txn).map_err(|e| self.write_err(e))?;
        txn.commit().map_err(|e| self.write_err(e))?;
        self.refresh()
    }

    /// A write that failed: a full disk says so, naming the index.
    fn write_err(&self, e: heed::Error) -> IndexError {
        if lmdb::is_damage(&e) {
            return self.read_err(ReadError::Damaged(e.to_string()));
        }
        let full = matches!(&e, heed::Error::Io(io) if io.raw_os_error() == Some(libc::ENOSPC))
            || crate::store::is_disk_full(&self.path);
        IndexError::Vectors {
            path: self.path.clone(),
            message: if full {
                format!(
                    "no space left on the disk of {} ({e}): nothing of this catch-up was \
                     written; free some space and the next run catches up",
                    self.path.display()
                )
            } else {
                e.to_string()
            },
        }
    }

    /// Reads in the rows appended since this process last looked (all of them after a clear,
    /// checking every row of the index as it goes).
    fn refresh(&self) -> Result<(), IndexError> {
        let t = self.tables;
        let shared = &self.shared;
        let txn = shared.read_txn().map_err(|e| self.read_err(e.into()))?;
        let epoch = meta_number(shared, &t, &txn, "epoch").map_err(|e| self.read_err(e))?;
        let last = last_sequence(&t, &txn).map_err(|e| self.read_err(e))?;
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
        let fingerprints = if loaded.sequence == 0 {
            let rows = self.check_fingerprints(&txn)?;
            loaded.matrix.reserve(rows, self.dimension);
            Some(rows)
        } else {
            None
        };
        let rows = t
            .log
            .range(&txn, &range)
            .map_err(|e| self.read_err(e.into()))?;
        for row in rows {
            let (key, bytes) = row.map_err(|e| self.read_err(e.into()))?;
            let stored = self.decode_into(key, bytes, &mut vector)?;
            loaded.matrix.push(&stored, &vector);
            read += 1;
            if read.is_multiple_of(RELEASE_AFTER_ROWS) {
                // Each stored vector is read once here, to quantise it; searches read back
                // only their few candidates, so the pages need not stay resident.
                self.shared.release_mapped_pages();
            }
        }
        if let Some(fingerprints) = fingerprints
            && (read != fingerprints || read != loaded.matrix.fingerprints.len())
        {
            // Start from scratch on the next look rather than keep a matrix known to be wrong.
            *loaded = Loaded::default();
            return Err(self.read_err(ReadError::Damaged(format!(
                "its log holds {read} rows for {fingerprints} fingerprints"
            ))));
        }
        loaded.sequence = last;
        if read >= RELEASE_AFTER_ROWS {
            self.shared.release_mapped_pages();
        }
        Ok(())
    }

    /// Checks every row of the fingerprint table (inside the file, its checksum, the key
    /// order, the count its header gives); returns how many there are.
    fn check_fingerprints(&self, txn: &RoTxn) -> Result<usize, IndexError> {
        let t = &self.tables;
        let expected = t.vectors.len(txn).map_err(|e| self.read_err(e.into()))?;
        let mut previous: Option<&[u8]> = None;
        let mut n = 0u64;
        for row in t.vectors.iter(txn).map_err(|e| self.read_err(e.into()))? {
            let (key, stored) = row.map_err(|e| self.read_err(e.into()))?;
            open_sealed(&self.shared, key, stored).map_err(|e| self.read_err(e))?;
            if previous.is_some_and(|p| p >= key) {
                return Err(self.read_err(ReadError::Damaged(
                    "its fingerprints are out of order".into(),
                )));
            }
            previous = Some(key);
            n += 1;
        }
        if n != expected {
            return Err(self.read_err(ReadError::Damaged(format!(
                "a walk found {n} fingerprints where its header counts {expected}"
            ))));
        }
        Ok(n as usize)
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
        let get = |db: &Db, key: &[u8]| {
            get_sealed(&self.shared, db, txn, key).map_err(|e| self.read_err(e))
        };
        if let Some(bytes) = self
            .tables
            .log
            .get(txn, &key)
            .map_err(|e| self.read_err(e.into()))?
            && self.decode_into(&key, bytes, vector)?.fingerprint == fingerprint
        {
            return Ok(true);
        }
        let Some(now) = get(&self.tables.vectors, fingerprint.as_bytes())?
            .and_then(|v| <[u8; 8]>::try_from(v).ok())
        else {
            return Ok(false);
        };
        let Some(bytes) = self
            .tables
            .log
            .get(txn, &now)
            .map_err(|e| self.read_err(e.into()))?
        else {
            return Ok(false);
        };
        Ok(self.decode_into(&now, bytes, vector)?.fingerprint == fingerprint)
    }

    /// A stored row (`key` is its sequence), checked: its header, and its vector into
    /// `vector`. A damaged row is named by its sequence alone.
    fn decode_into<'b>(
        &self,
        key: &[u8],
        stored: &'b [u8],
        vector: &mut Vec<f32>,
    ) -> Result<StoredRow<'b>, IndexError> {
        let sequence = <[u8; 8]>::try_from(key).map(u64::from_be_bytes);
        let bad = |what: &str| {
            let row = match sequence {
                Ok(n) => format!("row #{n}"),
                Err(_) => format!("a row with a {}-byte key", key.len()),
            };
            self.read_err(ReadError::Damaged(format!("{row}: {what}")))
        };
        let sequence = sequence.map_err(|_| bad("malformed sequence"))?;
        let bytes = open_sealed(&self.shared, key, stored).map_err(|e| match e {
            ReadError::Damaged(why) => bad(&why),
            other => self.read_err(other),
        })?;
        let (len, rest) = bytes
            .split_first_chunk::<4>()
            .ok_or_else(|| bad("too short"))?;
        let len = u32::from_le_bytes(*len) as usize;
        if Some(rest.len()) != len.checked_add(16 + 4 * self.dimension) {
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
        let txn = self
            .shared
            .read_txn()
            .map_err(|e| self.read_err(e.into()))?;
        Ok(get_sealed(
            &self.shared,
            &self.tables.vectors,
            &txn,
            fingerprint.as_bytes(),
        )
        .map_err(|e| self.read_err(e))?
        .is_some())
    }

    /// The stored f32 vector of each of `fingerprints`, `None` where there is none.
    pub fn stored_vectors(
        &self,
        fingerprints: &[&str],
    ) -> Result<Vec<Option<Vec<f32>>>, IndexError> {
        let txn = self
            .shared
            .read_txn()
            .map_err(|e| self.read_err(e.into()))?;
        let mut out = Vec::with_capacity(fingerprints.len());
        for fp in fingerprints {
            let mut vector = Vec::with_capacity(self.dimension);
            // Sequence 0 is no row's: the row is found through the fingerprint.
            out.push(
                self.stored_vector(&txn, 0, fp, &mut vector)?
                    .then_some(vector),
            );
        }
        Ok(out)
    }

    /// The store ingest sequence this index has read up to.
    pub fn watermark(&self) -> Result<u64, IndexError> {
        let txn = self
            .shared
            .read_txn()
            .map_err(|e| self.read_err(e.into()))?;
        meta_number(&self.shared, &self.tables, &txn, "watermark").map_err(|e| self.read_err(e))
    }

    /// Held while catching the index up, so two processes never embed the same episodes.
    pub fn catch_up_guard(&self) -> Result<WriterGuard, IndexError> {
        self.lock
            .acquire(WriterLock::default_wait())
            .map_err(|e| self.err(&e))
    }

    /// Adds rows (upserting by fingerprint) and advances the watermark in one transaction.
    pub fn append(&self, rows: &[VectorRow], watermark: u64) -> Result<(), IndexError> {
        self.write_rows(rows, &[("watermark", watermark)], false)
    }

    /// The store's correction log read up to ([`super::versions`]).
    pub fn corrections_read(&self) -> Result<u64, IndexError> {
        self.meta("corrections")
    }

    /// How many rows hold corrected texts (the others, one an episode, the texts as first
    /// written).
    pub fn versions(&self) -> Result<u64, IndexError> {
        self.meta("versions")
    }

    fn meta(&self, key: &str) -> Result<u64, IndexError> {
        let txn = self
            .shared
            .read_txn()
            .map_err(|e| self.read_err(e.into()))?;
        meta_number(&self.shared, &self.tables, &txn, key).map_err(|e| self.read_err(e))
    }

    /// Adds the rows of corrected texts (keyed by [`super::versions::version_key`]) and
    /// advances the correction log's watermark in one transaction.
    pub fn append_versions(&self, rows: &[VectorRow], corrections: u64) -> Result<(), IndexError> {
        self.write_rows(rows, &[("corrections", corrections)], true)
    }

    /// Upserts `rows` and sets the `numbers` in the meta table, in one transaction; counts the
    /// new rows in `versions` when they are versions.
    fn write_rows(
        &self,
        rows: &[VectorRow],
        numbers: &[(&str, u64)],
        versions: bool,
    ) -> Result<(), IndexError> {
        for r in rows {
            if r.vector.len() != self.dimension {
                return Err(IndexError::Dimension {
                    expected: self.dimension,
                    got: r.vector.len(),
                });
            }
        }
        let t = self.tables;
        let mut txn = self.shared.env.write_txn().map_err(|e| self.write_err(e))?;
        let shared = &self.shared;
        let run = |txn: &mut RwTxn| -> Result<(), IndexError> {
            let mut sequence = last_sequence(&t, txn).map_err(|e| self.read_err(e))?;
            let mut bytes = Vec::with_capacity(32 + 4 * self.dimension);
            let mut added = 0u64;
            for r in rows {
                let fp = r.fingerprint.as_bytes();
                let earlier = get_sealed(shared, &t.vectors, txn, fp)
                    .map_err(|e| self.read_err(e))?
                    .map(<[u8]>::to_vec);
                match earlier {
                    Some(earlier) => {
                        t.log.delete(txn, &earlier).map_err(|e| self.write_err(e))?;
                    }
                    None => added += 1,
                }
                sequence += 1;
                encode_row(&mut bytes, r).map_err(|e| self.err(&e))?;
                let key = sequence.to_be_bytes();
                t.log
                    .put_with_flags(txn, PutFlags::APPEND, &key, &seal::sealed(&key, &bytes))
                    .map_err(|e| self.write_err(e))?;
                put_sealed(&t.vectors, txn, fp, &key).map_err(|e| self.write_err(e))?;
            }
            if versions {
                let held =
                    meta_number(shared, &t, txn, "versions").map_err(|e| self.read_err(e))?;
                put_meta(&t, txn, "versions", &(held + added).to_string())
                    .map_err(|e| self.write_err(e))?;
            }
            for (key, value) in numbers {
                put_meta(&t, txn, key, &value.to_string()).map_err(|e| self.write_err(e))?;
            }
            Ok(())
        };
        run(&mut txn)?;
        txn.commit().map_err(|e| self.write_err(e))?;
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
        let txn = self
            .shared
            .read_txn()
            .map_err(|e| self.read_err(e.into()))?;
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
