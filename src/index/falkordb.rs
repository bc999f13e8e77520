//! The semantic leg inside FalkorDB: episode embeddings as a vector property of
//! `MemoryEpisode` under FalkorDB's own cosine vector index, so a FalkorDB-only deployment
//! has all three legs. A `StrataVectorIndex` node records the model, dimension and watermark.

use std::path::PathBuf;

use crate::index::vectors::{Scored, VectorRow};
use crate::index::{IndexError, VectorStore};
use crate::model::AsOf;
use crate::store::falkordb::{FalkorStore, FalkorUrl, Param, count, cypher};

pub struct FalkorVectors {
    store: FalkorStore,
    model: String,
    dimension: usize,
}

impl FalkorVectors {
    pub fn open(
        url: &FalkorUrl,
        model: &str,
        dimension: usize,
        runtime: Option<tokio::runtime::Handle>,
    ) -> Result<Self, IndexError> {
        let store = FalkorStore::connect_on(url, runtime)?;
        let dim = Param::Int(i64::try_from(dimension).unwrap_or(i64::MAX));
        let meta = store.query(cypher::VECTOR_META, &[])?;
        match meta.first() {
            Some(row) => {
                let (found_model, found_dimension) = (row.string(0)?, row.int(1)?);
                if found_model != model || usize::try_from(found_dimension).ok() != Some(dimension)
                {
                    return Err(IndexError::EmbedderMismatch {
                        path: PathBuf::from(url.to_string()),
                        found_model,
                        found_dimension: usize::try_from(found_dimension).unwrap_or(0),
                        model: model.to_string(),
                        dimension,
                    });
                }
            }
            None => {
                store.query(
                    cypher::VECTOR_META_CREATE,
                    &[("model", Param::from(model)), ("dim", dim.clone())],
                )?;
            }
        }
        let indexed = store.indexed()?;
        let has = |label: &str, property: &str, kind: &str| {
            indexed.contains(&(label.to_string(), property.to_string(), kind.to_string()))
        };
        for (label, property, kind, create) in [
            (
                "MemoryEpisode",
                "embedding",
                "VECTOR",
                cypher::CREATE_VECTOR_INDEX,
            ),
            (
                "StrataTextVersion",
                "embedding",
                "VECTOR",
                cypher::CREATE_VERSION_VECTOR_INDEX,
            ),
            (
                "StrataTextVersion",
                "key",
                "RANGE",
                cypher::CREATE_VERSION_KEY_INDEX,
            ),
        ] {
            if has(label, property, kind) {
                continue;
            }
            if let Err(e) = store.query(create, &[("dim", dim.clone())]) {
                // Another process created it meanwhile.
                if !e.to_string().contains("already indexed") {
                    return Err(e.into());
                }
            }
        }
        Ok(FalkorVectors {
            store,
            model: model.to_string(),
            dimension,
        })
    }
}

impl FalkorVectors {
    /// A count the index's meta node keeps in `column` of `VECTOR_META` (0 when unset).
    fn meta_count(&self, column: usize) -> Result<u64, IndexError> {
        let rows = self.store.query(cypher::VECTOR_META, &[])?;
        Ok(rows
            .first()
            .map(|r| r.opt_int(column))
            .transpose()?
            .flatten()
            .map_or(0, |n| u64::try_from(n).unwrap_or(0)))
    }

    /// Writes `rows` with `statement`, which also records the watermark it is given.
    fn write(
        &self,
        statement: &'static str,
        rows: &[VectorRow],
        (name, watermark): (&'static str, u64),
    ) -> Result<(), IndexError> {
        self.store.query(
            statement,
            &[
                ("rows", self.rows(rows)?),
                (
                    name,
                    Param::Int(i64::try_from(watermark).unwrap_or(i64::MAX)),
                ),
            ],
        )?;
        Ok(())
    }

    /// The rows as a query parameter: key, vector and the times the as-of filter reads.
    fn rows(&self, rows: &[VectorRow]) -> Result<Param, IndexError> {
        let mut list = Vec::with_capacity(rows.len());
        for r in rows {
            if r.vector.len() != self.dimension {
                return Err(IndexError::Dimension {
                    expected: self.dimension,
                    got: r.vector.len(),
                });
            }
            list.push(Param::Map(vec![
                ("fp", Param::from(r.fingerprint.as_str())),
                ("k", Param::Int(r.ingested_at.millis())),
                ("t", Param::Int(r.t_valid.millis())),
                (
                    "v",
                    Param::List(
                        r.vector
                            .iter()
                            .map(|x| Param::Float(f64::from(*x)))
                            .collect(),
                    ),
                ),
            ]));
        }
        Ok(Param::List(list))
    }
}

/// A cell of a compact reply: `[type, value]`.
fn compact_cell(cell: &redis::Value) -> Option<(i64, &redis::Value)> {
    match cell {
        redis::Value::Array(pair) if pair.len() == 2 => match &pair[0] {
            redis::Value::Int(t) => Some((*t, &pair[1])),
            _ => None,
        },
        _ => None,
    }
}

fn compact_text(value: &redis::Value) -> Option<String> {
    match value {
        redis::Value::BulkString(b) => String::from_utf8(b.clone()).ok(),
        redis::Value::SimpleString(s) => Some(s.clone()),
        _ => None,
    }
}

/// FalkorDB's compact type of a `vecf32`.
const COMPACT_VECTOR_F32: i64 = 12;

/// A compact `vecf32`: each number as the shortest text that reads back as its f32.
fn compact_vector(cell: &redis::Value) -> Option<Vec<f32>> {
    let (kind, value) = compact_cell(cell)?;
    let redis::Value::Array(numbers) = value else {
        return None;
    };
    if kind != COMPACT_VECTOR_F32 {
        return None;
    }
    numbers
        .iter()
        .map(|n| compact_text(n)?.parse::<f64>().ok().map(|x| x as f32))
        .collect()
}

impl VectorStore for FalkorVectors {
    fn describe(&self) -> String {
        format!(
            "FalkorDB vector index of {} ({})",
            self.model,
            self.store.url()
        )
    }

    fn stored_vectors(&self, fingerprints: &[&str]) -> Result<Vec<Option<Vec<f32>>>, IndexError> {
        let fps = Param::List(fingerprints.iter().map(|f| Param::from(*f)).collect());
        let rows = self
            .store
            .query_compact(cypher::VECTORS_OF, &[("fps", fps)])?;
        let unreadable = |what: String| IndexError::Vectors {
            path: PathBuf::from(self.store.url().to_string()),
            message: what,
        };
        let mut found = std::collections::HashMap::new();
        for row in &rows {
            let redis::Value::Array(cells) = row else {
                return Err(unreadable(format!("expected a row, got {row:?}")));
            };
            let fingerprint = cells
                .first()
                .and_then(compact_cell)
                .and_then(|(_, v)| compact_text(v))
                .ok_or_else(|| unreadable(format!("a row without its fingerprint: {row:?}")))?;
            let vector = cells
                .get(1)
                .and_then(compact_vector)
                .filter(|v| v.len() == self.dimension)
                .ok_or_else(|| {
                    unreadable(format!(
                        "episode {fingerprint:?}'s embedding is not a vector of {} f32s",
                        self.dimension
                    ))
                })?;
            found.insert(fingerprint, vector);
        }
        Ok(fingerprints.iter().map(|f| found.remove(*f)).collect())
    }

    fn count(&self) -> Result<usize, IndexError> {
        let n = self.store.query(cypher::VECTOR_COUNT, &[])?.count()?;
        Ok(usize::try_from(n).unwrap_or(usize::MAX))
    }

    fn watermark(&self) -> Result<u64, IndexError> {
        self.meta_count(2)
    }

    fn append(&self, rows: &[VectorRow], watermark: u64) -> Result<(), IndexError> {
        self.write(cypher::VECTOR_APPEND, rows, ("watermark", watermark))
    }

    fn corrections_read(&self) -> Result<u64, IndexError> {
        self.meta_count(3)
    }

    fn append_versions(&self, rows: &[VectorRow], corrections: u64) -> Result<(), IndexError> {
        self.write(
            cypher::VERSION_VECTOR_APPEND,
            rows,
            ("corrections", corrections),
        )
    }

    /// The vectors live on the episodes of the graph itself, so they can never belong to
    /// another store or run ahead of it: there is nothing to clear.
    fn clear(&self, _store_id: &str) -> Result<(), IndexError> {
        Ok(())
    }

    fn search(&self, query: &[f32], as_of: &AsOf, limit: usize) -> Result<Vec<Scored>, IndexError> {
        if query.len() != self.dimension {
            return Err(IndexError::Dimension {
                expected: self.dimension,
                got: query.len(),
            });
        }
        if limit == 0 {
            return Ok(Vec::new());
        }
        let vector = Param::List(query.iter().map(|x| Param::Float(f64::from(*x))).collect());
        // The as-of filter runs after the kNN: ask for more until enough survive it or the
        // index has no more to give.
        let mut k = limit * 4;
        loop {
            let rows = self.store.query(
                cypher::VECTOR_SEARCH,
                &[
                    ("k", count(k)),
                    ("q", vector.clone()),
                    ("V", Param::Int(as_of.valid_at.millis())),
                    ("K", Param::Int(as_of.known_at.millis())),
                ],
            )?;
            let mut hits = Vec::new();
            let mut returned = 0;
            for row in rows.iter() {
                returned += 1;
                if row.int(2)? == 1 {
                    hits.push(Scored {
                        fingerprint: row.string(0)?,
                        // FalkorDB reports cosine distance.
                        score: (1.0 - row.float(1)?) as f32,
                    });
                }
            }
            if hits.len() >= limit || returned < k || k >= i32::MAX as usize {
                hits.sort_by(|a, b| {
                    b.score
                        .total_cmp(&a.score)
                        .then_with(|| a.fingerprint.cmp(&b.fingerprint))
                });
                hits.truncate(limit);
                return Ok(hits);
            }
            k = k.saturating_mul(4);
        }
    }
}
