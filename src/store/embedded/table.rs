//! One table of the embedded store: an LMDB database whose values are sealed (each ends in a
//! checksum of its key and bytes, [`crate::lmdb::seal`]) and checked on every read. LMDB
//! trusts its pages; this does not: a value is checked to lie inside the file before it is
//! read, its checksum before it is used, and a scan checks that keys come in order and that it
//! found as many rows as the table's header counts. What fails is a
//! [`StoreError::Corrupt`] naming the table and the key, never data.

use std::ops::{Bound, RangeBounds};

use heed::types::Bytes;
use heed::{Database, RoTxn, RwTxn};

use super::{backend, keys};
use crate::lmdb::{Mapped, seal};
use crate::store::StoreError;

pub type Db = Database<'static, Bytes, Bytes>;

#[derive(Clone, Copy)]
pub struct Table {
    name: &'static str,
    db: Db,
    /// Values carry checksums (schema 4); a migration reads older tables unsealed.
    sealed: bool,
    /// Keys have duplicate values, sorted (an index).
    duplicates: bool,
    mapped: Option<&'static Mapped>,
}

/// A range's bounds, owned.
type Span = (Bound<Vec<u8>>, Bound<Vec<u8>>);

/// A row as stored: its key and its value (unsealed).
pub type Row<'t> = (&'t [u8], &'t [u8]);

type Inner<'t> = Box<dyn Iterator<Item = heed::Result<(&'t [u8], &'t [u8])>> + 't>;

impl Table {
    pub fn new(
        name: &'static str,
        db: Db,
        duplicates: bool,
        mapped: Option<&'static Mapped>,
    ) -> Self {
        Table {
            name,
            db,
            sealed: true,
            duplicates,
            mapped,
        }
    }

    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The same table read and written without checksums, as stores before schema 4 hold it.
    pub fn unsealed(mut self) -> Self {
        self.sealed = false;
        self
    }

    /// The same table with checksums.
    pub fn sealed(mut self) -> Self {
        self.sealed = true;
        self
    }

    /// The LMDB database underneath, for migrations that rewrite raw rows.
    pub fn raw(&self) -> Db {
        self.db
    }

    pub fn corrupt(&self, key: &[u8], message: impl std::fmt::Display) -> StoreError {
        StoreError::Corrupt {
            table: self.name,
            key: keys::describe(self.name, key),
            message: message.to_string(),
        }
    }

    /// A stored row, its value checked and unsealed.
    pub fn open<'t>(&self, key: &'t [u8], stored: &'t [u8]) -> Result<Row<'t>, StoreError> {
        let inside = |bytes: &[u8]| self.mapped.is_none_or(|m| m.holds(bytes));
        if !inside(key) {
            return Err(StoreError::Corrupt {
                table: self.name,
                key: format!("({} bytes)", key.len()),
                message: "a key that runs past the end of the file".into(),
            });
        }
        if !inside(stored) {
            return Err(self.corrupt(key, "a value that runs past the end of the file"));
        }
        if !self.sealed {
            return Ok((key, stored));
        }
        seal::unseal(key, stored)
            .map(|value| (key, value))
            .map_err(|e| self.corrupt(key, e))
    }

    fn seal(&self, key: &[u8], value: &[u8]) -> Vec<u8> {
        if self.sealed {
            seal::sealed(key, value)
        } else {
            value.to_vec()
        }
    }

    pub fn get<'t>(&self, txn: &'t RoTxn, key: &[u8]) -> Result<Option<&'t [u8]>, StoreError> {
        let Some(stored) = self.db.get(txn, key).map_err(backend)? else {
            self.verify_absent(txn, key)?;
            return Ok(None);
        };
        if !self.mapped.is_none_or(|m| m.holds(stored)) {
            return Err(self.corrupt(key, "a value that runs past the end of the file"));
        }
        if !self.sealed {
            return Ok(Some(stored));
        }
        seal::unseal(key, stored)
            .map(Some)
            .map_err(|e| self.corrupt(key, e))
    }

    pub fn contains(&self, txn: &RoTxn, key: &[u8]) -> Result<bool, StoreError> {
        Ok(self.get(txn, key)?.is_some())
    }

    pub fn put(&self, txn: &mut RwTxn, key: &[u8], value: &[u8]) -> Result<(), StoreError> {
        self.db
            .put(txn, key, &self.seal(key, value))
            .map_err(backend)
    }

    /// Removes one value of a key of an index; `false` when it was not there.
    pub fn delete_one_duplicate(
        &self,
        txn: &mut RwTxn,
        key: &[u8],
        value: &[u8],
    ) -> Result<bool, StoreError> {
        self.db
            .delete_one_duplicate(txn, key, &self.seal(key, value))
            .map_err(backend)
    }

    pub fn clear(&self, txn: &mut RwTxn) -> Result<(), StoreError> {
        self.db.clear(txn).map_err(backend)
    }

    /// A key the tree says is absent, checked from both sides: the nearest keys above and below
    /// it must be above and below it. A garbled branch page sends a lookup to the wrong leaf,
    /// where a key that is there is not found; the neighbours a second descent finds give it
    /// away, so a damaged page is an error, never a record that silently went missing.
    fn verify_absent(&self, txn: &RoTxn, key: &[u8]) -> Result<(), StoreError> {
        let misrouted = |found: &[u8], above: bool| {
            if !self.inside(found) {
                return true;
            }
            if above { found <= key } else { found >= key }
        };
        if let Some((found, _)) = self
            .db
            .get_greater_than_or_equal_to(txn, key)
            .map_err(backend)?
            && misrouted(found, true)
        {
            return Err(self.corrupt(key, "a lookup went astray (a garbled page of the tree)"));
        }
        if let Some((found, _)) = self.db.get_lower_than(txn, key).map_err(backend)?
            && misrouted(found, false)
        {
            return Err(self.corrupt(key, "a lookup went astray (a garbled page of the tree)"));
        }
        Ok(())
    }

    fn inside(&self, bytes: &[u8]) -> bool {
        self.mapped.is_none_or(|m| m.holds(bytes))
    }

    /// Rows the table's header counts (every value of an index).
    pub fn len(&self, txn: &RoTxn) -> Result<u64, StoreError> {
        self.db.len(txn).map_err(backend)
    }

    pub fn last<'t>(&self, txn: &'t RoTxn) -> Result<Option<Row<'t>>, StoreError> {
        match self.db.last(txn).map_err(backend)? {
            Some((k, v)) => self.open(k, v).map(Some),
            None => Ok(None),
        }
    }

    /// Every row, in key order; the count is checked against the header at the end.
    pub fn iter<'t>(&self, txn: &'t RoTxn) -> Result<Rows<'t>, StoreError> {
        let expected = self.len(txn)?;
        let inner: Inner<'t> = Box::new(self.db.iter(txn).map_err(backend)?);
        Ok(self.rows(inner, true, Some(expected)))
    }

    /// Every row, last key first; the count is checked against the header at the end.
    pub fn rev_iter<'t>(&self, txn: &'t RoTxn) -> Result<Rows<'t>, StoreError> {
        let expected = self.len(txn)?;
        let inner: Inner<'t> = Box::new(self.db.rev_iter(txn).map_err(backend)?);
        Ok(self.rows(inner, false, Some(expected)))
    }

    /// The rows of `range`, in key order; where it starts is checked as a lookup is (see
    /// [`Self::verify_absent`]), and every row is checked to lie inside it.
    pub fn range<'t, R: RangeBounds<[u8]>>(
        &self,
        txn: &'t RoTxn,
        range: &R,
    ) -> Result<Rows<'t>, StoreError> {
        self.verify_start(txn, range)?;
        let inner: Inner<'t> = Box::new(self.db.range(txn, range).map_err(backend)?);
        let mut rows = self.rows(inner, true, None);
        rows.bounds = Some(bounds_of(range));
        Ok(rows)
    }

    pub fn rev_range<'t, R: RangeBounds<[u8]>>(
        &self,
        txn: &'t RoTxn,
        range: &R,
    ) -> Result<Rows<'t>, StoreError> {
        let inner: Inner<'t> = Box::new(self.db.rev_range(txn, range).map_err(backend)?);
        let mut rows = self.rows(inner, false, None);
        rows.bounds = Some(bounds_of(range));
        Ok(rows)
    }

    /// The nearest key below a range's start must be below it: otherwise the descent to the
    /// start went astray, and rows of the range would be missed without a word.
    fn verify_start<R: RangeBounds<[u8]>>(&self, txn: &RoTxn, range: &R) -> Result<(), StoreError> {
        let start = match range.start_bound() {
            Bound::Included(k) | Bound::Excluded(k) => k,
            Bound::Unbounded => return Ok(()),
        };
        if let Some((below, _)) = self.db.get_lower_than(txn, start).map_err(backend)?
            && (!self.inside(below) || below >= start)
        {
            return Err(self.corrupt(start, "a range went astray (a garbled page of the tree)"));
        }
        Ok(())
    }

    /// The values of one key of an index, in order.
    pub fn duplicates<'t>(&self, txn: &'t RoTxn, key: &[u8]) -> Result<Rows<'t>, StoreError> {
        let inner: Inner<'t> = match self.db.get_duplicates(txn, key).map_err(backend)? {
            Some(iter) => Box::new(iter),
            None => {
                self.verify_absent(txn, key)?;
                Box::new(std::iter::empty())
            }
        };
        Ok(self.rows(inner, true, None))
    }

    fn rows<'t>(&self, inner: Inner<'t>, forward: bool, expected: Option<u64>) -> Rows<'t> {
        Rows {
            table: *self,
            inner,
            forward,
            expected,
            bounds: None,
            seen: 0,
            previous: None,
            done: false,
        }
    }
}

fn within((start, end): &Span, key: &[u8]) -> bool {
    let above = match start {
        Bound::Included(s) => key >= s.as_slice(),
        Bound::Excluded(s) => key > s.as_slice(),
        Bound::Unbounded => true,
    };
    let below = match end {
        Bound::Included(e) => key <= e.as_slice(),
        Bound::Excluded(e) => key < e.as_slice(),
        Bound::Unbounded => true,
    };
    above && below
}

fn bounds_of<R: RangeBounds<[u8]>>(range: &R) -> Span {
    let own = |b: Bound<&[u8]>| match b {
        Bound::Included(k) => Bound::Included(k.to_vec()),
        Bound::Excluded(k) => Bound::Excluded(k.to_vec()),
        Bound::Unbounded => Bound::Unbounded,
    };
    (own(range.start_bound()), own(range.end_bound()))
}

/// Rows of a table, each checked: inside the file, its checksum, and its place in the order
/// (a garbled page can repeat or reorder rows). A bad row is an error and the walk goes on
/// after it; an error of LMDB's own (a page it cannot use) ends the walk.
pub struct Rows<'t> {
    table: Table,
    inner: Inner<'t>,
    forward: bool,
    expected: Option<u64>,
    /// A range's bounds: every row must lie inside them.
    bounds: Option<Span>,
    seen: u64,
    /// The last row as stored (sealed), which is the order LMDB keeps.
    previous: Option<Row<'t>>,
    done: bool,
}

impl<'t> Iterator for Rows<'t> {
    type Item = Result<Row<'t>, StoreError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let (key, stored) = match self.inner.next() {
            Some(Ok(row)) => row,
            Some(Err(e)) => {
                self.done = true;
                return Some(Err(backend(e)));
            }
            None => {
                self.done = true;
                return match self.expected {
                    Some(n) if n != self.seen => Some(Err(StoreError::Corrupt {
                        table: self.table.name,
                        key: "(the whole table)".into(),
                        message: format!(
                            "a walk of it found {} rows where its header counts {n}",
                            self.seen
                        ),
                    })),
                    _ => None,
                };
            }
        };
        self.seen += 1;
        let t = &self.table;
        let row = match t.open(key, stored) {
            Ok(row) => row,
            Err(e) => return Some(Err(e)),
        };
        if let Some(bounds) = &self.bounds
            && !within(bounds, key)
        {
            return Some(Err(t.corrupt(
                key,
                "a row outside the range asked for (a garbled page of the tree)",
            )));
        }
        if let Some(previous) = self.previous.replace((key, stored)) {
            let order = if t.duplicates {
                previous.cmp(&(key, stored))
            } else {
                previous.0.cmp(key)
            };
            let expected = if self.forward {
                std::cmp::Ordering::Less
            } else {
                std::cmp::Ordering::Greater
            };
            if order != expected {
                return Some(Err(t.corrupt(
                    key,
                    format!(
                        "out of order after {} (a garbled page repeats or reorders rows)",
                        keys::describe(t.name, previous.0)
                    ),
                )));
            }
        }
        Some(Ok(row))
    }
}
