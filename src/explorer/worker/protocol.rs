//! What the explorer asks of its worker and what comes back.

use std::collections::HashMap;

use strum::{EnumCount, IntoStaticStr};

use crate::correct::{CorrectReport, CorrectionLine};
use crate::explorer::live::{CatchUp, Change};
use crate::learning::CodeUnit;
use crate::model::{EntityKey, Timestamp};
use crate::query::views::{
    EntityDetail, EpisodeDetail, StoreSummary, TimelineFilter, TimelineRows,
};
use crate::query::{Change as FeedItem, NearestLineage, QueryError, ReviewRow};
use crate::recall::{RecallRequest, RecallResponse};
use crate::store::{KnowledgeTime, StoreError};
use crate::telemetry::WarmSignal;

/// Why the store could not be opened, with its sources.
pub type OpenError = Box<dyn std::error::Error + Send + Sync>;

/// A read of the store that one blocking call answers.
#[derive(Clone, Debug)]
pub enum View {
    Stats,
    Timeline {
        filter: TimelineFilter,
        known_at: Option<Timestamp>,
        offset: usize,
        limit: usize,
    },
    Episode(String),
    /// An episode read to seed recall from (`recall.seed` on a row that is not the
    /// selection), which leaves the selection as it is.
    Seed(String),
    Lineage {
        fingerprint: String,
        known_at: Timestamp,
    },
    Entity(EntityKey),
    /// Supersessions known at K with their evidence and verdicts.
    Review {
        known_at: Timestamp,
    },
    /// What memory learned up to K, in knowledge-time order.
    Feed {
        until: Timestamp,
    },
}

#[derive(Clone, Debug)]
pub enum Request {
    View(View),
    Recall(RecallRequest),
    /// Whether the store changed since the last look; a change is answered once the recall
    /// indexes have caught up with it.
    Changes,
    /// The store's query history, from the data directory.
    LoadHistory,
    /// Adds a query (already in the form kept) to the store's query history.
    SaveQuery(String),
    /// Records a reviewer's correction, as one batch of one.
    Correct {
        line: CorrectionLine,
        at: KnowledgeTime,
    },
}

impl From<View> for Request {
    fn from(view: View) -> Self {
        Request::View(view)
    }
}

impl From<RecallRequest> for Request {
    fn from(recall: RecallRequest) -> Self {
        Request::Recall(recall)
    }
}

/// Requests of one kind supersede each other: only the newest answer is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, EnumCount, IntoStaticStr)]
#[strum(serialize_all = "snake_case")]
pub enum RequestKind {
    Stats,
    Timeline,
    Episode,
    Seed,
    Lineage,
    Entity,
    Recall,
    Changes,
    History,
    SaveQuery,
    Review,
    Feed,
    Correct,
}

impl RequestKind {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

impl std::fmt::Display for RequestKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl View {
    pub fn kind(&self) -> RequestKind {
        match self {
            View::Stats => RequestKind::Stats,
            View::Timeline { .. } => RequestKind::Timeline,
            View::Episode(_) => RequestKind::Episode,
            View::Seed(_) => RequestKind::Seed,
            View::Lineage { .. } => RequestKind::Lineage,
            View::Entity(_) => RequestKind::Entity,
            View::Review { .. } => RequestKind::Review,
            View::Feed { .. } => RequestKind::Feed,
        }
    }
}

impl Request {
    pub fn kind(&self) -> RequestKind {
        match self {
            Request::View(view) => view.kind(),
            Request::Recall(_) => RequestKind::Recall,
            Request::Changes => RequestKind::Changes,
            Request::LoadHistory => RequestKind::History,
            Request::SaveQuery(_) => RequestKind::SaveQuery,
            Request::Correct { .. } => RequestKind::Correct,
        }
    }
}

/// Why a call failed, with its source kept for the status bar and the log.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Query(#[from] QueryError),
    #[error("the store is not open")]
    NotOpen,
    #[error(transparent)]
    History(#[from] super::history_file::HistoryError),
    #[error("the {kind} call ended abnormally: {source}")]
    Aborted {
        kind: RequestKind,
        #[source]
        source: tokio::task::JoinError,
    },
}

impl CallError {
    /// The store error underneath, if there is one.
    pub fn store(&self) -> Option<&StoreError> {
        match self {
            CallError::Store(e) | CallError::Query(QueryError::Store(e)) => Some(e),
            _ => None,
        }
    }
}

pub type CallResult<T> = Result<T, CallError>;

#[derive(Debug)]
pub enum Reply {
    Opened {
        backend: String,
        notices: Vec<String>,
    },
    OpenFailed(OpenError),
    Progress(Progress),
    RecallReady {
        embedder: String,
        notices: Vec<String>,
    },
    Stats(CallResult<StoreSummary>),
    Timeline(CallResult<TimelineRows>),
    Episode(CallResult<Option<EpisodeDetail>>),
    Seed(CallResult<Option<EpisodeDetail>>),
    Lineage(CallResult<NearestLineage>),
    Entity(CallResult<EntityDetail>),
    /// The response, and the code units of the services each result implicated.
    Recall(Box<RecallResponse>, HashMap<String, Vec<CodeUnit>>),
    Changes(CallResult<Option<Change>>),
    /// Another process wrote to the store (news from the follower's timer).
    Changed(Change),
    /// The recall indexes caught up with the store.
    Indexed(CatchUp),
    /// The warm signal of the agents' recalls, read at opening and when it moves.
    Warm(WarmSignal),
    History(CallResult<Vec<String>>),
    QuerySaved(CallResult<()>),
    Review(CallResult<Vec<ReviewRow>>),
    Feed(CallResult<Vec<FeedItem>>),
    /// What a correction recorded, or why the store refused it.
    Corrected(CallResult<CorrectReport>),
}

impl Reply {
    /// The kind of request it answers; `None` for news nobody asked for.
    pub fn answers(&self) -> Option<RequestKind> {
        Some(match self {
            Reply::Stats(_) => RequestKind::Stats,
            Reply::Timeline(_) => RequestKind::Timeline,
            Reply::Episode(_) => RequestKind::Episode,
            Reply::Seed(_) => RequestKind::Seed,
            Reply::Lineage(_) => RequestKind::Lineage,
            Reply::Entity(_) => RequestKind::Entity,
            Reply::Recall(..) => RequestKind::Recall,
            Reply::Changes(_) => RequestKind::Changes,
            Reply::History(_) => RequestKind::History,
            Reply::QuerySaved(_) => RequestKind::SaveQuery,
            Reply::Review(_) => RequestKind::Review,
            Reply::Feed(_) => RequestKind::Feed,
            Reply::Corrected(_) => RequestKind::Correct,
            Reply::Opened { .. }
            | Reply::OpenFailed(_)
            | Reply::Progress(_)
            | Reply::RecallReady { .. }
            | Reply::Changed(_)
            | Reply::Indexed(_)
            | Reply::Warm(_) => return None,
        })
    }

    /// A name for event logs.
    pub fn name(&self) -> &'static str {
        match self {
            Reply::Opened { .. } => "opened",
            Reply::OpenFailed(_) => "open_failed",
            Reply::Progress(_) => "progress",
            Reply::RecallReady { .. } => "recall_ready",
            Reply::Changed(_) => "changed",
            Reply::Indexed(_) => "indexed",
            Reply::Warm(_) => "warm",
            answer => answer.answers().map_or("reply", RequestKind::as_str),
        }
    }

    /// The answer to `request` when it could not be carried out.
    pub fn failed(request: &Request, error: CallError) -> Reply {
        match request {
            Request::View(View::Stats) => Reply::Stats(Err(error)),
            Request::View(View::Timeline { .. }) => Reply::Timeline(Err(error)),
            Request::View(View::Episode(_)) => Reply::Episode(Err(error)),
            Request::View(View::Seed(_)) => Reply::Seed(Err(error)),
            Request::View(View::Lineage { .. }) => Reply::Lineage(Err(error)),
            Request::View(View::Entity(_)) => Reply::Entity(Err(error)),
            Request::Recall(r) => Reply::Recall(
                Box::new(RecallResponse::unavailable(r, &error.to_string())),
                HashMap::new(),
            ),
            Request::Changes => Reply::Changes(Err(error)),
            Request::LoadHistory => Reply::History(Err(error)),
            Request::SaveQuery(_) => Reply::QuerySaved(Err(error)),
            Request::View(View::Review { .. }) => Reply::Review(Err(error)),
            Request::View(View::Feed { .. }) => Reply::Feed(Err(error)),
            Request::Correct { .. } => Reply::Corrected(Err(error)),
        }
    }
}

/// How far a long step (indexing, embedding) has come, and how long the rest should take at
/// the pace so far.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Progress {
    pub label: &'static str,
    pub done: u64,
    pub total: u64,
    /// Seconds left at the pace so far, once there is a pace to go by.
    pub eta_secs: Option<u64>,
}

/// A reply, with the id of the request it answers (0 for news) and whether a newer
/// request of its kind made it stale.
#[derive(Debug)]
pub struct Envelope {
    pub id: u64,
    pub stale: bool,
    pub reply: Reply,
}
