//! `strata export`: every record of a store, in the format's order, deterministic on either
//! backend. The store is read once: the records go to a body file as they come (memory holds
//! one page of episodes, a run of episode keys sorted on disk, entities, skills, code units
//! and the corrections log), and the output is the header, the body with each line's chain,
//! and the trailer.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use sha2::{Digest, Sha256};

use super::TransferError;
use super::format::{
    self, Counts, EpisodeVersionRecord, FORMAT, FORMAT_VERSION, FactVersionRecord, Header,
    MEMORY_SCHEMA, Record, ReviewRecord, Trailer, VECTOR_ENCODING, VectorRecord, VectorsInfo,
};
use super::keys::{KeySorter, SortedKeys};
use crate::index::VectorStore;
use crate::model::{FactEdge, Supersession, Timestamp};
use crate::store::MemoryStore;

/// Episodes read from the store at a time.
const PAGE: usize = 500;
/// Rows of the ingest log read at a time while collecting episode keys.
const LOG_PAGE: usize = 10_000;

#[derive(Clone, Debug, Default)]
pub struct ExportOptions {
    /// Memory as it stood at this knowledge time: nothing learned after it.
    pub known_at: Option<Timestamp>,
    /// The embedder configured here, named in the header.
    pub embedding_model: Option<String>,
    /// Carry each episode's stored vector (`--with-vectors`).
    pub vectors: Option<CarriedVectors>,
}

/// The vector index an export reads each episode's vector from, and what built it.
#[derive(Clone)]
pub struct CarriedVectors {
    pub index: Arc<dyn VectorStore>,
    pub info: VectorsInfo,
}

impl CarriedVectors {
    pub fn new(index: Arc<dyn VectorStore>, model: &str, dimension: usize) -> Self {
        CarriedVectors {
            index,
            info: VectorsInfo {
                model: model.to_string(),
                dimension,
                encoding: VECTOR_ENCODING.to_string(),
            },
        }
    }
}

impl std::fmt::Debug for CarriedVectors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CarriedVectors")
            .field("index", &self.index.describe())
            .field("info", &self.info)
            .finish()
    }
}

#[derive(Clone, Debug, serde::Serialize)]
pub struct ExportSummary {
    pub counts: Counts,
    pub sha256: String,
    pub bytes: u64,
}

/// Every record of `store` in the format's order, as memory stood at `known_at`, handed to
/// `emit`, each episode's vector from `vectors` when given. `progress` is told (episodes
/// done, episodes in all).
pub fn for_each_record(
    store: &dyn MemoryStore,
    known_at: Option<Timestamp>,
    vectors: Option<&dyn VectorStore>,
    emit: &mut dyn FnMut(Record) -> Result<(), TransferError>,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<(), TransferError> {
    let known = |t: Timestamp| known_at.is_none_or(|k| t <= k);
    for unit in store.code_units()? {
        emit(Record::CodeUnit(unit))?;
    }
    let (mut keys, total) = episode_keys(store, known_at)?;
    let mut done = 0u64;
    // Pages are read by two threads, each its turn, and emitted here in order.
    std::thread::scope(|scope| -> Result<(), TransferError> {
        let mut readers = Vec::new();
        for _ in 0..READERS {
            let (to_reader, asked) = std::sync::mpsc::channel::<Vec<String>>();
            let (to_emit, read) = std::sync::mpsc::sync_channel::<Result<Page, TransferError>>(1);
            scope.spawn(move || {
                for fps in asked {
                    let page = read_page(store, vectors, known_at, fps);
                    store.release_mapped_pages();
                    if to_emit.send(page).is_err() {
                        break;
                    }
                }
            });
            readers.push((to_reader, read));
        }
        let mut in_flight = std::collections::VecDeque::new();
        let mut next = 0usize;
        loop {
            while in_flight.len() < READERS {
                let page = keys.next_page(PAGE)?;
                if page.is_empty() {
                    break;
                }
                let fps = page.into_iter().map(|(_, fp)| fp).collect();
                let reader = next % READERS;
                readers[reader]
                    .0
                    .send(fps)
                    .map_err(|_| TransferError::Export("a page reader stopped".into()))?;
                in_flight.push_back(reader);
                next += 1;
            }
            let Some(reader) = in_flight.pop_front() else {
                break;
            };
            let page = readers[reader]
                .1
                .recv()
                .map_err(|_| TransferError::Export("a page reader stopped".into()))??;
            let n = page.fps.len() as u64;
            emit_page(page, known_at, emit)?;
            done += n;
            progress(done, total.max(done));
        }
        Ok(())
    })?;
    if done == 0 {
        progress(0, 0);
    }
    for entity in store.entity_records()? {
        if known(entity.ingested_at) {
            emit(Record::Entity(entity))?;
        }
    }
    let mut skills = store.skills()?;
    skills.sort_by(|a, b| (&a.name, a.version).cmp(&(&b.name, b.version)));
    for skill in skills {
        if known(skill.recorded_at) {
            emit(Record::Skill(skill))?;
        }
    }
    let mut corrections = store.corrections()?;
    corrections.sort_by_key(|c| c.sequence);
    for c in corrections {
        if known(c.recorded_at) {
            emit(Record::Correction(c))?;
        }
    }
    Ok(())
}

/// Threads reading pages of episodes while the records of the one before are emitted.
const READERS: usize = 2;

/// A page of episodes and everything recorded with them, as read from the store.
struct Page {
    fps: Vec<String>,
    episodes: HashMap<String, crate::model::MemoryEpisode>,
    facts: HashMap<String, Vec<FactEdge>>,
    lineage: HashMap<String, Vec<Supersession>>,
    vectors: HashMap<String, Vec<f32>>,
}

fn read_page(
    store: &dyn MemoryStore,
    vectors: Option<&dyn VectorStore>,
    known_at: Option<Timestamp>,
    fps: Vec<String>,
) -> Result<Page, TransferError> {
    let known = |t: Timestamp| known_at.is_none_or(|k| t <= k);
    let episodes = store
        .episodes(&fps)?
        .into_iter()
        .map(|e| (e.incident_fingerprint.clone(), e))
        .collect();
    let mut facts: HashMap<String, Vec<FactEdge>> = HashMap::new();
    for f in store.facts_of_episodes(&fps)? {
        facts.entry(f.episode.clone()).or_default().push(f);
    }
    let mut stored_vectors = HashMap::new();
    if let Some(index) = vectors {
        let refs: Vec<&str> = fps.iter().map(String::as_str).collect();
        let found = index
            .stored_vectors(&refs)
            .map_err(|e| TransferError::Vectors(e.to_string()))?;
        for (fp, v) in refs.iter().zip(found) {
            if let Some(v) = v {
                stored_vectors.insert(fp.to_string(), v);
            }
        }
    }
    let mut lineage: HashMap<String, Vec<Supersession>> = HashMap::new();
    for s in store.supersessions_of_episodes(&fps)? {
        if known(s.ingested_at) {
            lineage.entry(s.episode.clone()).or_default().push(s);
        }
    }
    Ok(Page {
        fps,
        episodes,
        facts,
        lineage,
        vectors: stored_vectors,
    })
}

/// A page's records in the format's order.
fn emit_page(
    page: Page,
    known_at: Option<Timestamp>,
    emit: &mut dyn FnMut(Record) -> Result<(), TransferError>,
) -> Result<(), TransferError> {
    let known = |t: Timestamp| known_at.is_none_or(|k| t <= k);
    let Page {
        fps,
        mut episodes,
        mut facts,
        mut lineage,
        vectors,
    } = page;
    for fp in &fps {
        let mut episode = episodes.remove(fp).ok_or_else(|| {
            TransferError::Export(format!(
                "episode {fp:?} is in the ingest log but cannot be read"
            ))
        })?;
        let versions = std::mem::take(&mut episode.versions);
        emit(Record::Episode(episode))?;
        for v in versions.into_iter().filter(|v| known(v.known_from)) {
            emit(Record::EpisodeVersion(EpisodeVersionRecord::new(fp, v)))?;
        }
        let mut of_episode = facts.remove(fp).unwrap_or_default();
        of_episode.sort_by(|a, b| (a.relation, &a.entity).cmp(&(b.relation, &b.entity)));
        for mut fact in of_episode {
            if let Some(k) = known_at {
                as_known_at(&mut fact, k);
            }
            let versions: Vec<Record> = std::mem::take(&mut fact.versions)
                .into_iter()
                .filter(|v| known(v.known_from))
                .map(|v| Record::FactVersion(FactVersionRecord::new(&fact, v)))
                .collect();
            emit(Record::Fact(fact))?;
            for v in versions {
                emit(v)?;
            }
        }
        let mut written = lineage.remove(fp).unwrap_or_default();
        written.sort_by(|a, b| (&a.prior, &a.entity).cmp(&(&b.prior, &b.entity)));
        for mut s in written {
            let reviews: Vec<Record> = std::mem::take(&mut s.reviews)
                .into_iter()
                .filter(|r| known(r.recorded_at))
                .map(|r| Record::Review(ReviewRecord::new(&s, r)))
                .collect();
            emit(Record::Supersession(s))?;
            for r in reviews {
                emit(r)?;
            }
        }
        if let Some(v) = vectors.get(fp.as_str()) {
            emit(Record::Vector(VectorRecord::new(fp, v)))?;
        }
    }
    Ok(())
}

/// A fact as it was known at `k`: an invalidation recorded after `k` had not happened yet.
fn as_known_at(fact: &mut FactEdge, k: Timestamp) {
    if fact.expired_at.is_some_and(|e| e > k) {
        fact.t_invalid = None;
        fact.expired_at = None;
        fact.superseded_by = None;
    }
}

/// (ingested_at, fingerprint) of every episode known at `known_at`, in that order (the same
/// on every backend, whatever order each keeps its log in), sorted in bounded memory; and
/// how many there are (at most).
fn episode_keys(
    store: &dyn MemoryStore,
    known_at: Option<Timestamp>,
) -> Result<(SortedKeys, u64), TransferError> {
    let mut keys = KeySorter::default();
    let mut after = 0;
    loop {
        let page = store.episode_keys_since(after, LOG_PAGE)?;
        if let Some((seq, e)) = page.unreadable.into_iter().next() {
            return Err(TransferError::Export(format!(
                "row {seq} of the ingest log cannot be read ({e}); an export would lose it \
                 (run `strata check`)"
            )));
        }
        if page.keys.is_empty() && page.last <= after {
            break;
        }
        for (ingested_at, fingerprint) in page.keys {
            if known_at.is_none_or(|k| ingested_at <= k) {
                keys.push((ingested_at, fingerprint))?;
            }
        }
        store.release_mapped_pages();
        after = page.last;
    }
    let total = keys.pushed();
    Ok((keys.sorted()?, total))
}

/// Where an export goes.
pub enum Destination<'a> {
    File(&'a Path),
    Writer(&'a mut dyn Write),
}

/// Writes the export of `store` to `to`: a file appears whole or not at all (written beside
/// it and renamed).
pub fn export(
    store: &dyn MemoryStore,
    options: &ExportOptions,
    to: Destination<'_>,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<ExportSummary, TransferError> {
    let body_dir = match &to {
        Destination::File(path) => path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf),
        Destination::Writer(_) => std::env::temp_dir(),
    };
    let body = tempfile::Builder::new()
        .prefix(".strata-export-")
        .tempfile_in(&body_dir)
        .map_err(TransferError::io(&body_dir))?;
    let body_path = body.path().to_path_buf();
    let file = body.as_file();
    let counts = records_in_parallel(
        store,
        options.known_at,
        options.vectors.as_ref().map(|v| &*v.index),
        |records| {
            let mut counts = Counts::default();
            let mut w = BufWriter::with_capacity(1 << 20, file);
            let mut content = Vec::with_capacity(4096);
            for record in records {
                counts.add(&record);
                content.clear();
                record
                    .content_into(&mut content)
                    .map_err(|e| TransferError::Export(e.to_string()))?;
                content.push(b'\n');
                w.write_all(&content)
                    .map_err(TransferError::io(&body_path))?;
            }
            w.flush().map_err(TransferError::io(&body_path))?;
            Ok(counts)
        },
        progress,
    )?;
    let header = Record::Header(Header {
        format: FORMAT.to_string(),
        format_version: FORMAT_VERSION,
        strata_version: env!("CARGO_PKG_VERSION").to_string(),
        schema: MEMORY_SCHEMA,
        known_at: options.known_at,
        embedding_model: options.embedding_model.clone(),
        counts,
        vectors: options.vectors.as_ref().map(|v| v.info.clone()),
    });
    let reader = File::open(&body_path).map_err(TransferError::io(&body_path))?;
    match to {
        Destination::File(path) => {
            let dir = body_dir;
            let out = tempfile::Builder::new()
                .prefix(".strata-export-out-")
                .tempfile_in(&dir)
                .map_err(TransferError::io(&dir))?;
            let summary = {
                let mut w = BufWriter::with_capacity(1 << 20, out.as_file());
                let summary = assemble(&header, counts, reader, &body_path, &mut w, path)?;
                w.flush().map_err(TransferError::io(path))?;
                summary
            };
            out.as_file().sync_all().map_err(TransferError::io(path))?;
            out.persist(path)
                .map_err(|e| TransferError::io(path)(e.error))?;
            Ok(summary)
        }
        Destination::Writer(w) => {
            let mut w = BufWriter::with_capacity(1 << 20, w);
            let summary = assemble(&header, counts, reader, &body_path, &mut w, Path::new("-"))?;
            w.flush().map_err(TransferError::io("-"))?;
            Ok(summary)
        }
    }
}

/// Header, the body's lines each with its chain, trailer. The lines are framed and written
/// here while another thread hashes them.
fn assemble(
    header: &Record,
    counts: Counts,
    body: File,
    body_path: &Path,
    w: &mut dyn Write,
    out_path: &Path,
) -> Result<ExportSummary, TransferError> {
    let mut line = Vec::with_capacity(4096);
    let content = header
        .content()
        .map_err(|e| TransferError::Export(e.to_string()))?;
    let mut chain = format::frame(&content, 0, &mut line);
    let mut bytes = line.len() as u64;
    w.write_all(&line).map_err(TransferError::io(out_path))?;
    let (sha, chain) = std::thread::scope(|scope| -> Result<(Sha256, u64), TransferError> {
        let (blocks, hashed) = std::sync::mpsc::sync_channel::<Arc<Vec<u8>>>(4);
        let hasher = scope.spawn(move || {
            let mut sha = Sha256::new();
            for block in hashed {
                sha.update(&*block);
            }
            sha
        });
        let mut reader = BufReader::with_capacity(1 << 20, body);
        let mut content = Vec::with_capacity(4096);
        let mut block = Vec::with_capacity(BLOCK + 4096);
        let mut hand_over = |block: Vec<u8>| -> Result<(), TransferError> {
            let block = Arc::new(block);
            w.write_all(&block).map_err(TransferError::io(out_path))?;
            blocks
                .send(block)
                .map_err(|_| TransferError::Export("the hashing thread stopped".into()))
        };
        loop {
            content.clear();
            let n = reader
                .read_until(b'\n', &mut content)
                .map_err(TransferError::io(body_path))?;
            if n == 0 {
                break;
            }
            if content.last() == Some(&b'\n') {
                content.pop();
            }
            chain = format::frame(&content, chain, &mut block);
            if block.len() >= BLOCK {
                bytes += block.len() as u64;
                hand_over(std::mem::replace(
                    &mut block,
                    Vec::with_capacity(BLOCK + 4096),
                ))?;
            }
        }
        bytes += block.len() as u64;
        hand_over(block)?;
        drop(blocks);
        let sha = hasher
            .join()
            .map_err(|_| TransferError::Export("the hashing thread panicked".into()))?;
        Ok((sha, chain))
    })?;
    let sha256 = format::sha256_hex(sha);
    let trailer = Record::Trailer(Trailer {
        counts,
        sha256: sha256.clone(),
    });
    let content = trailer
        .content()
        .map_err(|e| TransferError::Export(e.to_string()))?;
    line.clear();
    format::frame(&content, chain, &mut line);
    bytes += line.len() as u64;
    w.write_all(&line).map_err(TransferError::io(out_path))?;
    Ok(ExportSummary {
        counts,
        sha256,
        bytes,
    })
}

/// Framed lines handed to the hashing thread at a time.
const BLOCK: usize = 1 << 20;

/// Records handed from the store's reader to the consumer at a time.
const HANDOFF: usize = 1_024;

/// [`for_each_record`] on this thread while `consume` takes the records, in order, on
/// another: reading the store and encoding the records use a core each. An error of
/// either stops both; the reader's is returned unless the consumer stopped first.
pub fn records_in_parallel<T: Send>(
    store: &dyn MemoryStore,
    known_at: Option<Timestamp>,
    vectors: Option<&dyn VectorStore>,
    consume: impl FnOnce(&mut dyn Iterator<Item = Record>) -> Result<T, TransferError> + Send,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<T, TransferError> {
    std::thread::scope(|scope| {
        let (batches, received) = std::sync::mpsc::sync_channel::<Vec<Record>>(8);
        let consumer = scope.spawn(move || consume(&mut received.into_iter().flatten()));
        let mut batch = Vec::with_capacity(HANDOFF);
        let mut consumer_gone = false;
        let send = |batch: Vec<Record>, consumer_gone: &mut bool| {
            batches.send(batch).map_err(|_| {
                *consumer_gone = true;
                TransferError::Export("the records' consumer stopped".into())
            })
        };
        let mut emit = |record: Record| {
            batch.push(record);
            if batch.len() == HANDOFF {
                let full = std::mem::replace(&mut batch, Vec::with_capacity(HANDOFF));
                send(full, &mut consumer_gone)?;
            }
            Ok(())
        };
        let read = for_each_record(store, known_at, vectors, &mut emit, progress);
        let read = read.and_then(|()| send(std::mem::take(&mut batch), &mut consumer_gone));
        drop(batches);
        let consumed = consumer
            .join()
            .map_err(|_| TransferError::Export("the records' consumer panicked".into()))?;
        match read {
            Err(e) if !consumer_gone => Err(e),
            Err(e) => consumed.and(Err(e)),
            Ok(()) => consumed,
        }
    })
}
