//! The tools and resources. Every tool reads or appends; none deletes or rewrites (history
//! is closed, never removed). Everything returned is redacted on the way out.

use std::sync::Arc;

use rmcp::handler::server::common::{schema_for_output, schema_for_type};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ErrorCode, Implementation, JsonObject,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource,
    ResourceContents, ResourceTemplate, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, tool, tool_handler, tool_router};
use serde::Serialize;
use serde_json::{Value, json};

use super::access::{Access, Role};
use super::answers::{CodeUnits, Skills};
use super::params::{
    ArgumentError, CodeParams, EpisodeParams, RecallParams, SkillsParams, TimelineParams,
};
use super::resources::{self, ResourceUri};
use crate::explorer::live::{LiveRecall, Report};
use crate::ingest::{self, IngestFailure, RecordLimits};
use crate::learning::LessonView;
use crate::learning::skill::listed;
use crate::model::Timestamp;
use crate::query::{FactsReport, Lineage, TimelinePage};
use crate::recall::{RecallRequest, RecallResponse};
use crate::store::{ApplyReport, KnowledgeTime, MemoryStore, StoreError};

/// What time a call is answered at, and what knowledge time a write records.
#[derive(Clone, Copy, Debug)]
pub enum Clock {
    /// The machine's clock, read at each call.
    Wall,
    /// `--now`: the same time for every call (tests, demos, replays).
    Fixed(Timestamp),
}

impl Clock {
    pub fn now(self) -> Timestamp {
        match self {
            Clock::Wall => Timestamp::now(),
            Clock::Fixed(t) => t,
        }
    }

    /// The knowledge time a write records: on the machine's clock, when it commits (a
    /// `record_incident` that waits for an ingest in another process is stamped after it).
    pub fn knowledge_time(self) -> KnowledgeTime {
        match self {
            Clock::Wall => KnowledgeTime::AtCommit,
            Clock::Fixed(t) => KnowledgeTime::At(t),
        }
    }
}

/// The memory the server answers from: the store, recall over it, and the rules for writes.
pub struct Memory {
    pub store: Arc<dyn MemoryStore>,
    pub recall: Arc<LiveRecall>,
    pub clock: Clock,
    pub limits: RecordLimits,
    /// Where the store is, for the summary (credentials masked).
    pub describe: String,
    /// The recall counters `/metrics` shows.
    pub counters: crate::telemetry::CounterReader,
}

#[derive(Clone)]
pub struct MemoryServer {
    memory: Arc<Memory>,
    tool_router: ToolRouter<Self>,
}

/// A tool's answer: JSON (redacted) as structured content and as text.
fn answer<T: Serialize>(value: &T) -> Result<CallToolResult, ErrorData> {
    let mut value = serde_json::to_value(value)
        .map_err(|e| internal(format!("cannot encode the answer: {e}")))?;
    crate::redact::redact_json(&mut value);
    Ok(CallToolResult::structured(value))
}

/// A tool error the caller can act on: what was wrong, field by field. Nothing was written.
fn refusal(message: &str, errors: Value) -> CallToolResult {
    let mut value = json!({ "error": message, "errors": errors });
    crate::redact::redact_json(&mut value);
    CallToolResult::structured_error(value)
}

fn argument(e: ArgumentError) -> CallToolResult {
    refusal(
        &e.to_string(),
        json!([{ "field": e.field, "message": e.message }]),
    )
}

fn failed(what: &str, e: impl std::fmt::Display) -> CallToolResult {
    refusal(&format!("{what}: {e}"), json!([]))
}

/// A protocol error whose message may carry data (a key in a store error): redacted.
fn internal(message: impl std::fmt::Display) -> ErrorData {
    ErrorData::internal_error(
        crate::redact::redact(&message.to_string()).into_owned(),
        None,
    )
}

/// Runs store I/O off the async workers.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, ErrorData> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| internal(format!("the store call stopped: {e}")))
}

/// A read tool's answer: `read` runs off the async workers; its error (an unknown episode, a
/// store that failed) is the tool's error, named by `tool`.
async fn read<T: Serialize + Send + 'static, E: std::fmt::Display + Send + 'static>(
    tool: &str,
    read: impl FnOnce() -> Result<T, E> + Send + 'static,
) -> Result<CallToolResult, ErrorData> {
    match blocking(read).await? {
        Ok(value) => answer(&value),
        Err(e) => Ok(failed(tool, e)),
    }
}

/// Unwraps a checked argument or returns the tool error naming it.
macro_rules! checked {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(e) => return Ok(argument(e)),
        }
    };
}

#[tool_router]
impl MemoryServer {
    pub fn new(memory: Memory) -> Self {
        MemoryServer {
            memory: Arc::new(memory),
            tool_router: Self::tool_router(),
        }
    }

    fn now(&self) -> Timestamp {
        self.memory.clock.now()
    }

    /// One metrics scrape as Prometheus text: the counters every process on this memory
    /// keeps, the warm signal, and this server's store and indexes. Blocking reads.
    pub fn metrics(&self) -> Result<String, String> {
        let (counters, warm) = self.memory.counters.read().map_err(|e| e.to_string())?;
        let gauges = self.memory.recall.stack.gauges(self.memory.store.as_ref());
        crate::telemetry::metrics::render(crate::telemetry::metrics::Scrape {
            counters,
            warm,
            gauges,
        })
        .map_err(|e| format!("cannot encode the metrics: {e}"))
    }

    /// Recall past incidents like this one: semantic kNN, BM25 and a graph walk from the
    /// entities, fused by Reciprocal Rank Fusion. Returns each result with every leg's rank,
    /// each leg's status and latency, and skills the results suggest. No LLM is involved.
    #[tool(
        output_schema = schema_for_output::<RecallResponse>(),
        annotations(read_only_hint = true, open_world_hint = false))]
    async fn recall(
        &self,
        Parameters(params): Parameters<RecallParams>,
    ) -> Result<CallToolResult, ErrorData> {
        let args = checked!(params.check(self.now()));
        let live = &self.memory.recall;
        // Bounded like the explorer's: past the bound, recall answers from the indexes as
        // they stand, and the catch-up finishes on its own.
        let catch_up = live.catch_up(self.memory.store.clone(), quiet_report());
        let _ = tokio::time::timeout(live.stack.engine.timeout, catch_up).await;
        let request = RecallRequest {
            exclude: Vec::new(),
            text: args.query,
            entities: args.entities,
            as_of: args.as_of,
            k: args.k,
            legs: args.legs,
            fusion: args.fusion,
            stale: args.stale.unwrap_or(live.stack.engine.stale),
        };
        let engine = &live.stack.engine;
        let response = engine.recall(&request).await.handed_out(engine.mode);
        answer(&response)
    }

    /// Record one concluded incident (the `strata ingest` record format, fields at the top
    /// level; `code_units` may ride along). Validated exactly like `strata ingest`: an error
    /// names the field and what was expected, and nothing is written. Sending the same record
    /// again changes nothing. A record that supersedes an earlier one closes its facts and
    /// writes lineage; nothing is ever deleted.
    #[tool(
        output_schema = schema_for_output::<ApplyReport>(),
        input_schema = schema_for_type::<ingest::schema::IncidentRecord>(),
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn record_incident(
        &self,
        Parameters(record): Parameters<JsonObject>,
    ) -> Result<CallToolResult, ErrorData> {
        let now = self.memory.clock.knowledge_time();
        let memory = self.memory.clone();
        let written = blocking(move || {
            let prepared = ingest::prepare_record("record_incident", &record, now, &memory.limits)?;
            ingest::write(memory.store.as_ref(), &prepared.batch)
        })
        .await?;
        match written {
            Ok(applied) => {
                tracing::info!(new = applied.new_episodes, "record_incident");
                answer(&applied)
            }
            Err(IngestFailure::Invalid(errors)) => {
                let listed: Vec<Value> = errors
                    .iter()
                    .map(|e| json!({ "field": e.field, "message": e.message }))
                    .collect();
                let lines: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
                Ok(refusal(
                    &format!("{}\nrejected; nothing was written", lines.join("\n")),
                    Value::Array(listed),
                ))
            }
            Err(other) => Ok(failed("not recorded", other)),
        }
    }

    /// Correct memory, as a reviewer would: one of `retract_supersession` or
    /// `confirm_supersession` ({episode, prior, entity_type, entity_ref}), `correct_episode`
    /// ({incident_fingerprint, summary_nl?, resolution_nl?}) or `correct_fact` ({episode,
    /// relation, entity_type, entity_ref, t_valid?, t_invalid?}), with `reason` and `by`.
    /// Recorded as new knowledge at the current knowledge time: every answer as of an earlier
    /// K stays what it was. A refusal (no such supersession, already retracted and by whom)
    /// names it, and nothing is written.
    #[tool(
        output_schema = schema_for_output::<crate::correct::CorrectReport>(),
        input_schema = schema_for_type::<crate::correct::CorrectionLine>(),
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn correct_memory(
        &self,
        Parameters(correction): Parameters<JsonObject>,
    ) -> Result<CallToolResult, ErrorData> {
        let at = self.memory.clock.knowledge_time();
        let line = match crate::correct::parse_line("correct_memory", Value::Object(correction)) {
            Ok(line) => line,
            Err(e) => {
                return Ok(refusal(
                    &format!("{e}\nrejected; nothing was written"),
                    json!([{ "field": e.field, "message": e.message }]),
                ));
            }
        };
        let memory = self.memory.clone();
        let written = blocking(move || {
            memory.store.correct(&crate::correct::CorrectionBatch {
                items: vec![crate::correct::CorrectionItem {
                    origin: "correct_memory".into(),
                    line,
                }],
                at,
                origin: crate::correct::WriteOrigin::Agent,
            })
        })
        .await?;
        match written {
            Ok(report) => {
                tracing::info!(corrections = report.corrections, "correct_memory");
                answer(&report)
            }
            Err(StoreError::Rejected { field, message, .. }) => Ok(refusal(
                &format!("correct_memory: {field}: {message}\nrejected; nothing was written"),
                json!([{ "field": field, "message": message }]),
            )),
            Err(other) => Ok(failed("not recorded", other)),
        }
    }

    /// The episode's facts (MENTIONS, RESOLVED_BY) true at valid time V as known at
    /// knowledge time K, each with its interval, state and what superseded it.
    #[tool(
        output_schema = schema_for_output::<FactsReport>(),
        annotations(read_only_hint = true, open_world_hint = false))]
    async fn facts(
        &self,
        Parameters(params): Parameters<EpisodeParams>,
    ) -> Result<CallToolResult, ErrorData> {
        let as_of = checked!(params.as_of(self.now()));
        let store = self.memory.store.clone();
        read("facts", move || {
            crate::query::facts_as_of(store.as_ref(), &params.fingerprint, as_of)
        })
        .await
    }

    /// The supersession lineage of an episode as known at knowledge time K: what it closed,
    /// and what later closed it.
    #[tool(
        output_schema = schema_for_output::<Lineage>(),
        annotations(read_only_hint = true, open_world_hint = false))]
    async fn lineage(
        &self,
        Parameters(params): Parameters<EpisodeParams>,
    ) -> Result<CallToolResult, ErrorData> {
        let as_of = checked!(params.as_of(self.now()));
        let store = self.memory.store.clone();
        read("lineage", move || {
            crate::query::lineage(store.as_ref(), &params.fingerprint, as_of.known_at)
        })
        .await
    }

    /// The Reflexion lesson of a concluded episode as of (V, K): what happened, what fixed
    /// it, and whether a later incident superseded it.
    #[tool(
        output_schema = schema_for_output::<LessonView>(),
        annotations(read_only_hint = true, open_world_hint = false))]
    async fn lesson(
        &self,
        Parameters(params): Parameters<EpisodeParams>,
    ) -> Result<CallToolResult, ErrorData> {
        let as_of = checked!(params.as_of(self.now()));
        let store = self.memory.store.clone();
        read("lesson", move || {
            crate::query::lesson_as_of(store.as_ref(), &params.fingerprint, as_of)
        })
        .await
    }

    /// Runbooks (skills) current at knowledge time K, optionally only those an entity triggers.
    #[tool(
        output_schema = schema_for_output::<Skills>(),
        annotations(read_only_hint = true, open_world_hint = false))]
    async fn skills(
        &self,
        Parameters(params): Parameters<SkillsParams>,
    ) -> Result<CallToolResult, ErrorData> {
        let entity = checked!(params.entity());
        let known_at = checked!(params.known_at(self.now()));
        let store = self.memory.store.clone();
        read("skills", move || {
            let skills = listed(store.skills()?, known_at, params.all, entity.as_ref());
            Ok::<_, crate::store::StoreError>(Skills {
                count: skills.len(),
                skills,
            })
        })
        .await
    }

    /// Episodes, newest first, optionally only those about an entity or known at K.
    #[tool(
        output_schema = schema_for_output::<TimelinePage>(),
        annotations(read_only_hint = true, open_world_hint = false))]
    async fn timeline(
        &self,
        Parameters(params): Parameters<TimelineParams>,
    ) -> Result<CallToolResult, ErrorData> {
        let query = checked!(params.query());
        let store = self.memory.store.clone();
        read("timeline", move || {
            let known_at = query.known_at.unwrap_or(crate::model::Timestamp::MAX);
            store
                .timeline(&query)
                .map(|page| TimelinePage::of(page, known_at))
        })
        .await
    }

    /// Code units (repo, path, the owning service, the vector point id `embedding_ref`) of a
    /// service, of one embedding_ref, or of the services an episode implicated as of (V, K).
    #[tool(
        output_schema = schema_for_output::<CodeUnits>(),
        annotations(read_only_hint = true, open_world_hint = false))]
    async fn code(
        &self,
        Parameters(params): Parameters<CodeParams>,
    ) -> Result<CallToolResult, ErrorData> {
        let query = checked!(params.query(self.now()));
        let store = self.memory.store.clone();
        read("code", move || {
            crate::query::code_units(store.as_ref(), &query).map(|code_units| CodeUnits {
                count: code_units.len(),
                code_units,
            })
        })
        .await
    }
}

fn quiet_report() -> Report {
    Report {
        progress: Box::new(|_, _| {}),
        done: Box::new(|caught_up| {
            for problem in caught_up.problems {
                tracing::warn!(%problem, "recall index catch-up");
            }
        }),
    }
}

/// What the caller may do: over HTTP, what its token grants (the HTTP layer puts it on every
/// request it lets through; a request without one may only read); over stdio, everything (the
/// host started the process).
fn access_of(context: &RequestContext<RoleServer>) -> Access {
    match context.extensions.get::<axum::http::request::Parts>() {
        None => Access::open(),
        Some(parts) => parts.extensions.get::<Access>().cloned().unwrap_or(Access {
            name: None,
            role: Role::ReadOnly,
        }),
    }
}

/// A tool that writes: any not annotated read-only (`record_incident`, and whatever write
/// tool comes next).
fn writes(tool: &Tool) -> bool {
    tool.annotations.as_ref().and_then(|a| a.read_only_hint) != Some(true)
}

fn may_call(access: &Access, tool: &Tool) -> bool {
    access.role == Role::ReadWrite || !writes(tool)
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for MemoryServer {
    /// A read-only token lists only the tools it may call.
    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let access = access_of(&context);
        let tools = self
            .tool_router
            .list_all()
            .into_iter()
            .filter(|tool| may_call(&access, tool))
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    /// Refuses a write tool to a read-only token, before anything runs.
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if let Some(tool) = self.tool_router.get(&request.name) {
            let access = access_of(&context);
            if !may_call(&access, tool) {
                tracing::warn!(tool = %request.name, by = access.holder(), "refused a write to a read-only token");
                return Err(ErrorData::new(
                    ErrorCode::INVALID_REQUEST,
                    format!(
                        "{} writes to memory and the token {:?} is read-only; nothing was written (a read-write `rw` token may call it)",
                        request.name,
                        access.holder()
                    ),
                    Some(json!({
                        "tool": request.name,
                        "token": access.holder(),
                        "role": access.role.as_str(),
                    })),
                ));
            }
            if writes(tool) {
                tracing::info!(tool = %request.name, by = access.holder(), "write tool called");
            }
        }
        let call = ToolCallContext::new(self, request, context);
        self.tool_router.call(call).await
    }

    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .build(),
        )
        .with_server_info(Implementation::new("strata", env!("CARGO_PKG_VERSION")))
        .with_instructions(
            "Strata: the bi-temporal memory of an incident-response agent. `recall` finds past \
             incidents like the current one (no LLM on the path); `record_incident` records a \
             concluded one; `correct_memory` records a reviewer's correction as new knowledge; `facts`, \
             `lineage`, `lesson`, `skills`, `timeline` and `code` read \
             memory as of a valid time and a knowledge time. Nothing is ever deleted.",
        )
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let store = self.memory.store.clone();
        let listed = blocking(move || resources::listed(store.as_ref())).await?;
        listed
            .map(ListResourcesResult::with_all_items)
            .map_err(internal)
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(ListResourceTemplatesResult::with_all_items(vec![
            ResourceTemplate::new(resources::EPISODE_TEMPLATE, "episode")
                .with_description(
                    "One episode by incident_fingerprint (percent-encoded), with its facts as \
                     known now",
                )
                .with_mime_type("application/json"),
        ]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let uri = request.uri.clone();
        let Some(what) = ResourceUri::parse(&uri) else {
            return Err(ErrorData::resource_not_found(
                crate::redact::redact(&format!(
                    "no resource {uri:?}; expected {} or {}",
                    resources::SUMMARY_URI,
                    resources::EPISODE_TEMPLATE
                ))
                .into_owned(),
                None,
            ));
        };
        let memory = self.memory.clone();
        let now = self.now();
        let read = blocking(move || resources::read(&memory, &what, now)).await?;
        match read {
            Ok(Some(mut value)) => {
                crate::redact::redact_json(&mut value);
                Ok(ReadResourceResponse::Complete(ReadResourceResult::new(
                    vec![
                        ResourceContents::text(value.to_string(), uri)
                            .with_mime_type("application/json"),
                    ],
                )))
            }
            Ok(None) => Err(ErrorData::resource_not_found(
                crate::redact::redact(&format!("no episode for {uri:?}")).into_owned(),
                None,
            )),
            Err(e) => Err(internal(e)),
        }
    }
}

/// Resources a host may attach, as listed: the summary and the newest episodes.
pub(super) fn resource(uri: String, name: String, description: String) -> Resource {
    Resource::new(uri, name)
        .with_description(description)
        .with_mime_type("application/json")
}
