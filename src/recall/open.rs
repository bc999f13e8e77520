use std::path::PathBuf;
use std::sync::Arc;

use super::engine::RecallEngine;
use super::leg::{Leg, RecallLeg, StoreEpisodes};
use super::legs::{Bm25Leg, GraphLeg, SemanticLeg, UnavailableLeg};
use super::warming::Warming;
use crate::embed::Embedder;
use crate::index::bm25::Bm25Index;
use crate::index::{
    IndexError, SyncReport, Synced, TextVersions, VectorLocation, VectorStore, store_identity,
    sync_text, sync_vectors,
};
use crate::store::MemoryStore;

pub struct StackOptions {
    /// Where the derived indexes live (`DATA/index`).
    pub index_dir: PathBuf,
    /// Bring the indexes up to date with the store before answering.
    pub sync: bool,
    /// Where the semantic leg's vectors live.
    pub vectors: VectorLocation,
    /// The runtime a vector server's client runs on; `None`: one of its own.
    pub runtime: Option<tokio::runtime::Handle>,
}

/// The recall engine with its indexes, opened over a store. Any part that cannot open
/// becomes a leg that fails open with the reason; opening never fails because of one leg.
pub struct RecallStack {
    pub engine: RecallEngine,
    pub text: Option<Arc<Bm25Index>>,
    pub vectors: Option<Arc<dyn VectorStore>>,
    pub embedder: Option<Arc<dyn Embedder>>,
    pub sync: SyncReport,
    /// Things the user should know (an index rebuilt, a leg unavailable).
    pub notices: Vec<String>,
    /// What stopped a catch-up of the indexes at opening (also among the notices): an index
    /// left behind the store.
    pub stopped: Vec<String>,
    /// Whether the vectors lag the store while a first embedding runs in the background.
    pub warming: Arc<Warming>,
    /// The store's episodes as of the last catch-up, which the index-backed legs compare with.
    episodes: Arc<StoreEpisodes>,
    /// Which corrected text of an episode begins when, for the text legs.
    versions: Arc<TextVersions>,
}

impl RecallStack {
    pub fn open(
        store: Arc<dyn MemoryStore>,
        embedder: Result<Arc<dyn Embedder>, crate::embed::EmbedError>,
        options: &StackOptions,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Self {
        let mut notices = Vec::new();
        let started = std::time::Instant::now();
        let phase = |what: &str| {
            tracing::info!(
                ms = started.elapsed().as_millis() as u64,
                heap_mb = heap_mb(),
                "recall stack: {what}"
            );
        };
        // Unknown when the store is unreachable: the indexes are then opened as they are.
        let store_id = match store_identity(store.as_ref()) {
            Ok(id) => Some(id),
            Err(e) => {
                notices.push(format!("cannot read the store's identity: {e}"));
                None
            }
        };
        let text = match Bm25Index::open(&options.index_dir.join("bm25"), store_id.as_deref()) {
            Ok(t) => {
                if let Some(why) = &t.rebuilt
                    && store.stats().map(|s| s.episodes > 0).unwrap_or(false)
                {
                    notices.push(if why == "missing" {
                        "building the text index for the first time".to_string()
                    } else {
                        format!("text index {why}: rebuilding it from the store")
                    });
                }
                Some(Arc::new(t))
            }
            Err(e) => {
                notices.push(format!("text index unavailable: {e}"));
                None
            }
        };
        phase("text index open");
        let mut semantic_down = None;
        let (embedder, vectors) = match embedder {
            Ok(e) => match options.vectors.open(
                &options.index_dir,
                e.model(),
                e.dimension(),
                store_id.as_deref(),
                options.runtime.clone(),
            ) {
                Ok(v) => {
                    if let Some(why) = v.rebuilt() {
                        notices.push(format!("vector index {why}: rebuilding it from the store"));
                    }
                    (Some(e), Some(v))
                }
                Err(err) => {
                    semantic_down = Some(format!("semantic leg unavailable: {err}"));
                    (Some(e), None)
                }
            },
            Err(why) => {
                semantic_down = Some(format!("semantic leg unavailable: {why}"));
                (None, None)
            }
        };
        notices.extend(semantic_down.clone());
        phase("vector index open");
        let warming = Arc::new(Warming::default());
        let episodes = Arc::new(StoreEpisodes::default());
        let mut report = SyncReport::default();
        let mut stopped = Vec::new();
        if options.sync {
            let (caught_up, problems) = catch_up_indexes(
                store.as_ref(),
                text.as_deref(),
                Semantic {
                    vectors: &vectors,
                    embedder: &embedder,
                },
                (&warming, &episodes),
                progress,
            );
            notices.extend(problems.iter().cloned());
            notices.extend(unreadable_notice(&caught_up));
            report = caught_up;
            stopped = problems;
            phase("indexes caught up");
        }
        let versions = Arc::new(TextVersions::new(store.clone()));
        if options.sync {
            notices.extend(read_corrections(store.as_ref(), &versions));
        }
        let mut legs: Vec<Arc<dyn RecallLeg>> = Vec::new();
        match (&embedder, &vectors) {
            (Some(e), Some(v)) => legs.push(Arc::new(SemanticLeg::new(
                e.clone(),
                v.clone(),
                warming.clone(),
                episodes.clone(),
                versions.clone(),
            ))),
            _ => legs.push(Arc::new(UnavailableLeg {
                leg: Leg::Semantic,
                reason: semantic_down.unwrap_or_else(|| "semantic leg unavailable".into()),
            })),
        }
        match &text {
            Some(t) => legs.push(Arc::new(Bm25Leg::new(
                t.clone(),
                episodes.clone(),
                versions.clone(),
            ))),
            None => legs.push(Arc::new(UnavailableLeg {
                leg: Leg::Bm25,
                reason: "text index unavailable".into(),
            })),
        }
        legs.push(Arc::new(GraphLeg::new(store.clone())));
        let label = embedder
            .as_ref()
            .map(|e| e.label())
            .unwrap_or_else(|| "no embedder".into());
        let engine = RecallEngine::new(legs, store.clone(), label);
        if options.sync {
            // What the legs keep (the graph leg's entity dictionary) is built now, with the
            // indexes, not by the first query.
            notices.extend(engine.catch_up_legs());
            // Catching up read the store end to end; queries read a few pages each.
            store.release_mapped_pages();
            phase("legs caught up");
        }
        RecallStack {
            engine,
            text,
            vectors,
            embedder,
            sync: report,
            notices,
            stopped,
            warming,
            episodes,
            versions,
        }
    }
}

impl RecallStack {
    /// What a metrics scrape shows of the store and these indexes: episodes stored, and how
    /// many of them each index does not hold yet. What cannot be read is left out.
    pub fn gauges(&self, store: &dyn MemoryStore) -> crate::telemetry::metrics::Gauges {
        let episodes = store.stats().map(|s| s.episodes).ok();
        let mut index_lag = Vec::new();
        if let Some(total) = episodes {
            if let Some(t) = &self.text {
                index_lag.push(("bm25".to_string(), total.saturating_sub(t.len())));
            }
            if let Some(held) = self.vectors.as_ref().and_then(|v| v.count().ok()) {
                index_lag.push(("vectors".to_string(), total.saturating_sub(held as u64)));
            }
        }
        crate::telemetry::metrics::Gauges {
            episodes,
            index_lag,
        }
    }

    /// Reads now what the first queries would otherwise read (the graph leg's hub links): for
    /// processes that answer many recalls (the explorer, the MCP server, the benches). A
    /// one-shot recall or an index build skips it.
    pub fn warm_legs(&mut self) {
        let started = std::time::Instant::now();
        // The graph leg lets go of each hub's pages once it has read them.
        self.notices.extend(self.engine.warm_legs());
        tracing::info!(
            ms = started.elapsed().as_millis() as u64,
            heap_mb = heap_mb(),
            "recall stack: legs warmed"
        );
    }

    /// Brings the indexes (and what the legs keep) up to the store's ingest log; what
    /// stopped a catch-up is returned, not raised, so one index failing never holds back
    /// the other.
    pub fn catch_up(
        &self,
        store: &dyn MemoryStore,
        progress: &mut dyn FnMut(u64, u64),
    ) -> (SyncReport, Vec<String>) {
        let (report, mut problems) = catch_up_indexes(
            store,
            self.text.as_deref(),
            Semantic {
                vectors: &self.vectors,
                embedder: &self.embedder,
            },
            (&self.warming, &self.episodes),
            progress,
        );
        problems.extend(read_corrections(store, &self.versions));
        problems.extend(self.engine.catch_up_legs());
        (report, problems)
    }

    /// Brings the text index and the graph leg up to the store now, and leaves the vectors to
    /// [`Self::warm`] in the background: until that finishes, the semantic leg says how many
    /// episodes are embedded and the other legs answer. For a first launch on a memory whose
    /// vectors are far behind.
    pub fn open_warming(
        &self,
        store: &dyn MemoryStore,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Vec<String> {
        let mut problems = Vec::new();
        if let Some(v) = &self.vectors {
            match (store.stats(), v.count()) {
                (Ok(stats), Ok(held)) if (held as u64) < stats.episodes => {
                    self.warming.behind(held as u64, stats.episodes);
                    if let Some(why) = v.rebuilt() {
                        self.warming.rebuilding(why);
                    }
                    // From now on the vectors are [`Self::warm`]'s: the caller runs it, and
                    // the catch-up below leaves them alone.
                    self.warming.set_running(true);
                }
                (Err(e), _) => problems.push(format!("cannot count the store's episodes: {e}")),
                (_, Err(e)) => problems.push(format!("cannot count the vectors: {e}")),
                _ => {}
            }
        }
        problems.extend(self.catch_up(store, progress).1);
        problems
    }

    /// Embeds what the vectors lack, on its own: other catch-ups meanwhile bring the text
    /// index and the graph up and leave the vectors to this. Clears [`Self::warming`], or
    /// records why it stopped.
    pub fn warm(&self, store: &dyn MemoryStore, progress: &mut dyn FnMut(u64, u64)) -> usize {
        let (Some(v), Some(e)) = (&self.vectors, &self.embedder) else {
            return 0;
        };
        self.warming.set_running(true);
        let embedded = embed_missing(store, (v, e), &self.warming, progress)
            .map(|synced| synced.written)
            .unwrap_or_else(|e| {
                self.warming.stopped(e.to_string());
                0
            });
        self.warming.set_running(false);
        embedded
    }
}

/// The semantic leg's index and embedder, where they opened.
struct Semantic<'a> {
    vectors: &'a Option<Arc<dyn VectorStore>>,
    embedder: &'a Option<Arc<dyn Embedder>>,
}

/// Text first (it is fast), then the vectors; what stopped either is returned. `episodes`
/// learns how many episodes the store holds, for the legs to compare their indexes with.
fn catch_up_indexes(
    store: &dyn MemoryStore,
    text: Option<&Bm25Index>,
    Semantic { vectors, embedder }: Semantic<'_>,
    (warming, episodes): (&Warming, &StoreEpisodes),
    progress: &mut dyn FnMut(u64, u64),
) -> (SyncReport, Vec<String>) {
    match store.episode_count() {
        Ok(n) => episodes.set(n),
        Err(e) => tracing::warn!(error = %e, "cannot count the store's episodes"),
    }
    let mut report = SyncReport::default();
    let mut problems = Vec::new();
    let unreadable = |synced: Synced, report: &mut SyncReport| {
        for row in synced.unreadable {
            if !report.unreadable.contains(&row) {
                report.unreadable.push(row);
            }
        }
        synced.written
    };
    if let Some(t) = text {
        match sync_text(store, t, progress) {
            Ok(synced) => report.text_indexed = unreadable(synced, &mut report),
            Err(e) => problems.push(format!("text index catch-up stopped: {e}")),
        }
    }
    if let (Some(v), Some(e)) = (vectors, embedder)
        && !warming.is_running()
    {
        match embed_missing(store, (v, e), warming, progress) {
            Ok(synced) => report.vectors_embedded = unreadable(synced, &mut report),
            Err(e) => problems.push(format!("vector index catch-up stopped: {e}")),
        }
    }
    (report, problems)
}

/// Reads the store's corrections of texts into `versions` now, so that the first recall
/// after a catch-up does not.
fn read_corrections(store: &dyn MemoryStore, versions: &TextVersions) -> Option<String> {
    store
        .correction_count()
        .map_err(IndexError::from)
        .and_then(|n| versions.read_to(n))
        .err()
        .map(|e| format!("cannot read the store's corrections: {e}"))
}

/// What the user is told of episodes the indexes went on without.
fn unreadable_notice(report: &SyncReport) -> Option<String> {
    let first = report.unreadable.first()?;
    Some(format!(
        "{} episode(s) of the store cannot be read, and the indexes go on without them \
         (`strata check` lists every bad record); the first: {first}",
        report.unreadable.len()
    ))
}

/// [`sync_vectors`], with its progress (and its end) told to `warming` too.
fn embed_missing(
    store: &dyn MemoryStore,
    (vectors, embedder): (&Arc<dyn VectorStore>, &Arc<dyn Embedder>),
    warming: &Warming,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Synced, IndexError> {
    let mut told = |done: u64, total: u64| {
        warming.progress(done, total);
        progress(done, total);
    };
    let synced = sync_vectors(store, vectors.as_ref(), embedder.as_ref(), &mut told)?;
    warming.caught_up();
    Ok(synced)
}

/// This process's anonymous resident memory (its heap, mostly) in MiB, for the log.
fn heap_mb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            let line = status.lines().find(|l| l.starts_with("RssAnon:"))?;
            line.split_whitespace().nth(1)?.parse::<u64>().ok()
        })
        .map_or(0, |kib| kib / 1024)
}
