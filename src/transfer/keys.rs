//! The episode keys of an export, (ingested_at, fingerprint), in order, in bounded memory:
//! keys are sorted in runs of [`RUN`], each run past the first spilled to a scratch file, and
//! the runs merged as they are read. Memory holds one run while collecting and one key per
//! run while merging, whatever the store's size.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};

use super::TransferError;
use crate::model::Timestamp;

/// Keys sorted in memory at a time: about 6 MB of them.
const RUN: usize = 100_000;

pub type Key = (Timestamp, String);

#[derive(Default)]
pub struct KeySorter {
    run: Vec<Key>,
    spilled: Vec<File>,
    /// Keys pushed (duplicates included).
    pushed: u64,
}

fn scratch_err(e: std::io::Error) -> TransferError {
    TransferError::Export(format!(
        "cannot write the scratch file of episode keys: {e}"
    ))
}

impl KeySorter {
    pub fn push(&mut self, key: Key) -> Result<(), TransferError> {
        self.run.push(key);
        self.pushed += 1;
        if self.run.len() >= RUN {
            self.spill()?;
        }
        Ok(())
    }

    fn spill(&mut self) -> Result<(), TransferError> {
        self.run.sort();
        self.run.dedup();
        let mut file = tempfile::tempfile().map_err(scratch_err)?;
        {
            let mut w = BufWriter::with_capacity(1 << 16, &mut file);
            for (at, fp) in self.run.drain(..) {
                let len = u32::try_from(fp.len()).map_err(|_| {
                    TransferError::Export(format!("fingerprint {fp:?} is too long"))
                })?;
                w.write_all(&at.millis().to_le_bytes())
                    .and_then(|()| w.write_all(&len.to_le_bytes()))
                    .and_then(|()| w.write_all(fp.as_bytes()))
                    .map_err(scratch_err)?;
            }
            w.flush().map_err(scratch_err)?;
        }
        file.seek(SeekFrom::Start(0)).map_err(scratch_err)?;
        self.spilled.push(file);
        Ok(())
    }

    /// How many keys were pushed (an upper bound of how many come out).
    pub fn pushed(&self) -> u64 {
        self.pushed
    }

    /// The keys in order, each once.
    pub fn sorted(mut self) -> Result<SortedKeys, TransferError> {
        if self.spilled.is_empty() {
            self.run.sort();
            self.run.dedup();
            return Ok(SortedKeys::InMemory(self.run.into_iter()));
        }
        if !self.run.is_empty() {
            self.spill()?;
        }
        let mut runs: Vec<BufReader<File>> = self
            .spilled
            .into_iter()
            .map(|f| BufReader::with_capacity(1 << 16, f))
            .collect();
        let mut heap = BinaryHeap::with_capacity(runs.len());
        for (i, run) in runs.iter_mut().enumerate() {
            if let Some(key) = read_key(run)? {
                heap.push(Reverse((key, i)));
            }
        }
        Ok(SortedKeys::Merged {
            runs,
            heap,
            last: None,
        })
    }
}

fn read_key(r: &mut BufReader<File>) -> Result<Option<Key>, TransferError> {
    let read_err =
        |e: std::io::Error| TransferError::Export(format!("cannot read back episode keys: {e}"));
    let mut at = [0u8; 8];
    match r.read_exact(&mut at) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(read_err(e)),
    }
    let mut len = [0u8; 4];
    r.read_exact(&mut len).map_err(read_err)?;
    let mut fp = vec![0u8; u32::from_le_bytes(len) as usize];
    r.read_exact(&mut fp).map_err(read_err)?;
    let fp = String::from_utf8(fp)
        .map_err(|e| TransferError::Export(format!("episode keys read back changed: {e}")))?;
    Ok(Some((Timestamp::from_millis(i64::from_le_bytes(at)), fp)))
}

pub enum SortedKeys {
    InMemory(std::vec::IntoIter<Key>),
    Merged {
        runs: Vec<BufReader<File>>,
        heap: BinaryHeap<Reverse<(Key, usize)>>,
        last: Option<Key>,
    },
}

impl SortedKeys {
    /// The next key, or `None` after the last.
    pub fn next_key(&mut self) -> Result<Option<Key>, TransferError> {
        match self {
            SortedKeys::InMemory(keys) => Ok(keys.next()),
            SortedKeys::Merged { runs, heap, last } => loop {
                let Some(Reverse((key, i))) = heap.pop() else {
                    return Ok(None);
                };
                if let Some(next) = read_key(&mut runs[i])? {
                    heap.push(Reverse((next, i)));
                }
                // The same key in two runs comes out once.
                if last.as_ref() != Some(&key) {
                    *last = Some(key.clone());
                    return Ok(Some(key));
                }
            },
        }
    }

    /// Up to `n` next keys.
    pub fn next_page(&mut self, n: usize) -> Result<Vec<Key>, TransferError> {
        let mut page = Vec::with_capacity(n);
        while page.len() < n {
            match self.next_key()? {
                Some(k) => page.push(k),
                None => break,
            }
        }
        Ok(page)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_spilled_in_runs_come_back_in_order_each_once() {
        let mut sorter = KeySorter::default();
        let n = RUN * 2 + 123;
        // Pseudo-random order, with every key pushed twice in different runs.
        let key = |i: usize| {
            let j = (i * 7919) % n;
            (Timestamp::from_millis((j / 3) as i64), format!("fp-{j}"))
        };
        for i in 0..n {
            sorter.push(key(i)).unwrap();
        }
        for i in (0..n).step_by(1000) {
            sorter.push(key(i)).unwrap();
        }
        let mut expected: Vec<Key> = (0..n).map(key).collect();
        expected.sort();
        let mut keys = sorter.sorted().unwrap();
        assert!(matches!(keys, SortedKeys::Merged { .. }));
        let mut got = Vec::new();
        loop {
            let page = keys.next_page(500).unwrap();
            if page.is_empty() {
                break;
            }
            got.extend(page);
        }
        assert_eq!(got, expected);
    }
}
