//! Decoding `GRAPH.QUERY` replies (the verbose form: scalars only, never nodes).

use redis::Value;

use crate::model::Timestamp;
use crate::store::StoreError;

pub struct Rows {
    rows: Vec<Vec<Value>>,
}

pub struct Row<'a> {
    cells: &'a [Value],
}

fn bad(message: String) -> StoreError {
    malformed(message)
}

/// A reply this Strata cannot read; the caller knows which server sent it.
pub(super) fn malformed(message: String) -> StoreError {
    StoreError::Malformed {
        server: "FalkorDB".into(),
        message,
    }
}

impl Rows {
    pub fn from_reply(reply: Value) -> Result<Rows, StoreError> {
        let parts = match reply {
            Value::Array(parts) => parts,
            Value::ServerError(e) => return Err(bad(format!("{e:?}"))),
            other => return Err(bad(format!("expected a result set, got {other:?}"))),
        };
        // [statistics] for queries that return nothing, else [header, rows, statistics].
        if parts.len() < 3 {
            return Ok(Rows { rows: Vec::new() });
        }
        let mut parts = parts.into_iter();
        let _header = parts.next();
        let rows = match parts.next() {
            Some(Value::Array(rows)) => rows
                .into_iter()
                .map(|r| match r {
                    Value::Array(cells) => Ok(cells),
                    other => Err(bad(format!("expected a row, got {other:?}"))),
                })
                .collect::<Result<Vec<_>, _>>()?,
            other => return Err(bad(format!("expected rows, got {other:?}"))),
        };
        Ok(Rows { rows })
    }

    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// These rows, then `more`'s.
    pub fn append(&mut self, more: Rows) {
        self.rows.extend(more.rows);
    }

    pub fn iter(&self) -> impl Iterator<Item = Row<'_>> {
        self.rows.iter().map(|cells| Row { cells })
    }

    /// Every row, decoded.
    pub fn decode<T>(
        &self,
        decode: impl Fn(&Row<'_>) -> Result<T, StoreError>,
    ) -> Result<Vec<T>, StoreError> {
        self.iter().map(|r| decode(&r)).collect()
    }

    /// The first column of the first row as a count (0 when there is none).
    pub fn count(&self) -> Result<u64, StoreError> {
        Ok(self
            .first()
            .map(|r| r.int(0))
            .transpose()?
            .map_or(0, |n| u64::try_from(n).unwrap_or(0)))
    }

    pub fn first(&self) -> Option<Row<'_>> {
        self.rows.first().map(|cells| Row { cells })
    }
}

impl Row<'_> {
    fn cell(&self, i: usize) -> Result<&Value, StoreError> {
        self.cells.get(i).ok_or_else(|| {
            bad(format!(
                "row has {} columns, wanted column {i}",
                self.cells.len()
            ))
        })
    }

    pub fn opt_string(&self, i: usize) -> Result<Option<String>, StoreError> {
        match self.cell(i)? {
            Value::Nil => Ok(None),
            Value::BulkString(b) => String::from_utf8(b.clone())
                .map(Some)
                .map_err(|e| bad(format!("column {i} is not UTF-8: {e}"))),
            Value::SimpleString(s) => Ok(Some(s.clone())),
            Value::Int(n) => Ok(Some(n.to_string())),
            other => Err(bad(format!("column {i}: expected a string, got {other:?}"))),
        }
    }

    pub fn string(&self, i: usize) -> Result<String, StoreError> {
        self.opt_string(i)?
            .ok_or_else(|| bad(format!("column {i} is null, expected a string")))
    }

    pub fn opt_int(&self, i: usize) -> Result<Option<i64>, StoreError> {
        match self.cell(i)? {
            Value::Nil => Ok(None),
            Value::Int(n) => Ok(Some(*n)),
            // Times written by other programs as floats still read as milliseconds.
            Value::BulkString(b) => std::str::from_utf8(b)
                .ok()
                .and_then(|s| s.parse::<f64>().ok())
                .filter(|x| x.is_finite())
                .map(|x| Some(x as i64))
                .ok_or_else(|| bad(format!("column {i}: expected an integer"))),
            other => Err(bad(format!(
                "column {i}: expected an integer, got {other:?}"
            ))),
        }
    }

    pub fn int(&self, i: usize) -> Result<i64, StoreError> {
        self.opt_int(i)?
            .ok_or_else(|| bad(format!("column {i} is null, expected an integer")))
    }

    pub fn time(&self, i: usize) -> Result<Timestamp, StoreError> {
        self.int(i).map(Timestamp::from_millis)
    }

    pub fn opt_time(&self, i: usize) -> Result<Option<Timestamp>, StoreError> {
        Ok(self.opt_int(i)?.map(Timestamp::from_millis))
    }

    pub fn float(&self, i: usize) -> Result<f64, StoreError> {
        match self.cell(i)? {
            Value::Int(n) => Ok(*n as f64),
            Value::Double(x) => Ok(*x),
            Value::BulkString(b) => std::str::from_utf8(b)
                .ok()
                .and_then(|s| s.parse().ok())
                .ok_or_else(|| bad(format!("column {i}: expected a number"))),
            Value::Nil => Ok(0.0),
            other => Err(bad(format!("column {i}: expected a number, got {other:?}"))),
        }
    }
}
