//! An LMDB file checked against its own meta pages before it is mapped: LMDB maps the whole
//! file and trusts it, so a page it believes in but the file no longer holds (a truncated
//! copy, a disk that lost its tail) ends the process with SIGBUS at the first read. Read with
//! `pread`, never through a map, so a damaged file can only fail this check.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// LMDB's file stamp and the one data version its 0.9 releases write.
const MAGIC: u32 = 0xBEEF_C0DE;
const DATA_VERSION: u32 = 1;
/// `P_META` in a page header's flags.
const P_META: u16 = 0x08;
/// No root: an empty tree.
const P_INVALID: u64 = u64::MAX;
/// The meta page's fields (64-bit layout): a 16-byte page header, then `MDB_meta`.
const FLAGS_AT: usize = 10;
const MAGIC_AT: usize = 16;
const VERSION_AT: usize = 20;
/// `mm_dbs[FREE_DBI]` and `mm_dbs[MAIN_DBI]`, 48 bytes each; the page size is the free
/// tree's `md_pad`, and each tree's root is its last 8 bytes.
const FREE_DB_AT: usize = 40;
const MAIN_DB_AT: usize = 88;
const DB_ROOT: usize = 40;
const LAST_PAGE_AT: usize = 136;
const TXNID_AT: usize = 144;
const META_BYTES: usize = 152;

/// What an LMDB file is, as far as its meta pages tell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    pub page_size: u64,
    /// The last page the newest meta says is in use.
    pub last_page: u64,
    pub txnid: u64,
}

impl Layout {
    /// The bytes the file must hold for every page the meta names.
    pub fn needed_bytes(&self) -> u64 {
        self.last_page
            .saturating_add(1)
            .saturating_mul(self.page_size)
    }
}

/// Why a file cannot be mapped safely.
#[derive(Debug, thiserror::Error)]
pub enum Damage {
    #[error(
        "{path} is {found} bytes, shorter than the {needed} bytes its meta page says it holds \
         ({pages} pages of {page_size} bytes): the file was cut short (a truncated copy, or a \
         disk that lost its end)"
    )]
    Short {
        path: PathBuf,
        found: u64,
        needed: u64,
        pages: u64,
        page_size: u64,
    },
    #[error("{path} is {found} bytes, too short to hold LMDB's two meta pages")]
    NoMeta { path: PathBuf, found: u64 },
    #[error("{path} is not an LMDB file its meta pages can vouch for: {why}")]
    BadMeta { path: PathBuf, why: String },
    #[error("cannot read {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    let mut w = [0u8; 4];
    w.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(w)
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(w)
}

/// One meta page's claims, or why it makes none.
fn read_meta(page: &[u8]) -> Result<(Layout, [u64; 2]), String> {
    if u16_at(page, FLAGS_AT) & P_META == 0 {
        return Err("a meta page is not marked as one".into());
    }
    if u32_at(page, MAGIC_AT) != MAGIC {
        return Err("a meta page lacks LMDB's magic number".into());
    }
    let version = u32_at(page, VERSION_AT);
    if version != DATA_VERSION {
        return Err(format!("data version {version}, expected {DATA_VERSION}"));
    }
    let page_size = u64::from(u32_at(page, FREE_DB_AT));
    if !page_size.is_power_of_two() || !(512..=65_536).contains(&page_size) {
        return Err(format!(
            "page size {page_size} is not a power of two in 512..65536"
        ));
    }
    let roots = [
        u64_at(page, FREE_DB_AT + DB_ROOT),
        u64_at(page, MAIN_DB_AT + DB_ROOT),
    ];
    Ok((
        Layout {
            page_size,
            last_page: u64_at(page, LAST_PAGE_AT),
            txnid: u64_at(page, TXNID_AT),
        },
        roots,
    ))
}

/// Checks `path` (an LMDB `data.mdb`) against the newest of its two meta pages, the one LMDB
/// will use: a known page size, roots inside the pages in use, and a file long enough for
/// all of them. `Ok(None)`: the file is missing or empty (a new environment).
pub fn check(path: &Path) -> Result<Option<Layout>, Damage> {
    let io = |source| Damage::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io(e)),
    };
    let found = file.metadata().map_err(io)?.len();
    if found == 0 {
        return Ok(None);
    }
    let mut first = vec![0u8; META_BYTES];
    if found < META_BYTES as u64 {
        return Err(Damage::NoMeta {
            path: path.into(),
            found,
        });
    }
    file.read_exact_at(&mut first, 0).map_err(io)?;
    let bad = |why: String| Damage::BadMeta {
        path: path.into(),
        why,
    };
    let (meta0, roots0) = read_meta(&first).map_err(bad)?;
    let second_at = meta0.page_size;
    if found < second_at + META_BYTES as u64 {
        return Err(Damage::NoMeta {
            path: path.into(),
            found,
        });
    }
    let mut second = vec![0u8; META_BYTES];
    file.read_exact_at(&mut second, second_at).map_err(io)?;
    let (meta1, roots1) = read_meta(&second).map_err(bad)?;
    if meta1.page_size != meta0.page_size {
        return Err(bad(format!(
            "its meta pages disagree on the page size ({} and {})",
            meta0.page_size, meta1.page_size
        )));
    }
    // LMDB takes the meta of the newer transaction.
    let (layout, roots) = if meta1.txnid > meta0.txnid {
        (meta1, roots1)
    } else {
        (meta0, roots0)
    };
    for root in roots {
        if root != P_INVALID && root > layout.last_page {
            return Err(bad(format!(
                "a tree's root is page {root}, past its last page {}",
                layout.last_page
            )));
        }
    }
    if found < layout.needed_bytes() && !reached_inside(&file, &layout, roots, found) {
        return Err(Damage::Short {
            path: path.into(),
            found,
            needed: layout.needed_bytes(),
            pages: layout.last_page + 1,
            page_size: layout.page_size,
        });
    }
    Ok(Some(layout))
}

/// Page flags and node flags of LMDB's 0.9 format.
const P_BRANCH: u16 = 0x01;
const P_LEAF: u16 = 0x02;
const P_OVERFLOW: u16 = 0x04;
const P_LEAF2: u16 = 0x20;
const F_BIGDATA: u16 = 0x01;
const F_SUBDATA: u16 = 0x02;
const PAGE_HEADER: usize = 16;
const NODE_HEADER: usize = 8;

/// Whether every page the trees reach lies inside the file's `len` bytes. A file may end
/// before its meta's last page: pages a transaction allocated and let go of are free, never
/// written. So a short file is walked, by `pread`, from its roots through every branch, leaf,
/// overflow run and sub-database; only a page the trees use past the end is damage.
fn reached_inside(file: &File, layout: &Layout, roots: [u64; 2], len: u64) -> bool {
    let size = layout.page_size as usize;
    let pages_in_file = len / layout.page_size;
    let mut seen = std::collections::HashSet::new();
    let mut todo: Vec<u64> = roots.into_iter().filter(|&r| r != P_INVALID).collect();
    let mut page = vec![0u8; size];
    while let Some(pgno) = todo.pop() {
        if pgno > layout.last_page || !seen.insert(pgno) {
            continue;
        }
        if pgno >= pages_in_file
            || file
                .read_exact_at(&mut page, pgno * layout.page_size)
                .is_err()
        {
            return false;
        }
        let flags = u16_at(&page, FLAGS_AT);
        if flags & P_OVERFLOW != 0 {
            let run = u64::from(u32_at(&page, 12));
            if pgno.saturating_add(run) > pages_in_file {
                return false;
            }
            continue;
        }
        if flags & (P_BRANCH | P_LEAF) == 0 || flags & P_LEAF2 != 0 {
            continue;
        }
        let lower = usize::from(u16_at(&page, 12));
        let keys = lower.saturating_sub(PAGE_HEADER) / 2;
        for i in 0..keys.min((size - PAGE_HEADER) / 2) {
            let at = usize::from(u16_at(&page, PAGE_HEADER + 2 * i));
            if at + NODE_HEADER > size {
                continue;
            }
            let (lo, hi) = (u16_at(&page, at), u16_at(&page, at + 2));
            let (node_flags, ksize) = (u16_at(&page, at + 4), u16_at(&page, at + 6));
            if flags & P_BRANCH != 0 {
                todo.push(u64::from(lo) | u64::from(hi) << 16 | u64::from(node_flags) << 32);
                continue;
            }
            let data = at + NODE_HEADER + usize::from(ksize);
            if node_flags & F_BIGDATA != 0 && data + 8 <= size {
                todo.push(u64_at(&page, data));
            } else if node_flags & F_SUBDATA != 0 && data + 48 <= size {
                todo.push(u64_at(&page, data + DB_ROOT));
            }
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_with_data(dir: &Path) {
        let env = unsafe {
            heed::EnvOpenOptions::new()
                .map_size(1 << 24)
                .max_dbs(4)
                .open(dir)
                .unwrap()
        };
        let txn = env.write_txn().unwrap();
        env.create_databases_and_commit(txn, |dbo, txn| -> Result<_, heed::Error> {
            let db: heed::Database<heed::types::Bytes, heed::types::Bytes> =
                dbo.create_database(txn, Some("t"))?;
            for i in 0u32..2_000 {
                db.put(txn, &i.to_be_bytes(), &[7u8; 100])?;
            }
            Ok(heed::CommitOrAbort::<(), ()>::Commit(()))
        })
        .unwrap();
    }

    #[test]
    fn a_sound_file_passes_and_a_cut_one_is_named() {
        let dir = tempfile::tempdir().unwrap();
        env_with_data(dir.path());
        let file = dir.path().join("data.mdb");
        let layout = check(&file).unwrap().unwrap();
        assert!(layout.last_page > 2);
        let len = std::fs::metadata(&file).unwrap().len();
        assert!(len >= layout.needed_bytes());

        let cut = dir.path().join("cut.mdb");
        std::fs::copy(&file, &cut).unwrap();
        let f = std::fs::OpenOptions::new().write(true).open(&cut).unwrap();
        f.set_len(layout.needed_bytes() - layout.page_size).unwrap();
        let err = check(&cut).unwrap_err().to_string();
        assert!(err.contains("cut.mdb") && err.contains("shorter"), "{err}");
        f.set_len(8192).unwrap();
        assert!(check(&cut).is_err());
        f.set_len(100).unwrap();
        assert!(matches!(check(&cut), Err(Damage::NoMeta { .. })));
        f.set_len(0).unwrap();
        assert!(check(&cut).unwrap().is_none());
        assert!(check(&dir.path().join("none.mdb")).unwrap().is_none());
    }

    /// Pages past the end that no tree reaches are free pages a transaction let go of before
    /// writing them: the file is sound.
    #[test]
    fn a_file_that_ends_before_free_pages_only_is_sound() {
        let dir = tempfile::tempdir().unwrap();
        env_with_data(dir.path());
        let file = dir.path().join("data.mdb");
        let mut bytes = std::fs::read(&file).unwrap();
        let layout = check(&file).unwrap().unwrap();
        for meta in [0, layout.page_size as usize] {
            let at = meta + LAST_PAGE_AT;
            let last = u64_at(&bytes, at) + 3;
            bytes[at..at + 8].copy_from_slice(&last.to_le_bytes());
        }
        std::fs::write(&file, &bytes).unwrap();
        let widened = check(&file).unwrap().unwrap();
        assert_eq!(widened.last_page, layout.last_page + 3);
        assert!(std::fs::metadata(&file).unwrap().len() < widened.needed_bytes());
    }

    #[test]
    fn a_garbled_meta_page_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        env_with_data(dir.path());
        let file = dir.path().join("data.mdb");
        let mut bytes = std::fs::read(&file).unwrap();
        bytes[MAGIC_AT..MAGIC_AT + 16].fill(0xa5);
        std::fs::write(&file, &bytes).unwrap();
        let err = check(&file).unwrap_err().to_string();
        assert!(err.contains("magic"), "{err}");
    }
}
