//! The explorer's I/O layer. Store and recall calls run on a background tokio runtime and
//! come back as [`Envelope`]s on a channel; the UI thread never waits on them.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use tokio::sync::{mpsc as tmpsc, watch};

use super::live::{CatchUp, Change, Follower, LiveRecall};
use crate::model::{EntityKey, FactEdge, MemoryEpisode, Supersession, Timestamp};
use crate::query::{Lineage, lineage};
use crate::recall::{RecallRequest, RecallResponse, RecallStack};
use crate::redact::redact;
use crate::store::{MemoryStore, StoreStats, TimelineQuery};

/// Opens the store (and says what it did, e.g. seeding the demo memory).
pub type StoreOpener =
    Box<dyn FnOnce() -> Result<(Arc<dyn MemoryStore>, Vec<String>), String> + Send>;
/// Opens recall over the store, reporting index catch-up progress.
pub type RecallOpener =
    Box<dyn FnOnce(Arc<dyn MemoryStore>, &mut dyn FnMut(u64, u64)) -> RecallStack + Send>;

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct TimelineFilter {
    pub text: Option<String>,
    pub entity: Option<EntityKey>,
}

impl TimelineFilter {
    pub fn is_empty(&self) -> bool {
        self.text.is_none() && self.entity.is_none()
    }
}

/// Counts, and the span of time the timeline covers (for the as-of sliders).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StoreSummary {
    pub stats: StoreStats,
    pub earliest: Option<Timestamp>,
    pub latest: Option<Timestamp>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct TimelineRow {
    pub fingerprint: String,
    pub concluded_at: Timestamp,
    pub ingested_at: Timestamp,
    pub summary: String,
    /// It superseded an earlier episode's fact.
    pub supersedes: bool,
    /// A later episode superseded one of its facts.
    pub superseded: bool,
}

#[derive(Clone, Debug)]
pub struct TimelinePage {
    pub offset: usize,
    pub rows: Vec<TimelineRow>,
    /// Rows in the whole (filtered) timeline.
    pub total: usize,
}

#[derive(Clone, Debug)]
pub struct EpisodeDetail {
    pub episode: MemoryEpisode,
    pub lesson: Option<crate::learning::Lesson>,
    /// Every version of every skill triggered by one of the episode's entities.
    pub skills: Vec<crate::learning::Skill>,
    pub facts: Vec<FactEdge>,
    pub supersedes: Vec<Supersession>,
    pub superseded_by: Vec<Supersession>,
}

#[derive(Clone, Debug)]
pub struct EntityDetail {
    pub key: EntityKey,
    pub facts: Vec<FactEdge>,
    /// The episodes those facts belong to.
    pub episodes: HashMap<String, MemoryEpisode>,
}

#[derive(Clone, Debug)]
pub enum Request {
    Stats,
    Timeline {
        filter: TimelineFilter,
        known_at: Option<Timestamp>,
        offset: usize,
        limit: usize,
    },
    Episode(String),
    Lineage {
        fingerprint: String,
        known_at: Timestamp,
    },
    Entity(EntityKey),
    Recall(RecallRequest),
    /// Whether the store changed since the last look; a change is answered once the recall
    /// indexes have caught up with it.
    Changes,
}

impl Request {
    /// Requests of one kind supersede each other: only the newest answer is shown.
    pub fn kind(&self) -> &'static str {
        match self {
            Request::Stats => "stats",
            Request::Timeline { .. } => "timeline",
            Request::Episode(_) => "episode",
            Request::Lineage { .. } => "lineage",
            Request::Entity(_) => "entity",
            Request::Recall(_) => "recall",
            Request::Changes => "changes",
        }
    }
}

#[derive(Debug)]
pub enum Reply {
    Opened {
        backend: String,
        notices: Vec<String>,
    },
    OpenFailed(String),
    Progress {
        label: &'static str,
        done: u64,
        total: u64,
    },
    RecallReady {
        embedder: String,
        notices: Vec<String>,
    },
    Stats(Result<StoreSummary, String>),
    Timeline(Result<TimelinePage, String>),
    Episode(Result<Option<EpisodeDetail>, String>),
    Lineage(Result<Lineage, String>),
    Entity(Result<EntityDetail, String>),
    /// The response, and the code units of the services each result implicated.
    Recall(
        Box<RecallResponse>,
        HashMap<String, Vec<crate::learning::CodeUnit>>,
    ),
    Changes(Result<Option<Change>, String>),
    /// Another process wrote to the store (news from the follower's timer).
    Changed(Change),
    /// The recall indexes caught up with the store.
    Indexed(CatchUp),
}

impl Reply {
    pub fn kind(&self) -> &'static str {
        match self {
            Reply::Opened { .. } => "opened",
            Reply::OpenFailed(_) => "open_failed",
            Reply::Progress { .. } => "progress",
            Reply::RecallReady { .. } => "recall_ready",
            Reply::Stats(_) => "stats",
            Reply::Timeline(_) => "timeline",
            Reply::Episode(_) => "episode",
            Reply::Lineage(_) => "lineage",
            Reply::Entity(_) => "entity",
            Reply::Recall(..) => "recall",
            Reply::Changes(_) => "changes",
            Reply::Changed(_) => "changed",
            Reply::Indexed(_) => "indexed",
        }
    }

    /// Whether it answers a request (and so ends one pending call).
    pub fn answers_request(&self) -> bool {
        !matches!(
            self,
            Reply::Opened { .. }
                | Reply::OpenFailed(_)
                | Reply::Progress { .. }
                | Reply::RecallReady { .. }
                | Reply::Changed(_)
                | Reply::Indexed(_)
        )
    }
}

/// A reply, with the id of the request it answers (0 for unsolicited news).
#[derive(Debug)]
pub struct Envelope {
    pub id: u64,
    pub reply: Reply,
}

#[derive(Clone, Copy, Debug, Default)]
pub struct WorkerOptions {
    /// Look for writes by other processes this often, and report them as
    /// [`Reply::Changed`]; `None`: only when asked ([`Request::Changes`]).
    pub follow_every: Option<Duration>,
}

pub struct Worker {
    requests: tmpsc::UnboundedSender<(u64, Request)>,
    replies: mpsc::Receiver<Envelope>,
    next_id: u64,
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
        let (rep_tx, rep_rx) = mpsc::channel();
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("strata-io")
            .enable_all()
            .build()?;
        thread::Builder::new()
            .name("strata-worker".into())
            .spawn(move || {
                runtime.block_on(serve(open_store, open_recall, options, req_rx, rep_tx));
                runtime.shutdown_background();
            })?;
        Ok(Worker {
            requests: req_tx,
            replies: rep_rx,
            next_id: 1,
        })
    }

    /// Queues a request and returns its id.
    pub fn send(&mut self, request: Request) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        if self.requests.send((id, request)).is_err() {
            tracing::warn!(id, "worker stopped; request dropped");
        }
        id
    }

    pub fn try_recv(&self) -> Option<Envelope> {
        self.replies.try_recv().ok()
    }

    /// Blocks until a reply arrives; `None` when the worker has stopped.
    pub fn recv(&self) -> Option<Envelope> {
        self.replies.recv().ok()
    }

    pub fn recv_timeout(&self, timeout: std::time::Duration) -> Option<Envelope> {
        self.replies.recv_timeout(timeout).ok()
    }
}

async fn serve(
    open_store: StoreOpener,
    open_recall: RecallOpener,
    options: WorkerOptions,
    mut requests: tmpsc::UnboundedReceiver<(u64, Request)>,
    replies: mpsc::Sender<Envelope>,
) {
    let send = {
        let replies = replies.clone();
        move |id: u64, reply: Reply| {
            let _ = replies.send(Envelope { id, reply });
        }
    };
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
            send(
                0,
                Reply::Opened {
                    backend: store.describe(),
                    notices,
                },
            );
            Some(store)
        }
        Ok(Err(e)) => {
            send(0, Reply::OpenFailed(e));
            None
        }
        Err(e) => {
            send(
                0,
                Reply::OpenFailed(format!("opening the store panicked: {e}")),
            );
            None
        }
    };
    let (engine_tx, engine_rx) = watch::channel::<Option<Arc<LiveRecall>>>(None);
    if let Some(store) = &store {
        let store = store.clone();
        let send = send.clone();
        let handle = tokio::runtime::Handle::current();
        tokio::task::spawn_blocking(move || {
            let mut progress = progress_replies(send.clone(), "indexing");
            // Read before the indexes catch up, so a write during that is caught up later.
            let generation = store.generation().ok();
            let opened = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                open_recall(store.clone(), &mut progress)
            }));
            match opened {
                Ok(stack) => {
                    send(
                        0,
                        Reply::RecallReady {
                            embedder: stack.engine.embedder_label().to_string(),
                            notices: stack.notices.clone(),
                        },
                    );
                    // Vectors still behind: embed them in the background, beside recalls and
                    // the text and graph catch-ups; then catch everything up once more, for
                    // what was written meanwhile.
                    let warming = stack.warming.reason().is_some();
                    let live = Arc::new(LiveRecall::new(stack, generation));
                    let _ = engine_tx.send(Some(live.clone()));
                    if warming {
                        let store = store.clone();
                        let send = send.clone();
                        handle.spawn(async move {
                            let warm = {
                                let (live, store, send) =
                                    (live.clone(), store.clone(), send.clone());
                                tokio::task::spawn_blocking(move || {
                                    let mut progress = progress_replies(send, "embedding");
                                    live.stack.warm(store.as_ref(), &mut progress)
                                })
                            };
                            let vectors = warm.await.unwrap_or_default();
                            send(
                                0,
                                Reply::Indexed(CatchUp {
                                    vectors,
                                    ..CatchUp::default()
                                }),
                            );
                            live.forget_caught_up().await;
                            live.catch_up(store, news(send)).await;
                        });
                    }
                }
                // Dropping the sender answers waiting recalls with "unavailable".
                Err(_) => send(
                    0,
                    Reply::RecallReady {
                        embedder: "recall unavailable".into(),
                        notices: vec!["recall could not open (see strata.log)".into()],
                    },
                ),
            }
        });
    }
    if let (Some(every), Some(store)) = (options.follow_every, &store) {
        tokio::spawn(follow(
            store.clone(),
            follower.clone(),
            engine_rx.clone(),
            every,
            send.clone(),
        ));
    }
    let latest = Arc::new(Latest::default());
    let cache = Arc::new(std::sync::Mutex::new(None::<FilteredTimeline>));
    while let Some((id, request)) = requests.recv().await {
        let send = send.clone();
        let Some(store) = store.clone() else {
            send(id, unavailable(&request, "the store is not open"));
            continue;
        };
        latest.set(request.kind(), id);
        let mut engine_rx = engine_rx.clone();
        let latest = latest.clone();
        let cache = cache.clone();
        let follower = follower.clone();
        tokio::spawn(async move {
            let failed = |request: &Request, e: tokio::task::JoinError| {
                tracing::error!(kind = request.kind(), error = %e, "background call failed");
                unavailable(request, &format!("the {} call failed: {e}", request.kind()))
            };
            let reply = match request {
                Request::Recall(r) => {
                    let engine = match engine_rx.wait_for(|e| e.is_some()).await {
                        Ok(e) => e.clone(),
                        Err(_) => None,
                    };
                    match engine {
                        Some(live) => {
                            // What was written just before the recall is found, unless
                            // catching up takes longer than a leg may.
                            let catch_up = live.catch_up(store.clone(), news(send.clone()));
                            let _ = tokio::time::timeout(live.stack.engine.timeout, catch_up).await;
                            let asked = r.clone();
                            match tokio::spawn(async move { live.stack.engine.recall(&r).await })
                                .await
                            {
                                Ok(mut response) => {
                                    for result in &mut response.results {
                                        result.summary = redact(&result.summary).into_owned();
                                    }
                                    response.query = redact(&response.query).into_owned();
                                    for s in &mut response.skills {
                                        s.name = redact(&s.name).into_owned();
                                        s.shared = s
                                            .shared
                                            .iter()
                                            .map(|x| redact(x).into_owned())
                                            .collect();
                                    }
                                    let files = code_of(store.clone(), &response).await;
                                    Reply::Recall(Box::new(response), files)
                                }
                                Err(e) => failed(&Request::Recall(asked), e),
                            }
                        }
                        None => unavailable(&Request::Recall(r), "recall is unavailable"),
                    }
                }
                Request::Changes => {
                    let looked = {
                        let store = store.clone();
                        tokio::task::spawn_blocking(move || follower.look(store.as_ref())).await
                    };
                    match looked {
                        Ok(Ok(Some(change))) => {
                            let live = match engine_rx.wait_for(|e| e.is_some()).await {
                                Ok(e) => e.clone(),
                                Err(_) => None,
                            };
                            if let Some(live) = live {
                                live.catch_up(store.clone(), news(send.clone())).await;
                            }
                            Reply::Changes(Ok(Some(change)))
                        }
                        Ok(Ok(None)) => Reply::Changes(Ok(None)),
                        Ok(Err(e)) => Reply::Changes(Err(e.to_string())),
                        Err(e) => failed(&Request::Changes, e),
                    }
                }
                other => {
                    let asked = other.clone();
                    let current = move || latest.is(asked.kind(), id);
                    let asked = other.clone();
                    let generation = follower.generation();
                    tokio::task::spawn_blocking(move || {
                        answer(store.as_ref(), other, &cache, generation, &current)
                    })
                    .await
                    .unwrap_or_else(|e| failed(&asked, e))
                }
            };
            send(id, reply);
        });
    }
}

/// The newest request id of each kind, so work for a replaced request can stop early.
#[derive(Default)]
struct Latest(std::sync::Mutex<HashMap<&'static str, u64>>);

impl Latest {
    fn set(&self, kind: &'static str, id: u64) {
        if let Ok(mut m) = self.0.lock() {
            m.insert(kind, id);
        }
    }

    fn is(&self, kind: &'static str, id: u64) -> bool {
        self.0.lock().map_or(true, |m| m.get(kind) == Some(&id))
    }
}

/// The matching episodes of the last filtered timeline, so paging through it reads
/// no episode twice.
struct FilteredTimeline {
    filter: TimelineFilter,
    known_at: Option<Timestamp>,
    /// The store's generation as the follower last saw it when the list was built.
    generation: Option<u64>,
    fingerprints: Vec<String>,
}

/// The filtered-timeline cache, and the generation a hit must have been built at.
struct CacheAt<'a> {
    cache: &'a std::sync::Mutex<Option<FilteredTimeline>>,
    generation: Option<u64>,
}

fn unavailable(request: &Request, why: &str) -> Reply {
    let why = why.to_string();
    match request {
        Request::Stats => Reply::Stats(Err(why)),
        Request::Timeline { .. } => Reply::Timeline(Err(why)),
        Request::Episode(_) => Reply::Episode(Err(why)),
        Request::Lineage { .. } => Reply::Lineage(Err(why)),
        Request::Entity(_) => Reply::Entity(Err(why)),
        Request::Recall(r) => Reply::Recall(
            Box::new(RecallResponse::unavailable(r, &why)),
            HashMap::new(),
        ),
        Request::Changes => Reply::Changes(Err(why)),
    }
}

/// Progress of a long step (`label`: indexing, embedding) as replies.
fn progress_replies(
    send: impl Fn(u64, Reply) + Send + 'static,
    label: &'static str,
) -> impl FnMut(u64, u64) + Send + 'static {
    move |done, total| send(0, Reply::Progress { label, done, total })
}

/// Where a catch-up reports: indexing progress, and what it did when it did anything.
fn news(send: impl Fn(u64, Reply) + Clone + Send + Sync + 'static) -> super::live::Report {
    super::live::Report {
        progress: Box::new(progress_replies(send.clone(), "indexing")),
        done: Box::new(move |c: CatchUp| {
            if c != CatchUp::default() {
                send(0, Reply::Indexed(c));
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
    send: impl Fn(u64, Reply) + Clone + Send + Sync + 'static,
) {
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let looked = {
            let store = store.clone();
            let follower = follower.clone();
            tokio::task::spawn_blocking(move || follower.look(store.as_ref())).await
        };
        match looked {
            Ok(Ok(Some(change))) => {
                send(0, Reply::Changed(change));
                let mut recall = recall.clone();
                let store = store.clone();
                let report = news(send.clone());
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

fn answer(
    store: &dyn MemoryStore,
    request: Request,
    cache: &std::sync::Mutex<Option<FilteredTimeline>>,
    generation: Option<u64>,
    current: &dyn Fn() -> bool,
) -> Reply {
    let text = |e: crate::store::StoreError| e.to_string();
    match request {
        Request::Stats => Reply::Stats(summary(store).map_err(text)),
        Request::Timeline {
            filter,
            known_at,
            offset,
            limit,
        } => Reply::Timeline(
            timeline(
                store,
                &filter,
                known_at,
                offset,
                limit,
                &CacheAt { cache, generation },
                current,
            )
            .map_err(text),
        ),
        Request::Episode(fp) => Reply::Episode(episode(store, &fp).map_err(text)),
        Request::Lineage {
            fingerprint,
            known_at,
        } => Reply::Lineage(lineage(store, &fingerprint, known_at).map_err(|e| e.to_string())),
        Request::Entity(key) => Reply::Entity(entity(store, key).map_err(text)),
        Request::Recall(r) => unavailable(&Request::Recall(r), "recall runs on its own task"),
        Request::Changes => unavailable(
            &Request::Changes,
            "changes are looked for on their own task",
        ),
    }
}

fn row(store: &dyn MemoryStore, e: MemoryEpisode) -> Result<TimelineRow, crate::store::StoreError> {
    let supersedes = !store.supersedes(&e.incident_fingerprint)?.is_empty();
    let superseded = !store.superseded_by(&e.incident_fingerprint)?.is_empty();
    let summary = redact(e.summary_nl.lines().next().unwrap_or_default()).into_owned();
    Ok(TimelineRow {
        summary: summary.chars().take(240).collect(),
        fingerprint: e.incident_fingerprint,
        concluded_at: e.concluded_at,
        ingested_at: e.ingested_at,
        supersedes,
        superseded,
    })
}

const SCAN_CHUNK: usize = 5_000;

/// A page of the timeline. Unfiltered, read straight from the store's timeline index;
/// filtered, the matching list is built once (and abandoned as soon as a newer request
/// replaces this one), then paged from memory.
fn timeline(
    store: &dyn MemoryStore,
    filter: &TimelineFilter,
    known_at: Option<Timestamp>,
    offset: usize,
    limit: usize,
    at: &CacheAt<'_>,
    current: &dyn Fn() -> bool,
) -> Result<TimelinePage, crate::store::StoreError> {
    if filter.is_empty() && known_at.is_none() {
        let total = store.stats()?.episodes as usize;
        let episodes = store.timeline(&TimelineQuery {
            entity: None,
            known_at: None,
            offset,
            limit,
        })?;
        let rows = episodes
            .into_iter()
            .map(|e| row(store, e))
            .collect::<Result<Vec<_>, _>>()?;
        return Ok(TimelinePage {
            offset,
            rows,
            total,
        });
    }
    let mut cached = at.cache.lock().map_err(|_| {
        crate::store::StoreError::Backend(
            "the timeline cache was poisoned by an earlier failure".into(),
        )
    })?;
    let hit = cached.as_ref().is_some_and(|c| {
        c.filter == *filter && c.known_at == known_at && c.generation == at.generation
    });
    if !hit {
        let needle = filter.text.as_ref().map(|t| t.to_lowercase());
        let mut matching = Vec::new();
        let mut scanned = 0;
        loop {
            if !current() {
                return Ok(TimelinePage {
                    offset,
                    rows: Vec::new(),
                    total: 0,
                });
            }
            let chunk = store.timeline(&TimelineQuery {
                entity: filter.entity.clone(),
                known_at,
                offset: scanned,
                limit: SCAN_CHUNK,
            })?;
            let done = chunk.len() < SCAN_CHUNK;
            scanned += chunk.len();
            matching.extend(
                chunk
                    .into_iter()
                    .filter(|e| {
                        needle.as_ref().is_none_or(|n| {
                            e.incident_fingerprint.to_lowercase().contains(n)
                                || e.summary_nl.to_lowercase().contains(n)
                                || e.resolution_nl.to_lowercase().contains(n)
                        })
                    })
                    .map(|e| e.incident_fingerprint),
            );
            if done {
                break;
            }
        }
        *cached = Some(FilteredTimeline {
            filter: filter.clone(),
            known_at,
            generation: at.generation,
            fingerprints: matching,
        });
    }
    let Some(list) = cached.as_ref() else {
        return Ok(TimelinePage {
            offset,
            rows: Vec::new(),
            total: 0,
        });
    };
    let mut rows = Vec::with_capacity(limit.min(list.fingerprints.len()));
    for fp in list.fingerprints.iter().skip(offset).take(limit) {
        if let Some(e) = store.episode(fp)? {
            rows.push(row(store, e)?);
        }
    }
    Ok(TimelinePage {
        offset,
        total: list.fingerprints.len(),
        rows,
    })
}

fn episode(
    store: &dyn MemoryStore,
    fp: &str,
) -> Result<Option<EpisodeDetail>, crate::store::StoreError> {
    let Some(episode) = store.episode(fp)? else {
        return Ok(None);
    };
    let lesson = store.lesson(fp)?.map(|mut l| {
        l.text = redact(&l.text).into_owned();
        l.cites = l.cites.iter().map(|c| redact(c).into_owned()).collect();
        l
    });
    let facts = store.facts(fp)?;
    // Every version of the skills whose triggers, in any version, touch the episode: the
    // pane picks the version current at K before matching.
    let versions = store.skills()?;
    let touched: std::collections::BTreeSet<&str> = versions
        .iter()
        .filter(|s| facts.iter().any(|f| s.trigger_entities.contains(&f.entity)))
        .map(|s| s.name.as_str())
        .collect();
    let skills = versions
        .iter()
        .filter(|s| touched.contains(s.name.as_str()))
        .cloned()
        .map(|mut s| {
            s.name = redact(&s.name).into_owned();
            s.steps = s.steps.iter().map(|x| redact(x).into_owned()).collect();
            s
        })
        .collect();
    Ok(Some(EpisodeDetail {
        lesson,
        skills,
        facts,
        supersedes: store.supersedes(fp)?,
        superseded_by: store.superseded_by(fp)?,
        episode: redact_episode(episode),
    }))
}

fn entity(
    store: &dyn MemoryStore,
    key: EntityKey,
) -> Result<EntityDetail, crate::store::StoreError> {
    let facts = store.entity_facts(&key)?;
    let mut episodes = HashMap::new();
    for f in &facts {
        if !episodes.contains_key(&f.episode)
            && let Some(e) = store.episode(&f.episode)?
        {
            episodes.insert(f.episode.clone(), redact_episode(e));
        }
    }
    Ok(EntityDetail {
        key,
        facts,
        episodes,
    })
}

fn summary(store: &dyn MemoryStore) -> Result<StoreSummary, crate::store::StoreError> {
    let stats = store.stats()?;
    let page = |offset: usize| {
        store.timeline(&TimelineQuery {
            entity: None,
            known_at: None,
            offset,
            limit: 1,
        })
    };
    let latest = page(0)?.first().map(|e| e.concluded_at);
    let earliest = page((stats.episodes as usize).saturating_sub(1))?
        .first()
        .map(|e| e.t_valid.min(e.concluded_at));
    Ok(StoreSummary {
        stats,
        earliest,
        latest,
    })
}

/// Free text is redacted again on its way to the screen, whatever the store holds.
fn redact_episode(mut e: MemoryEpisode) -> MemoryEpisode {
    e.summary_nl = redact(&e.summary_nl).into_owned();
    e.resolution_nl = redact(&e.resolution_nl).into_owned();
    e
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
                let units: Vec<crate::learning::CodeUnit> = store
                    .episode_code_units(&fp, &as_of)
                    .ok()?
                    .into_iter()
                    .map(|mut u| {
                        u.repo = redact(&u.repo).into_owned();
                        u.path = redact(&u.path).into_owned();
                        u
                    })
                    .collect();
                (!units.is_empty()).then_some((fp, units))
            })
            .collect()
    })
    .await
    .unwrap_or_default()
}
