//! The BM25 text index (tantivy) over episode summary, resolution and lesson text. The query
//! text is tokenised by the index's own analyser into plain term queries: no query syntax,
//! so any string is data.

use super::sync::TEXT_VERSION;
use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use tantivy::collector::TopDocs;
use tantivy::directory::error::{DeleteError, LockError, OpenReadError, OpenWriteError};
use tantivy::directory::{DirectoryLock, Lock, META_LOCK, MmapDirectory};
use tantivy::index::SegmentComponent;
use tantivy::merge_policy::{LogMergePolicy, MergePolicy};
use tantivy::query::{BooleanQuery, ConstScoreQuery, Occur, Query, RangeQuery, TermQuery};
use tantivy::schema::{
    FAST, Field, INDEXED, IndexRecordOption, STORED, STRING, Schema, TextFieldIndexing, TextOptions,
};
use tantivy::{Index, IndexReader, IndexWriter, ReloadPolicy, TantivyDocument, Term};

use super::IndexError;
use super::bm25_current::{CurrentTopDocs, ReplacedCache};
use super::versions::TextVersions;
use crate::lmdb::{WriterGuard, WriterLock};
use crate::model::{AsOf, Timestamp};

const WRITER_HEAP: usize = 50_000_000;
/// Segments of one size tier merged together once this many have gathered: a catch-up adds
/// one small segment, and merging the small ones among themselves keeps a query to a few
/// posting lists per term without rewriting the whole index after every write.
const SEGMENTS_PER_TIER: usize = 4;

pub struct TextDoc<'a> {
    pub fingerprint: &'a str,
    pub text: &'a str,
    pub ingested_at: Timestamp,
    pub t_valid: Timestamp,
}

#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
struct Newest {
    watermark: u64,
    ingested_at: i64,
    t_valid: i64,
    /// Which episode text the documents hold (`sync::TEXT_VERSION`); absent before lessons.
    #[serde(default = "first_text_version")]
    text_version: u32,
    /// The store the documents came from; absent before stores had an identity.
    #[serde(default)]
    store_id: Option<String>,
    /// The store's correction log read up to ([`super::versions`]); absent before corrected
    /// texts were indexed.
    #[serde(default)]
    corrections: u64,
    /// How many documents hold corrected texts (the others, one an episode, the texts as
    /// first written).
    #[serde(default)]
    versions: u64,
}

fn first_text_version() -> u32 {
    1
}

/// A commit's payload, or that of an index nothing was committed to yet.
fn payload_or_empty(payload: Option<&str>) -> Newest {
    match payload {
        Some(_) => read_payload(payload),
        None => Newest {
            text_version: TEXT_VERSION,
            ..Newest::default()
        },
    }
}

/// The commit payload; unknown or unreadable payloads mean "filter always".
fn read_payload(payload: Option<&str>) -> Newest {
    payload
        .and_then(|p| serde_json::from_str(p).ok())
        .unwrap_or(Newest {
            watermark: 0,
            ingested_at: i64::MAX,
            t_valid: i64::MAX,
            text_version: 0,
            store_id: None,
            corrections: 0,
            versions: 0,
        })
}

#[derive(Clone, Copy)]
struct Fields {
    fingerprint: Field,
    body: Field,
    ingested_at: Field,
    t_valid: Field,
}

pub struct Bm25Index {
    path: PathBuf,
    index: Index,
    reader: IndexReader,
    fields: Fields,
    /// Turn-taking between processes that catch the index up.
    lock: WriterLock,
    /// The last commit this process has loaded: its opstamp and payload. The payload's
    /// newest knowledge and valid times tell when an as-of point needs no time filter, which
    /// keeps "now" queries on tantivy's fastest path.
    seen: Mutex<(u64, Newest)>,
    /// Set when the index was missing, unreadable or stale and has been started afresh.
    pub rebuilt: Option<String>,
    /// Which documents later texts replaced, segment by segment.
    replaced: Mutex<ReplacedCache>,
}

/// How long to wait for another process's tantivy writer before giving up.
const WRITER_WAIT: Duration = Duration::from_secs(30);

fn schema() -> (Schema, Fields) {
    let mut b = Schema::builder();
    let text = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer("en_stem")
            .set_index_option(IndexRecordOption::WithFreqsAndPositions),
    );
    let fields = Fields {
        fingerprint: b.add_text_field("fingerprint", STRING | STORED | FAST),
        body: b.add_text_field("body", text),
        ingested_at: b.add_i64_field("ingested_at", INDEXED | FAST),
        t_valid: b.add_i64_field("t_valid", INDEXED | FAST),
    };
    (b.build(), fields)
}

/// Why an index on disk is not used as it is.
#[derive(Debug)]
enum Unsound {
    Missing,
    OlderText,
    Schema,
    Damaged(String),
}

impl std::fmt::Display for Unsound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unsound::Missing => f.write_str("missing"),
            Unsound::OlderText => f.write_str("built from an older episode text"),
            Unsound::Schema => f.write_str("schema changed"),
            Unsound::Damaged(why) => write!(f, "damaged ({why})"),
        }
    }
}

/// Whether the index holds documents built from an older episode text.
fn older_text(index: &Index) -> bool {
    index.load_metas().is_ok_and(|m| {
        m.payload
            .as_deref()
            .is_some_and(|p| read_payload(Some(p)).text_version != TEXT_VERSION)
    })
}

/// The index in `dir` and a reader over every segment, when it is sound: it opens, it has
/// `schema` and today's episode text, every searchable segment's files are there and open,
/// and their checksums hold. Locks that cannot be taken (a read-only filesystem, a full disk)
/// do not stop a read.
fn open_sound(
    dir: &Path,
    schema: &Schema,
    remember: bool,
) -> Result<(Index, IndexReader), Unsound> {
    let damaged = |e: &dyn std::fmt::Display| Unsound::Damaged(e.to_string());
    let directory = MmapDirectory::open(dir).map_err(|e| damaged(&e))?;
    let index = Index::open(LenientLocks(directory)).map_err(|e| damaged(&e))?;
    if index.schema() != *schema {
        return Err(Unsound::Schema);
    }
    if older_text(&index) {
        return Err(Unsound::OlderText);
    }
    verified(&index, dir, remember).map_err(Unsound::Damaged)?;
    let reader = index
        .reader_builder()
        .reload_policy(ReloadPolicy::Manual)
        .try_into()
        .map_err(|e: tantivy::TantivyError| damaged(&e))?;
    Ok((index, reader))
}

/// The record of files whose checksums held, by size and modification time, so a file is
/// read whole once, not at every open.
const VERIFIED: &str = "strata-verified.json";

/// Checks every file of every searchable segment against its checksum, except those
/// [`VERIFIED`] already vouches for as they are; records the ones that pass when `remember`.
fn verified(index: &Index, dir: &Path, remember: bool) -> Result<(), String> {
    type Stamp = (u64, i64, u32);
    let stamp = |path: &Path| -> Option<Stamp> {
        let m = std::fs::metadata(dir.join(path)).ok()?;
        use std::os::unix::fs::MetadataExt;
        Some((m.len(), m.mtime(), m.mtime_nsec() as u32))
    };
    let record = dir.join(VERIFIED);
    let known: std::collections::HashMap<PathBuf, Stamp> = std::fs::read(&record)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default();
    let mut now: std::collections::HashMap<PathBuf, Stamp> = std::collections::HashMap::new();
    let segments = index
        .searchable_segment_metas()
        .map_err(|e| e.to_string())?;
    for segment in segments {
        let mut files: Vec<PathBuf> = [
            SegmentComponent::Postings,
            SegmentComponent::Positions,
            SegmentComponent::Terms,
            SegmentComponent::Store,
            SegmentComponent::FastFields,
            SegmentComponent::FieldNorms,
        ]
        .into_iter()
        .map(|c| segment.relative_path(c))
        .collect();
        if segment.has_deletes() {
            files.push(segment.relative_path(SegmentComponent::Delete));
        }
        for file in files {
            let Some(current) = stamp(&file) else {
                return Err(format!("segment file {} is missing", file.display()));
            };
            if known.get(&file) != Some(&current) {
                match index.directory().validate_checksum(&file) {
                    Ok(true) => {}
                    Ok(false) => return Err(format!("{} fails its checksum", file.display())),
                    Err(e) => return Err(format!("{}: {e}", file.display())),
                }
            }
            now.insert(file, current);
        }
    }
    if remember && now != known {
        let written = serde_json::to_vec(&now)
            .map_err(std::io::Error::other)
            .and_then(|bytes| std::fs::write(&record, bytes));
        if let Err(e) = written {
            tracing::debug!(error = %e, "cannot record the text index's verified files");
        }
    }
    Ok(())
}

/// The index's directory, where a lock that cannot be taken for lack of permission or space
/// does not stop a read: tantivy takes a lock file to keep its garbage collection away from
/// files a reader is opening, and on a read-only filesystem there is no collector to keep away.
#[derive(Clone, Debug)]
struct LenientLocks(MmapDirectory);

impl tantivy::Directory for LenientLocks {
    fn get_file_handle(
        &self,
        path: &Path,
    ) -> Result<std::sync::Arc<dyn tantivy::directory::FileHandle>, OpenReadError> {
        self.0.get_file_handle(path)
    }
    fn delete(&self, path: &Path) -> Result<(), DeleteError> {
        self.0.delete(path)
    }
    fn exists(&self, path: &Path) -> Result<bool, OpenReadError> {
        self.0.exists(path)
    }
    fn open_write(&self, path: &Path) -> Result<tantivy::directory::WritePtr, OpenWriteError> {
        self.0.open_write(path)
    }
    fn atomic_read(&self, path: &Path) -> Result<Vec<u8>, OpenReadError> {
        self.0.atomic_read(path)
    }
    fn atomic_write(&self, path: &Path, data: &[u8]) -> std::io::Result<()> {
        self.0.atomic_write(path, data)
    }
    fn sync_directory(&self) -> std::io::Result<()> {
        self.0.sync_directory()
    }
    fn watch(
        &self,
        watch_callback: tantivy::directory::WatchCallback,
    ) -> tantivy::Result<tantivy::directory::WatchHandle> {
        self.0.watch(watch_callback)
    }
    fn acquire_lock(&self, lock: &Lock) -> Result<DirectoryLock, LockError> {
        match self.0.acquire_lock(lock) {
            Err(LockError::IoError(e))
                if lock.filepath == META_LOCK.filepath
                    && (crate::lmdb::is_read_only_error(&e)
                        || e.raw_os_error() == Some(libc::ENOSPC)) =>
            {
                Ok(DirectoryLock::from(Box::new(())))
            }
            other => other,
        }
    }
}

impl Bm25Index {
    /// Opens the index in `dir`, or starts it afresh (to be refilled from the store) when it is
    /// missing or damaged: files that do not open, a segment missing, or a file whose checksum
    /// fails (checked once per file, [`verified`]); a damaged one is moved aside, not deleted.
    /// An index built from another store than `store_id` is emptied, to be rebuilt. With no
    /// `store_id` (the store could not say) the index is taken as it is.
    pub fn open(dir: &Path, store_id: Option<&str>) -> Result<Self, IndexError> {
        let err = |e: &dyn std::fmt::Display| IndexError::Text {
            path: dir.to_path_buf(),
            message: e.to_string(),
        };
        let lock = WriterLock::new(dir.with_extension("lock"));
        if let Some(parent) = dir.parent() {
            std::fs::create_dir_all(parent).map_err(|e| err(&e))?;
        }
        // Creating, replacing or emptying the index is one process's job at a time. On a
        // read-only filesystem there is no lock to take, and the index is read as it is.
        let turn = lock.acquire(WriterLock::default_wait());
        if let Err(crate::lmdb::LockError::Io { source, .. }) = &turn
            && crate::lmdb::is_read_only_error(source)
            && dir.join("meta.json").is_file()
        {
            return Self::open_read_only(dir, lock);
        }
        let _turn = turn.map_err(|e| err(&e))?;
        let (schema, fields) = schema();
        let existing = dir.join("meta.json").is_file();
        let opened = if existing {
            crate::caught::catch("opening the text index", || open_sound(dir, &schema, true))
                .unwrap_or_else(|panic| Err(Unsound::Damaged(panic)))
        } else {
            Err(Unsound::Missing)
        };
        let (index, reader, rebuilt) = match opened {
            Ok((index, reader)) => (index, reader, None),
            Err(why) => {
                match &why {
                    // Sound, just stale: nothing to keep for a post-mortem.
                    Unsound::OlderText => std::fs::remove_dir_all(dir).map_err(|e| err(&e))?,
                    Unsound::Missing => {}
                    Unsound::Schema | Unsound::Damaged(_) => {
                        let aside =
                            dir.with_extension(format!("corrupt-{}", Timestamp::now().millis()));
                        std::fs::rename(dir, &aside).map_err(|e| err(&e))?;
                        tracing::warn!(from = %dir.display(), to = %aside.display(), reason = %why, "moved the text index aside");
                    }
                }
                std::fs::create_dir_all(dir).map_err(|e| err(&e))?;
                let index = Index::create_in_dir(dir, schema).map_err(|e| err(&e))?;
                let reader = index
                    .reader_builder()
                    .reload_policy(ReloadPolicy::Manual)
                    .try_into()
                    .map_err(|e: tantivy::TantivyError| err(&e))?;
                (index, reader, Some(why.to_string()))
            }
        };
        let metas = index.load_metas().map_err(|e| err(&e))?;
        let built_from = read_payload(metas.payload.as_deref()).store_id;
        let mut index = Bm25Index {
            seen: Mutex::new((metas.opstamp, payload_or_empty(metas.payload.as_deref()))),
            path: dir.to_path_buf(),
            index,
            reader,
            fields,
            lock,
            rebuilt,
            replaced: Mutex::default(),
        };
        if let Some(store_id) = store_id {
            if metas.payload.is_some() && built_from.as_deref() != Some(store_id) {
                index.rebuilt = Some("built from another store".into());
                index.clear(store_id)?;
            } else if metas.payload.is_none() {
                index.stamp(store_id)?;
            }
        }
        Ok(index)
    }

    fn open_read_only(dir: &Path, lock: WriterLock) -> Result<Self, IndexError> {
        let (schema, fields) = schema();
        let (index, reader) =
            crate::caught::catch("opening the text index", || open_sound(dir, &schema, false))
                .unwrap_or_else(|panic| Err(Unsound::Damaged(panic)))
                .map_err(|why| IndexError::Damaged {
                    what: "text",
                    path: dir.to_path_buf(),
                    message: format!("{why}; it cannot be rebuilt on a read-only filesystem"),
                })?;
        let metas = index.load_metas().map_err(|e| IndexError::Text {
            path: dir.to_path_buf(),
            message: e.to_string(),
        })?;
        Ok(Bm25Index {
            seen: Mutex::new((metas.opstamp, payload_or_empty(metas.payload.as_deref()))),
            path: dir.to_path_buf(),
            index,
            reader,
            fields,
            lock,
            rebuilt: None,
            replaced: Mutex::default(),
        })
    }

    /// One indexing thread: documents land in the same segments in the same order on every
    /// run, so equal scores break the same way and the same data gives the same answers.
    /// Another process may hold tantivy's writer for a moment: wait for it, boundedly.
    fn writer(&self) -> Result<IndexWriter, IndexError> {
        let started = Instant::now();
        loop {
            match self.index.writer_with_num_threads(1, WRITER_HEAP) {
                Ok(writer) => {
                    let writer: IndexWriter = writer;
                    // Merges happen only in `compact`, never behind its back.
                    writer.set_merge_policy(Box::new(tantivy::indexer::NoMergePolicy));
                    return Ok(writer);
                }
                Err(tantivy::TantivyError::LockFailure(..)) if started.elapsed() < WRITER_WAIT => {
                    std::thread::sleep(Duration::from_millis(10));
                }
                Err(e) => return Err(self.err(&e)),
            }
        }
    }

    /// Commits `writer`'s work with `newest` as the payload, and loads it.
    fn commit(&self, mut writer: IndexWriter, newest: &Newest) -> Result<(), IndexError> {
        let mut commit = writer.prepare_commit().map_err(|e| self.write_err(&e))?;
        let payload = serde_json::to_string(newest).map_err(|e| self.err(&e))?;
        commit.set_payload(&payload);
        let opstamp = commit.commit().map_err(|e| self.write_err(&e))?;
        drop(writer);
        // Not through refresh(): a new index's first commit keeps opstamp 0, so refresh would
        // see nothing new and a later commit would write the stale payload (no store_id),
        // making the next process rebuild the index as "built from another store".
        self.reader.reload().map_err(|e| self.err(&e))?;
        let mut seen = self.seen.lock().map_err(|e| self.err(&e))?;
        *seen = (opstamp, newest.clone());
        Ok(())
    }

    /// Records which store a new, empty index is for.
    fn stamp(&self, store_id: &str) -> Result<(), IndexError> {
        let newest = Newest {
            text_version: TEXT_VERSION,
            store_id: Some(store_id.to_string()),
            ..Newest::default()
        };
        self.commit(self.writer()?, &newest)
    }

    /// Empties the index for a rebuild from the store `store_id`.
    pub fn clear(&self, store_id: &str) -> Result<(), IndexError> {
        let writer = self.writer()?;
        writer.delete_all_documents().map_err(|e| self.err(&e))?;
        let newest = Newest {
            text_version: TEXT_VERSION,
            store_id: Some(store_id.to_string()),
            ..Newest::default()
        };
        self.commit(writer, &newest)
    }

    /// Held while catching the index up, so that two processes never index the same
    /// episodes at once.
    pub fn catch_up_guard(&self) -> Result<WriterGuard, IndexError> {
        self.lock
            .acquire(WriterLock::default_wait())
            .map_err(|e| self.err(&e))
    }

    /// Loads the latest commit (another process's, perhaps) when there is a newer one.
    fn refresh(&self) -> Result<Newest, IndexError> {
        let metas = self.index.load_metas().map_err(|e| self.err(&e))?;
        let mut seen = self.seen.lock().map_err(|e| self.err(&e))?;
        let payload = payload_or_empty(metas.payload.as_deref());
        // A commit without documents (a stamp, a clear) can keep the opstamp: the payload
        // tells it apart.
        if seen.0 != metas.opstamp || seen.1 != payload {
            self.reader.reload().map_err(|e| self.err(&e))?;
            *seen = (metas.opstamp, payload);
        }
        Ok(seen.1.clone())
    }

    fn err(&self, e: &dyn std::fmt::Display) -> IndexError {
        IndexError::Text {
            path: self.path.clone(),
            message: e.to_string(),
        }
    }

    /// A write that failed: on a full disk it says so, naming the index; what it wrote is not
    /// committed, and the next catch-up writes it again.
    fn write_err(&self, e: &dyn std::fmt::Display) -> IndexError {
        if crate::store::is_disk_full(&self.path) {
            return IndexError::Text {
                path: self.path.clone(),
                message: format!(
                    "no space left on the disk of {} ({e}): nothing of this catch-up was \
                     committed; free some space and the next run catches up",
                    self.path.display()
                ),
            };
        }
        self.err(e)
    }

    /// The store ingest sequence this index has read up to (the last commit's payload).
    pub fn watermark(&self) -> Result<u64, IndexError> {
        Ok(self.refresh()?.watermark)
    }

    /// How many episodes have a document (corrected texts are not counted).
    pub fn len(&self) -> u64 {
        let versions = self.refresh().map_or(0, |n| n.versions);
        self.reader.searcher().num_docs().saturating_sub(versions)
    }

    /// The store's correction log read up to (see [`super::versions`]).
    pub fn corrections_read(&self) -> Result<u64, IndexError> {
        Ok(self.refresh()?.corrections)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Which of `fingerprints` have no document in the index.
    pub fn missing(&self, fingerprints: &[&str]) -> Result<Vec<String>, IndexError> {
        self.refresh()?;
        let searcher = self.reader.searcher();
        let mut missing = Vec::new();
        for fp in fingerprints {
            let term = Term::from_field_text(self.fields.fingerprint, fp);
            if searcher.doc_freq(&term).map_err(|e| self.err(&e))? == 0 {
                missing.push(fp.to_string());
            }
        }
        Ok(missing)
    }

    /// Adds documents and advances the watermark in one commit.
    pub fn append(&self, docs: &[TextDoc<'_>], watermark: u64) -> Result<(), IndexError> {
        let mut newest = self.refresh()?;
        newest.watermark = watermark;
        self.write_docs(docs, newest)
    }

    /// Adds the documents of corrected texts (keyed by [`super::versions::version_key`]) and
    /// advances the correction log's watermark in one commit.
    pub fn append_versions(
        &self,
        docs: &[super::versions::VersionDoc],
        corrections: u64,
    ) -> Result<(), IndexError> {
        let mut newest = self.refresh()?;
        newest.corrections = corrections;
        newest.versions += docs.len() as u64;
        let docs: Vec<TextDoc<'_>> = docs
            .iter()
            .map(|d| TextDoc {
                fingerprint: &d.key,
                text: &d.text,
                ingested_at: d.known_from,
                t_valid: d.t_valid,
            })
            .collect();
        self.write_docs(&docs, newest)
    }

    fn write_docs(&self, docs: &[TextDoc<'_>], mut newest: Newest) -> Result<(), IndexError> {
        let writer = self.writer()?;
        newest.text_version = TEXT_VERSION;
        let f = self.fields;
        for d in docs {
            writer.delete_term(Term::from_field_text(f.fingerprint, d.fingerprint));
            let mut doc = TantivyDocument::default();
            doc.add_text(f.fingerprint, d.fingerprint);
            doc.add_text(f.body, d.text);
            doc.add_i64(f.ingested_at, d.ingested_at.millis());
            doc.add_i64(f.t_valid, d.t_valid.millis());
            writer.add_document(doc).map_err(|e| self.write_err(&e))?;
            newest.ingested_at = newest.ingested_at.max(d.ingested_at.millis());
            newest.t_valid = newest.t_valid.max(d.t_valid.millis());
        }
        self.commit(writer, &newest)
    }

    /// Merges segments of like size once [`SEGMENTS_PER_TIER`] of them have gathered (tantivy's
    /// log merge policy, run here and waited for, so the same appends give the same segments):
    /// a first build's many segments become one, and a small catch-up merges only with other
    /// small ones, never the whole index.
    pub fn compact(&self) -> Result<(), IndexError> {
        let mut policy = LogMergePolicy::default();
        policy.set_min_num_segments(SEGMENTS_PER_TIER);
        let mut writer: Option<IndexWriter> = None;
        // Each round merges a tier into the next; a handful of rounds covers any index.
        for _ in 0..64 {
            let segments = self
                .index
                .searchable_segment_metas()
                .map_err(|e| self.err(&e))?;
            let merges = policy.compute_merge_candidates(&segments);
            if merges.is_empty() {
                break;
            }
            let w = match writer.as_mut() {
                Some(w) => w,
                None => writer.insert(self.writer()?),
            };
            for merge in merges {
                w.merge(&merge.0).wait().map_err(|e| self.write_err(&e))?;
            }
        }
        let Some(writer) = writer else {
            return Ok(());
        };
        writer
            .garbage_collect_files()
            .wait()
            .map_err(|e| self.err(&e))?;
        drop(writer);
        self.refresh().map(|_| ())
    }

    /// BM25 over the query's terms, limited to documents known at K and begun by V.
    pub fn search(
        &self,
        text: &str,
        as_of: &AsOf,
        limit: usize,
    ) -> Result<Vec<(String, f32)>, IndexError> {
        self.search_among(text, as_of, limit, None)
    }

    /// [`Self::search`] among the documents current at K, the correction log read to `upto`:
    /// those of texts a later version replaced by K ([`TextVersions::replaced`]) are passed
    /// over while ranking, so the best `limit` are found in one search.
    pub fn search_current(
        &self,
        text: &str,
        as_of: &AsOf,
        limit: usize,
        (versions, upto): (&TextVersions, u64),
    ) -> Result<Vec<(String, f32)>, IndexError> {
        if upto == 0 {
            return self.search(text, as_of, limit);
        }
        self.search_among(text, as_of, limit, Some((versions, upto)))
    }

    /// Reads which documents later texts replaced, the correction log read to `upto`, so
    /// that the first search after a catch-up does not.
    pub fn read_replaced(&self, versions: &TextVersions, upto: u64) -> Result<(), IndexError> {
        if upto == 0 {
            return Ok(());
        }
        self.refresh()?;
        self.replaced_in(&self.reader.searcher(), versions, upto)
            .map(|_| ())
    }

    fn replaced_in(
        &self,
        searcher: &tantivy::Searcher,
        versions: &TextVersions,
        upto: u64,
    ) -> Result<Vec<std::sync::Arc<super::bm25_current::SegmentReplaced>>, IndexError> {
        let replaced = versions.replaced(upto)?;
        let mut cache = self.replaced.lock().map_err(|e| self.err(&e))?;
        cache
            .of(searcher, self.fields.fingerprint, &replaced, upto)
            .map_err(|e| self.err(&e))
    }

    fn search_among(
        &self,
        text: &str,
        as_of: &AsOf,
        limit: usize,
        current: Option<(&TextVersions, u64)>,
    ) -> Result<Vec<(String, f32)>, IndexError> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let f = self.fields;
        let mut analyzer = self
            .index
            .tokenizer_for_field(f.body)
            .map_err(|e| self.err(&e))?;
        let mut terms: Vec<Term> = Vec::new();
        let mut stream = analyzer.token_stream(text);
        while let Some(token) = stream.next() {
            let term = Term::from_field_text(f.body, &token.text);
            if !terms.contains(&term) {
                terms.push(term);
            }
        }
        if terms.is_empty() {
            return Ok(Vec::new());
        }
        let should: Vec<(Occur, Box<dyn Query>)> = terms
            .into_iter()
            .map(|t| {
                (
                    Occur::Should,
                    Box::new(TermQuery::new(t, IndexRecordOption::WithFreqs)) as Box<dyn Query>,
                )
            })
            .collect();
        let until = |field: Field, t: Timestamp| -> (Occur, Box<dyn Query>) {
            let range = RangeQuery::new(
                Bound::Unbounded,
                Bound::Included(Term::from_field_i64(field, t.millis())),
            );
            (
                Occur::Must,
                Box::new(ConstScoreQuery::new(Box::new(range), 0.0)),
            )
        };
        let newest = self.refresh()?;
        let mut filters = Vec::new();
        if as_of.known_at.millis() < newest.ingested_at {
            filters.push(until(f.ingested_at, as_of.known_at));
        }
        if as_of.valid_at.millis() < newest.t_valid {
            filters.push(until(f.t_valid, as_of.valid_at));
        }
        let query = if filters.is_empty() {
            BooleanQuery::new(should)
        } else {
            let mut clauses = vec![(
                Occur::Must,
                Box::new(BooleanQuery::new(should)) as Box<dyn Query>,
            )];
            clauses.extend(filters);
            BooleanQuery::new(clauses)
        };
        let searcher = self.reader.searcher();
        let fetch = limit.saturating_mul(2);
        let top = match current {
            None => searcher.search(&query, &TopDocs::with_limit(fetch).order_by_score()),
            Some((versions, upto)) => {
                let collector = CurrentTopDocs {
                    limit: fetch,
                    known_at: as_of.known_at.millis(),
                    replaced: self.replaced_in(&searcher, versions, upto)?,
                };
                searcher.search(&query, &collector)
            }
        }
        .map_err(|e| self.err(&e))?;
        let mut hits = Vec::with_capacity(top.len());
        // Fingerprints come from the fast field's column, not the document store.
        let mut columns = std::collections::HashMap::new();
        for (score, address) in top {
            let column = match columns.entry(address.segment_ord) {
                std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
                std::collections::hash_map::Entry::Vacant(e) => e.insert(
                    searcher
                        .segment_reader(address.segment_ord)
                        .fast_fields()
                        .str("fingerprint")
                        .map_err(|e| self.err(&e))?,
                ),
            };
            let mut fp = String::new();
            if let Some(column) = column.as_ref()
                && let Some(ord) = column.term_ords(address.doc_id).next()
                && column.ord_to_str(ord, &mut fp).map_err(|e| self.err(&e))?
            {
                hits.push((fp, score));
            }
        }
        // Over-fetched so that equal scores at the cut are decided by fingerprint, not doc id.
        hits.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        hits.truncate(limit);
        Ok(hits)
    }
}
