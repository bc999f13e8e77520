//! The embedded vector index: one redb file per embedding model, recording the model and
//! dimension, loaded into one contiguous matrix for exact cosine search.

use super::sync::TEXT_VERSION;
use std::cmp::{Ordering, Reverse};
use std::collections::{BinaryHeap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::RwLock;

use redb::{Database, ReadableDatabase, ReadableTable, TableDefinition};

use super::IndexError;
use crate::model::{AsOf, Timestamp};

const META: TableDefinition<&str, &str> = TableDefinition::new("meta");
/// fingerprint -> known_at ms, valid_from ms, then the vector as little-endian f32
const VECTORS: TableDefinition<&str, &[u8]> = TableDefinition::new("vectors");

/// One vector and the times that decide whether an as-of query may see it.
pub struct VectorRow {
    pub fingerprint: String,
    pub ingested_at: Timestamp,
    pub t_valid: Timestamp,
    pub concluded_at: Timestamp,
    pub vector: Vec<f32>,
}

#[derive(Default)]
struct Matrix {
    positions: HashMap<String, usize>,
    fingerprints: Vec<String>,
    ingested_at: Vec<i64>,
    t_valid: Vec<i64>,
    data: Vec<f32>,
}

impl Matrix {
    fn push(&mut self, fingerprint: &str, ingested_at: i64, t_valid: i64, vector: &[f32]) {
        if let Some(&i) = self.positions.get(fingerprint) {
            let d = vector.len();
            self.ingested_at[i] = ingested_at;
            self.t_valid[i] = t_valid;
            self.data[i * d..(i + 1) * d].copy_from_slice(vector);
            return;
        }
        self.positions
            .insert(fingerprint.to_string(), self.fingerprints.len());
        self.fingerprints.push(fingerprint.to_string());
        self.ingested_at.push(ingested_at);
        self.t_valid.push(t_valid);
        self.data.extend_from_slice(vector);
    }
}

pub struct VectorIndex {
    path: PathBuf,
    model: String,
    dimension: usize,
    db: Database,
    matrix: RwLock<Matrix>,
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
fn dot(a: &[f32], b: &[f32]) -> f32 {
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

/// The best `limit` rows of `range` visible at the as-of point.
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
        let score = dot(&m.data[i * dimension..(i + 1) * dimension], query);
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

pub fn index_path(dir: &Path, model: &str) -> PathBuf {
    dir.join(format!("vectors-{}.redb", slug(model)))
}

impl VectorIndex {
    /// Opens (creating if needed) the index for `model` in `dir`; refuses an index built by
    /// another model or at another dimension.
    pub fn open(dir: &Path, model: &str, dimension: usize) -> Result<Self, IndexError> {
        let path = index_path(dir, model);
        let err = |e: &dyn std::fmt::Display| IndexError::Vectors {
            path: path.clone(),
            message: e.to_string(),
        };
        std::fs::create_dir_all(dir).map_err(|e| err(&e))?;
        let db = Database::create(&path).map_err(|e| err(&e))?;
        let (found_model, found_dimension, found_text) = {
            let read = db.begin_read().map_err(|e| err(&e))?;
            match read.open_table(META) {
                Ok(meta) => {
                    let get = |k: &str| -> Result<Option<String>, IndexError> {
                        Ok(meta
                            .get(k)
                            .map_err(|e| err(&e))?
                            .map(|v| v.value().to_string()))
                    };
                    (get("model")?, get("dimension")?, get("text_version")?)
                }
                Err(redb::TableError::TableDoesNotExist(_)) => (None, None, None),
                Err(e) => return Err(err(&e)),
            }
        };
        let current_text = TEXT_VERSION.to_string();
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
                if found_text.as_deref() != Some(current_text.as_str()) {
                    // Vectors of an older episode text: embed everything again.
                    let txn = db.begin_write().map_err(|e| err(&e))?;
                    {
                        txn.delete_table(VECTORS).map_err(|e| err(&e))?;
                        txn.open_table(VECTORS).map_err(|e| err(&e))?;
                        let mut meta = txn.open_table(META).map_err(|e| err(&e))?;
                        meta.insert("watermark", "0").map_err(|e| err(&e))?;
                        meta.insert("text_version", current_text.as_str())
                            .map_err(|e| err(&e))?;
                    }
                    txn.commit().map_err(|e| err(&e))?;
                }
            }
            _ => {
                let txn = db.begin_write().map_err(|e| err(&e))?;
                {
                    let mut meta = txn.open_table(META).map_err(|e| err(&e))?;
                    meta.insert("model", model).map_err(|e| err(&e))?;
                    meta.insert("dimension", dimension.to_string().as_str())
                        .map_err(|e| err(&e))?;
                    meta.insert("watermark", "0").map_err(|e| err(&e))?;
                    meta.insert("text_version", current_text.as_str())
                        .map_err(|e| err(&e))?;
                    txn.open_table(VECTORS).map_err(|e| err(&e))?;
                }
                txn.commit().map_err(|e| err(&e))?;
            }
        }
        let index = VectorIndex {
            path,
            model: model.to_string(),
            dimension,
            db,
            matrix: RwLock::new(Matrix::default()),
        };
        index.load()?;
        Ok(index)
    }

    fn err(&self, e: &dyn std::fmt::Display) -> IndexError {
        IndexError::Vectors {
            path: self.path.clone(),
            message: e.to_string(),
        }
    }

    fn load(&self) -> Result<(), IndexError> {
        let read = self.db.begin_read().map_err(|e| self.err(&e))?;
        let table = read.open_table(VECTORS).map_err(|e| self.err(&e))?;
        let mut m = Matrix::default();
        for row in table.iter().map_err(|e| self.err(&e))? {
            let (k, v) = row.map_err(|e| self.err(&e))?;
            let (known, valid, vector) = self.decode(v.value())?;
            m.push(k.value(), known, valid, &vector);
        }
        *self.matrix.write().map_err(|e| self.err(&e))? = m;
        Ok(())
    }

    fn decode(&self, bytes: &[u8]) -> Result<(i64, i64, Vec<f32>), IndexError> {
        if bytes.len() != 16 + 4 * self.dimension {
            return Err(self.err(&format!("row of {} bytes", bytes.len())));
        }
        let word = |at: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&bytes[at..at + 8]);
            i64::from_le_bytes(b)
        };
        let vector = bytes[16..]
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        Ok((word(0), word(8), vector))
    }

    pub fn model(&self) -> &str {
        &self.model
    }

    pub fn dimension(&self) -> usize {
        self.dimension
    }

    pub fn len(&self) -> usize {
        self.matrix.read().map_or(0, |m| m.fingerprints.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The store ingest sequence this index has read up to.
    pub fn watermark(&self) -> Result<u64, IndexError> {
        let read = self.db.begin_read().map_err(|e| self.err(&e))?;
        let meta = read.open_table(META).map_err(|e| self.err(&e))?;
        let value = meta.get("watermark").map_err(|e| self.err(&e))?;
        Ok(value.and_then(|v| v.value().parse().ok()).unwrap_or(0))
    }

    /// Adds rows and advances the watermark in one transaction.
    pub fn append(&self, rows: &[VectorRow], watermark: u64) -> Result<(), IndexError> {
        for r in rows {
            if r.vector.len() != self.dimension {
                return Err(IndexError::Dimension {
                    expected: self.dimension,
                    got: r.vector.len(),
                });
            }
        }
        let txn = self.db.begin_write().map_err(|e| self.err(&e))?;
        {
            let mut table = txn.open_table(VECTORS).map_err(|e| self.err(&e))?;
            let mut bytes = Vec::with_capacity(16 + 4 * self.dimension);
            for r in rows {
                bytes.clear();
                bytes.extend_from_slice(&r.ingested_at.millis().to_le_bytes());
                bytes.extend_from_slice(&r.t_valid.millis().to_le_bytes());
                for x in &r.vector {
                    bytes.extend_from_slice(&x.to_le_bytes());
                }
                table
                    .insert(r.fingerprint.as_str(), bytes.as_slice())
                    .map_err(|e| self.err(&e))?;
            }
            let mut meta = txn.open_table(META).map_err(|e| self.err(&e))?;
            meta.insert("watermark", watermark.to_string().as_str())
                .map_err(|e| self.err(&e))?;
        }
        txn.commit().map_err(|e| self.err(&e))?;
        let mut m = self.matrix.write().map_err(|e| self.err(&e))?;
        for r in rows {
            m.push(
                &r.fingerprint,
                r.ingested_at.millis(),
                r.t_valid.millis(),
                &r.vector,
            );
        }
        Ok(())
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
        let m = self.matrix.read().map_err(|e| self.err(&e))?;
        let rows = m.fingerprints.len();
        // Two halves on two threads once the scan is long enough to pay for a thread.
        let heap = if rows >= PARALLEL_ROWS {
            let mid = rows / 2;
            let (a, b) = std::thread::scope(|scope| {
                let left = scope.spawn(|| scan(&m, self.dimension, query, as_of, limit, 0..mid));
                let right = scan(&m, self.dimension, query, as_of, limit, mid..rows);
                (left.join(), right)
            });
            let mut merged = a.map_err(|_| self.err(&"search thread panicked"))?;
            for item in b {
                merged.push(item);
                if merged.len() > limit {
                    merged.pop();
                }
            }
            merged
        } else {
            scan(&m, self.dimension, query, as_of, limit, 0..rows)
        };
        let mut hits: Vec<Scored> = heap
            .into_iter()
            .map(|Reverse(HeapItem(score, i, _))| Scored {
                fingerprint: m.fingerprints[i].clone(),
                score,
            })
            .collect();
        hits.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then_with(|| a.fingerprint.cmp(&b.fingerprint))
        });
        Ok(hits)
    }
}
