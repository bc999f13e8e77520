//! The explorer's I/O layer: it only carries. Requests go to a background tokio runtime,
//! the views they ask for are read in batches ([`crate::query::views`]), redacted once on
//! the way out ([`crate::redact::Shown`]), and come back as [`Envelope`]s; the UI thread
//! never waits on them.

mod generations;
mod history_file;
mod protocol;

use std::collections::HashMap;
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use tokio::sync::{mpsc as tmpsc, watch};

pub use generations::Generations;
pub use history_file::{HistoryError, HistoryFile};
pub use protocol::{
    CallError, CallResult, Envelope, OpenError, Progress, Reply, Request, RequestKind, View,
};

use super::history::kept_form;
use super::live::{CatchUp, Follower, LiveRecall};
use crate::correct::{CorrectionBatch, CorrectionItem, CorrectionLine, WriteOrigin};
use crate::model::Timestamp;
use crate::query::lineage_within;
use crate::query::views::{self, TimelineCache};
use crate::recall::{RecallResponse, RecallStack};
use crate::redact::Shown;
use crate::store::{KnowledgeTime, MemoryStore};
use crate::telemetry::{CounterReader, WarmSignal};

/// Opens the store (and says what it did, e.g. seeding the demo memory).
pub type StoreOpener =
    Box<dyn FnOnce() -> Result<(Arc<dyn MemoryStore>, Vec<String>), OpenError> + Send>;
/// Opens recall over the store, reporting index catch-up progress.
pub type RecallOpener =
    Box<dyn FnOnce(Arc<dyn MemoryStore>, &mut dyn FnMut(u64, u64)) -> RecallStack + Send>;

#[derive(Clone, Debug, Default)]
pub struct WorkerOptions {
    /// Look for writes by other processes this often, and report them as
    /// [`Reply::Changed`]; `None`: only when asked ([`Request::Changes`]).
    pub follow_every: Option<Duration>,
    /// The store's query history file; `None`: the history lives as long as the explorer.
    pub history: Option<HistoryFile>,
    /// The agents' recall counters, for the warm signal in the status bar.
    pub counters: Option<CounterReader>,
}

/// A reply as it leaves the background, before the UI thread knows whether it is stale.
pub type Raw = (u64, Reply);

pub struct Worker {
    requests: tmpsc::UnboundedSender<(u64, Request)>,
    replies: crossbeam_channel::Receiver<Raw>,
    generations: Arc<Generations>,
    next_id: u64,
    pending: usize,
}

impl Worker {
    pub fn start(open_store: StoreOpener, open_recall: RecallOpener) -> std::io::Result<Worker> {
        Worker::start_with(open_store, open_recall, WorkerOptions::default())
    }

    pub fn start_with(
        open_store: StoreOpener,
        open_recall: RecallOpener,
        options: WorkerOptions,
    ) -> std::io::Result<Worker> {
        let (req_tx, req_rx) = tmpsc::unbounded_channel();
        let (rep_tx, rep_rx) = crossbeam_channel::unbounded();
        let generations = Arc::new(Generations::default());
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("strata-io")
            .enable_all()
            .build()?;
        let seen = generations.clone();
        thread::Builder::new()
            .name("strata-worker".into())
            .spawn(move || {
                runtime.block_on(serve(
                    open_store,
                    open_recall,
                    options,
                    seen,
                    req_rx,
                    rep_tx,
                ));
                runtime.shutdown_background();
            })?;
        Ok(Worker {
            requests: req_tx,
            replies: rep_rx,
            generations,
            next_id: 1,
            pending: 0,
        })
    }

    /// Queues a request, making older ones of its kind stale, and returns its id.
    pub fn send(&mut self, request: Request) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.generations.issue(request.kind(), id);
        self.pending += 1;
        if self.requests.send((id, request)).is_err() {
            tracing::warn!(id, "worker stopped; request dropped");
        }
        id
    }

    /// Requests sent and not yet answered, those made stale included.
    pub fn pending(&self) -> usize {
        self.pending
    }

    /// The channel replies arrive on, for a loop that waits on it beside other sources;
    /// each one goes through [`Worker::open`].
    pub fn receiver(&self) -> &crossbeam_channel::Receiver<Raw> {
        &self.replies
    }

    /// Marks a reply stale when a newer request of its kind was sent, and counts it answered.
    pub fn open(&mut self, (id, reply): Raw) -> Envelope {
        let stale = match reply.answers() {
            Some(kind) => {
                self.pending = self.pending.saturating_sub(1);
                !self.generations.is_current(kind, id)
            }
            None => false,
        };
        Envelope { id, stale, reply }
    }

    pub fn try_recv(&mut self) -> Option<Envelope> {
        let raw = self.replies.try_recv().ok()?;
        Some(self.open(raw))
    }

    /// Waits up to `timeout` for a reply; `None` when none came or the worker stopped.
    pub fn recv_timeout(&mut self, timeout: Duration) -> Option<Envelope> {
        let raw = self.replies.recv_timeout(timeout).ok()?;
        Some(self.open(raw))
    }
}

/// Where the background sends replies; each one is made fit to show on the way.
#[derive(Clone)]
struct Outbox(crossbeam_channel::Sender<Raw>);

impl Outbox {
    fn send(&self, id: u64, reply: Reply) {
        let _ = self.0.send((id, shown(reply)));
    }
}

/// The one place replies are redacted for display.
fn shown(reply: Reply) -> Reply {
    match reply {
        Reply::Timeline(r) => Reply::Timeline(r.map(Shown::shown)),
        Reply::Episode(r) => Reply::Episode(r.map(Shown::shown)),
        Reply::Seed(r) => Reply::Seed(r.map(Shown::shown)),
        Reply::Entity(r) => Reply::Entity(r.map(Shown::shown)),
        Reply::Recall(response, files) => Reply::Recall(
            Box::new(response.shown()),
            files.into_iter().map(|(fp, u)| (fp, u.shown())).collect(),
        ),
        Reply::Lineage(r) => Reply::Lineage(r.map(Shown::shown)),
        Reply::Review(r) => Reply::Review(r.map(Shown::shown)),
        Reply::Feed(r) => Reply::Feed(r.map(Shown::shown)),
        Reply::History(r) => {
            Reply::History(r.map(|entries| entries.iter().filter_map(|e| kept_form(e)).collect()))
        }
        other => other,
    }
}

async fn serve(
    open_store: StoreOpener,
    open_recall: RecallOpener,
    options: WorkerOptions,
    generations: Arc<Generations>,
    mut requests: tmpsc::UnboundedReceiver<(u64, Request)>,
    replies: crossbeam_channel::Sender<Raw>,
) {
    let out = Outbox(replies);
    let follower = Arc::new(Follower::default());
    let opened = {
        let follower = follower.clone();
        tokio::task::spawn_blocking(move || {
            let opened = open_store();
            if let Ok((store, _)) = &opened {
                follower.start(store.as_ref());
            }
            opened
        })
        .await
    };
    let store = match opened {
        Ok(Ok((store, notices))) => {
            out.send(
                0,
                Reply::Opened {
                    backend: store.describe(),
                    notices,
                },
            );
            Some(store)
        }
        Ok(Err(e)) => {
            out.send(0, Reply::OpenFailed(e));
            None
        }
        Err(e) => {
            out.send(0, Reply::OpenFailed(Box::new(e)));
            None
        }
    };
    let warm = WarmWatch {
        counters: options.counters.clone(),
        last: Arc::new(std::sync::Mutex::new(None)),
    };
    warm.look(&out).await;
    let (engine_tx, engine_rx) = watch::channel::<Option<Arc<LiveRecall>>>(None);
    if let Some(store) = &store {
        open_recall_in_background(store.clone(), open_recall, engine_tx, out.clone());
    }
    if let (Some(every), Some(store)) = (options.follow_every, &store) {
        tokio::spawn(follow(
            store.clone(),
            follower.clone(),
            engine_rx.clone(),
            every,
            out.clone(),
            warm.clone(),
        ));
    }
    let cache = Arc::new(TimelineCache::default());
    while let Some((id, request)) = requests.recv().await {
        let Some(store) = store.clone() else {
            out.send(id, Reply::failed(&request, CallError::NotOpen));
            continue;
        };
        let call = Call {
            id,
            store,
            engine: engine_rx.clone(),
            generations: generations.clone(),
            cache: cache.clone(),
            follower: follower.clone(),
            history: options.history.clone(),
            out: out.clone(),
        };
        tokio::spawn(async move {
            let reply = call.answer(request).await;
            call.out.send(id, reply);
        });
    }
}

/// Opens recall off the runtime's workers; vectors still behind are then embedded in the
/// background, beside recalls and the text and graph catch-ups, and everything is caught
/// up once more for what was written meanwhile.
fn open_recall_in_background(
    store: Arc<dyn MemoryStore>,
    open_recall: RecallOpener,
    engine: watch::Sender<Option<Arc<LiveRecall>>>,
    out: Outbox,
) {
    let handle = tokio::runtime::Handle::current();
    tokio::task::spawn_blocking(move || {
        let mut progress = progress_replies(out.clone(), "indexing");
        // Read before the indexes catch up, so a write during that is caught up later.
        let generation = store.generation().ok();
        let opened = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            open_recall(store.clone(), &mut progress)
        }));
        let Ok(stack) = opened else {
            // Dropping the sender answers waiting recalls with "unavailable".
            out.send(
                0,
                Reply::RecallReady {
                    embedder: "recall unavailable".into(),
                    notices: vec!["recall could not open (see strata.log)".into()],
                },
            );
            return;
        };
        out.send(
            0,
            Reply::RecallReady {
                embedder: stack.engine.embedder_label().to_string(),
                notices: stack.notices.clone(),
            },
        );
        let warming = stack.warming.reason().is_some();
        let live = Arc::new(LiveRecall::new(stack, generation));
        let _ = engine.send(Some(live.clone()));
        if !warming {
            return;
        }
        handle.spawn(async move {
            let warm = {
                let (live, store, out) = (live.clone(), store.clone(), out.clone());
                tokio::task::spawn_blocking(move || {
                    let mut progress = progress_replies(out, "embedding");
                    live.stack.warm(store.as_ref(), &mut progress)
                })
            };
            let vectors = warm.await.unwrap_or_default();
            out.send(
                0,
                Reply::Indexed(CatchUp {
                    vectors,
                    ..CatchUp::default()
                }),
            );
            live.forget_caught_up().await;
            live.catch_up(store, news(out)).await;
        });
    });
}

/// One request being answered, with what answering it may need.
struct Call {
    id: u64,
    store: Arc<dyn MemoryStore>,
    engine: watch::Receiver<Option<Arc<LiveRecall>>>,
    generations: Arc<Generations>,
    cache: Arc<TimelineCache>,
    follower: Arc<Follower>,
    history: Option<HistoryFile>,
    out: Outbox,
}

impl Call {
    async fn answer(&self, request: Request) -> Reply {
        let kind = request.kind();
        let aborted = |source| CallError::Aborted { kind, source };
        match request {
            Request::Recall(r) => {
                let Some(live) = self.recall_engine().await else {
                    return Reply::Recall(
                        Box::new(RecallResponse::unavailable(&r, "recall is unavailable")),
                        HashMap::new(),
                    );
                };
                // What was written just before the recall is found, unless catching up
                // takes longer than a leg may.
                let catch_up = live.catch_up(self.store.clone(), news(self.out.clone()));
                let _ = tokio::time::timeout(live.stack.engine.timeout, catch_up).await;
                let asked = r.clone();
                match tokio::spawn(async move { live.stack.engine.recall(&r).await }).await {
                    Ok(response) => {
                        let files = code_of(self.store.clone(), &response).await;
                        Reply::Recall(Box::new(response), files)
                    }
                    Err(e) => Reply::failed(&Request::Recall(asked), aborted(e)),
                }
            }
            Request::Changes => {
                let looked = {
                    let (store, follower) = (self.store.clone(), self.follower.clone());
                    tokio::task::spawn_blocking(move || follower.look(store.as_ref())).await
                };
                match looked {
                    Ok(Ok(Some(change))) => {
                        if let Some(live) = self.recall_engine().await {
                            live.catch_up(self.store.clone(), news(self.out.clone()))
                                .await;
                        }
                        Reply::Changes(Ok(Some(change)))
                    }
                    Ok(Ok(None)) => Reply::Changes(Ok(None)),
                    Ok(Err(e)) => Reply::Changes(Err(e.into())),
                    Err(e) => Reply::Changes(Err(aborted(e))),
                }
            }
            Request::LoadHistory | Request::SaveQuery(_) => {
                let asked = request.clone();
                let file = self.history.clone();
                let save = match request {
                    Request::SaveQuery(entry) => Some(entry),
                    _ => None,
                };
                tokio::task::spawn_blocking(move || keep_history(file.as_ref(), save))
                    .await
                    .unwrap_or_else(|e| Reply::failed(&asked, aborted(e)))
            }
            Request::Correct { line, at } => {
                let asked = Request::Correct {
                    line: line.clone(),
                    at,
                };
                let store = self.store.clone();
                tokio::task::spawn_blocking(move || {
                    Reply::Corrected(store.correct(&explorer_batch(line, at)).map_err(Into::into))
                })
                .await
                .unwrap_or_else(|e| Reply::failed(&asked, aborted(e)))
            }
            Request::View(view) => {
                let asked = Request::View(view.clone());
                let store = self.store.clone();
                let cache = self.cache.clone();
                let generations = self.generations.clone();
                let generation = self.follower.generation();
                let id = self.id;
                tokio::task::spawn_blocking(move || {
                    let current = || generations.is_current(kind, id);
                    read_view(store.as_ref(), view, &cache, generation, &current)
                })
                .await
                .unwrap_or_else(|e| Reply::failed(&asked, aborted(e)))
            }
        }
    }

    /// The recall stack once it has opened; `None` when it could not.
    async fn recall_engine(&self) -> Option<Arc<LiveRecall>> {
        let mut engine = self.engine.clone();
        engine.wait_for(|e| e.is_some()).await.ok()?.clone()
    }
}

/// Progress of a long step (`label`: indexing, embedding) as replies, with the time left
/// at the pace so far (after a second of it).
fn progress_replies(out: Outbox, label: &'static str) -> impl FnMut(u64, u64) + Send + 'static {
    let started = std::time::Instant::now();
    move |done, total| {
        let elapsed = started.elapsed();
        let eta_secs = (done > 0 && done < total && elapsed >= Duration::from_secs(1))
            .then(|| (elapsed.as_secs_f64() * (total - done) as f64 / done as f64).ceil() as u64);
        out.send(
            0,
            Reply::Progress(Progress {
                label,
                done,
                total,
                eta_secs,
            }),
        )
    }
}

/// Where a catch-up reports: indexing progress, and what it did when it did anything.
fn news(out: Outbox) -> super::live::Report {
    super::live::Report {
        progress: Box::new(progress_replies(out.clone(), "indexing")),
        done: Box::new(move |c: CatchUp| {
            if c != CatchUp::default() {
                out.send(0, Reply::Indexed(c));
            }
        }),
    }
}

/// Looks at the store's generation every `every` and reports what changed; then the
/// recall indexes catch up in the background.
async fn follow(
    store: Arc<dyn MemoryStore>,
    follower: Arc<Follower>,
    recall: watch::Receiver<Option<Arc<LiveRecall>>>,
    every: Duration,
    out: Outbox,
    warm: WarmWatch,
) {
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        warm.look(&out).await;
        let looked = {
            let store = store.clone();
            let follower = follower.clone();
            tokio::task::spawn_blocking(move || follower.look(store.as_ref())).await
        };
        match looked {
            Ok(Ok(Some(change))) => {
                out.send(0, Reply::Changed(change));
                let mut recall = recall.clone();
                let store = store.clone();
                let report = news(out.clone());
                tokio::spawn(async move {
                    let live = match recall.wait_for(|e| e.is_some()).await {
                        Ok(e) => e.clone(),
                        Err(_) => None,
                    };
                    if let Some(live) = live {
                        live.catch_up(store, report).await;
                    }
                });
            }
            Ok(Ok(None)) => {}
            Ok(Err(e)) => tracing::debug!(error = %e, "cannot read the store's generation"),
            Err(e) => tracing::warn!(error = %e, "looking for changes failed"),
        }
    }
}

/// The agents' warm signal, reported when it moves (other processes' recalls move it).
#[derive(Clone)]
struct WarmWatch {
    counters: Option<CounterReader>,
    last: Arc<std::sync::Mutex<Option<WarmSignal>>>,
}

impl WarmWatch {
    async fn look(&self, out: &Outbox) {
        let Some(counters) = self.counters.clone() else {
            return;
        };
        let read = tokio::task::spawn_blocking(move || counters.read()).await;
        let signal = match read {
            Ok(Ok((_, signal))) => signal,
            Ok(Err(e)) => {
                tracing::debug!(error = %e, "cannot read the warm signal");
                return;
            }
            Err(e) => {
                tracing::warn!(error = %e, "reading the warm signal failed");
                return;
            }
        };
        let Ok(mut last) = self.last.lock() else {
            return;
        };
        if last.as_ref() != Some(&signal) {
            *last = Some(signal.clone());
            out.send(0, Reply::Warm(signal));
        }
    }
}

/// Adds `save` to the query history, or reads it; with no file there is nothing to read
/// or keep.
fn keep_history(file: Option<&HistoryFile>, save: Option<String>) -> Reply {
    match (save, file) {
        (Some(entry), Some(file)) => Reply::QuerySaved(file.append(&entry).map_err(Into::into)),
        (Some(_), None) => Reply::QuerySaved(Ok(())),
        (None, Some(file)) => Reply::History(file.read().map_err(Into::into)),
        (None, None) => Reply::History(Ok(Vec::new())),
    }
}

/// One correction from the explorer: a person's, at the knowledge time given.
fn explorer_batch(line: CorrectionLine, at: KnowledgeTime) -> CorrectionBatch {
    CorrectionBatch {
        items: vec![CorrectionItem {
            origin: "explorer".into(),
            line,
        }],
        at,
        origin: WriteOrigin::Human,
    }
}

/// Lineage links read each way: more than the pane shows, far fewer than a chain of
/// thousands of recurring fixes holds.
const LINEAGE_LINKS: usize = 200;

/// Reads a view of the store.
fn read_view(
    store: &dyn MemoryStore,
    view: View,
    cache: &TimelineCache,
    generation: Option<u64>,
    current: &dyn Fn() -> bool,
) -> Reply {
    match view {
        View::Stats => Reply::Stats(views::summary(store).map_err(Into::into)),
        View::Timeline {
            filter,
            known_at,
            offset,
            limit,
        } => Reply::Timeline(
            views::timeline(
                store,
                &filter,
                known_at,
                (offset, limit),
                cache,
                generation,
                current,
            )
            .map_err(Into::into),
        ),
        View::Episode(fp) => Reply::Episode(views::episode(store, &fp).map_err(Into::into)),
        View::Seed(fp) => Reply::Seed(views::episode(store, &fp).map_err(Into::into)),
        View::Lineage {
            fingerprint,
            known_at,
        } => Reply::Lineage(
            lineage_within(store, &fingerprint, known_at, LINEAGE_LINKS).map_err(Into::into),
        ),
        View::Entity(key) => Reply::Entity(views::entity(store, key).map_err(Into::into)),
        View::Review { known_at } => {
            Reply::Review(crate::query::review(store, known_at, false).map_err(Into::into))
        }
        View::Feed { until } => {
            Reply::Feed(crate::query::changes(store, Timestamp::MIN, until).map_err(Into::into))
        }
    }
}

/// The files each recalled incident pointed at: code units of its implicated services.
async fn code_of(
    store: Arc<dyn MemoryStore>,
    response: &RecallResponse,
) -> HashMap<String, Vec<crate::learning::CodeUnit>> {
    let as_of = crate::model::AsOf {
        valid_at: response.valid_at,
        known_at: response.known_at,
    };
    let fps: Vec<String> = response
        .results
        .iter()
        .map(|r| r.fingerprint.clone())
        .collect();
    tokio::task::spawn_blocking(move || {
        fps.into_iter()
            .filter_map(|fp| {
                let units = store.episode_code_units(&fp, &as_of).ok()?;
                (!units.is_empty()).then_some((fp, units))
            })
            .collect()
    })
    .await
    .unwrap_or_default()
}
