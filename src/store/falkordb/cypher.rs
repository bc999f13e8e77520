//! Every query the FalkorDB backend sends. Each is a constant: values travel only as
//! parameters, and labels and relationship types are spelled here, nowhere else.

/// Columns of an episode, in the order `read::episode` decodes them.
macro_rules! episode_columns {
    ($e:literal) => {
        concat!(
            $e,
            ".incident_fingerprint, ",
            $e,
            ".summary_nl, ",
            $e,
            ".resolution_nl, ",
            $e,
            ".concluded_at, ",
            $e,
            ".t_valid, ",
            $e,
            ".ingested_at, ",
            $e,
            ".source, ",
            $e,
            ".status, ",
            $e,
            ".confidence_score"
        )
    };
}

/// A fact edge `r` from `e` to `n`, and the episode whose supersession closed it (`x`).
macro_rules! fact_match {
    ($head:literal) => {
        concat!(
            $head,
            " OPTIONAL MATCH (x:MemoryEpisode)-[s:SUPERSEDES]->(e) \
             WHERE s.entity_type = n.entity_type AND s.entity_ref = n.entity_ref \
             AND s.t_valid = r.t_invalid AND s.ingested_at = r.expired_at \
             WITH e, r, n, min(x.incident_fingerprint) AS closer \
             RETURN e.incident_fingerprint, type(r), n.entity_type, n.entity_ref, r.t_valid, \
             r.t_invalid, r.ingested_at, r.expired_at, closer, r.source, r.status, r.confidence_score"
        )
    };
}

/// Columns of a `SUPERSEDES` edge `s` from `e` to `p`.
macro_rules! lineage_columns {
    () => {
        "e.incident_fingerprint, p.incident_fingerprint, s.entity_type, s.entity_ref, s.t_valid, \
         s.t_invalid, s.ingested_at, s.expired_at, s.source, s.status, s.confidence_score"
    };
}

/// Every indexed property: (label or relationship type, property, RANGE or VECTOR).
pub const LIST_INDEXES: &str = "CALL db.indexes() YIELD label, properties, types \
     UNWIND properties AS p UNWIND types[p] AS t RETURN label, p, t";

/// The range indexes the queries rely on: (label or relationship type, properties, statement).
pub const INDEXES: [(&str, &[&str], &str); 9] = [
    (
        "MemoryEpisode",
        &["incident_fingerprint", "concluded_at", "ingested_at"],
        "CREATE INDEX FOR (e:MemoryEpisode) ON (e.incident_fingerprint, e.concluded_at, e.ingested_at)",
    ),
    (
        "MemoryEntity",
        &["entity_type", "entity_ref"],
        "CREATE INDEX FOR (n:MemoryEntity) ON (n.entity_type, n.entity_ref)",
    ),
    (
        "MENTIONS",
        &["t_valid", "t_invalid", "ingested_at", "expired_at"],
        "CREATE INDEX FOR ()-[r:MENTIONS]-() ON (r.t_valid, r.t_invalid, r.ingested_at, r.expired_at)",
    ),
    (
        "RESOLVED_BY",
        &["t_valid", "t_invalid", "ingested_at", "expired_at"],
        "CREATE INDEX FOR ()-[r:RESOLVED_BY]-() ON (r.t_valid, r.t_invalid, r.ingested_at, r.expired_at)",
    ),
    (
        "SUPERSEDES",
        &["t_valid", "ingested_at"],
        "CREATE INDEX FOR ()-[r:SUPERSEDES]-() ON (r.t_valid, r.ingested_at)",
    ),
    ("Skill", &["name"], "CREATE INDEX FOR (k:Skill) ON (k.name)"),
    (
        "MemoryEpisode",
        &["ingest_seq"],
        "CREATE INDEX FOR (e:MemoryEpisode) ON (e.ingest_seq)",
    ),
    (
        "MemoryVersion",
        &["record"],
        "CREATE INDEX FOR (v:MemoryVersion) ON (v.record)",
    ),
    (
        "MemoryCorrection",
        &["sequence"],
        "CREATE INDEX FOR (c:MemoryCorrection) ON (c.sequence)",
    ),
];

pub const EPISODES: &str = concat!(
    "UNWIND $keys AS fp MATCH (e:MemoryEpisode {incident_fingerprint: fp}) RETURN ",
    episode_columns!("e")
);

/// When each of `$keys` concluded, without its text.
pub const EPISODE_DATES: &str = "UNWIND $keys AS fp MATCH (e:MemoryEpisode {incident_fingerprint: fp}) \
     RETURN e.incident_fingerprint, e.concluded_at";

pub const TIMELINE: &str = concat!(
    "MATCH (e:MemoryEpisode) WHERE e.ingested_at <= $K RETURN ",
    episode_columns!("e"),
    " ORDER BY e.concluded_at DESC, e.incident_fingerprint DESC SKIP $offset LIMIT $limit"
);

/// The timeline from its oldest end, for a page nearer that end than the newest.
pub const TIMELINE_OLDEST_FIRST: &str = concat!(
    "MATCH (e:MemoryEpisode) RETURN ",
    episode_columns!("e"),
    " ORDER BY e.concluded_at ASC, e.incident_fingerprint ASC SKIP $offset LIMIT $limit"
);

pub const TIMELINE_OF_ENTITY: &str = concat!(
    "MATCH (n:MemoryEntity {entity_type: $t, entity_ref: $r})<-[:MENTIONS|RESOLVED_BY]-(e:MemoryEpisode) \
     WHERE e.ingested_at <= $K WITH DISTINCT e RETURN ",
    episode_columns!("e"),
    " ORDER BY e.concluded_at DESC, e.incident_fingerprint DESC SKIP $offset LIMIT $limit"
);

pub const FACTS_OF_EPISODES: &str = fact_match!(
    "UNWIND $keys AS fp MATCH (e:MemoryEpisode {incident_fingerprint: fp})-[r:MENTIONS|RESOLVED_BY]->(n:MemoryEntity)"
);

pub const ENTITY_FACTS: &str = fact_match!(
    "MATCH (e:MemoryEpisode)-[r:MENTIONS|RESOLVED_BY]->(n:MemoryEntity {entity_type: $t, entity_ref: $r})"
);

pub const SUPERSEDES_OF_EPISODES: &str = concat!(
    "UNWIND $keys AS fp MATCH (e:MemoryEpisode {incident_fingerprint: fp})-[s:SUPERSEDES]->(p:MemoryEpisode) RETURN ",
    lineage_columns!()
);

/// For each of these fingerprints: how many lineage edges recorded by `$K` it wrote (it
/// superseded an earlier episode), and how many name it as the prior (a later episode
/// superseded it).
pub const SUPERSESSION_MARKS: &str = "UNWIND $keys AS fp \
     OPTIONAL MATCH (:MemoryEpisode {incident_fingerprint: fp})-[w:SUPERSEDES]->(:MemoryEpisode) \
     WHERE w.ingested_at <= $K \
     WITH fp, count(w) AS writes \
     OPTIONAL MATCH (:MemoryEpisode)-[p:SUPERSEDES]->(:MemoryEpisode {incident_fingerprint: fp}) \
     WHERE p.ingested_at <= $K \
     RETURN fp, writes, count(p)";

/// Lineage edges that name one of `$keys` as the prior.
pub const SUPERSEDED_BY_EPISODES: &str = concat!(
    "UNWIND $keys AS fp MATCH (e:MemoryEpisode)-[s:SUPERSEDES]->(p:MemoryEpisode {incident_fingerprint: fp}) RETURN ",
    lineage_columns!()
);

pub const SUPERSEDED_BY: &str = concat!(
    "MATCH (e:MemoryEpisode)-[s:SUPERSEDES]->(p:MemoryEpisode {incident_fingerprint: $fp}) RETURN ",
    lineage_columns!()
);

/// The ingest log: episodes in the order the store learned them. `ingest_seq` is the generation
/// of the batch that created an episode, so a later batch always comes after every earlier one,
/// even at the same knowledge time; an episode written without it (by another agent, or before
/// Strata stamped it) counts as 0 and orders by knowledge time and fingerprint. The last column
/// is the episode's place in that order, for the keyset cursor.
pub const EPISODES_FROM: &str = concat!(
    "MATCH (e:MemoryEpisode) RETURN ",
    episode_columns!("e"),
    ", coalesce(e.ingest_seq, 0) AS seq ORDER BY seq, e.ingested_at, e.incident_fingerprint SKIP $skip LIMIT $limit"
);

/// The rest of a cursor's batch in the ingest log: its `ingest_seq` (the index on it finds the
/// batch alone), after its (knowledge time, fingerprint). `toString` keeps the string
/// comparison off the range index, whose order for non-ASCII strings differs from `ORDER BY`'s
/// (FalkorDB 4.16).
pub const EPISODES_AFTER_KEY: &str = concat!(
    "MATCH (e:MemoryEpisode) WHERE e.ingest_seq = $seq \
     AND (e.ingested_at > $at OR (e.ingested_at = $at AND toString(e.incident_fingerprint) > $fp)) RETURN ",
    episode_columns!("e"),
    ", e.ingest_seq ORDER BY e.ingested_at, e.incident_fingerprint LIMIT $limit"
);

/// The ingest log's batches with `$after < ingest_seq <= $upto`: a window of generations, so a
/// page reads what it returns and not every later batch (which made catching up quadratic).
pub const EPISODES_IN_GENERATIONS: &str = concat!(
    "MATCH (e:MemoryEpisode) WHERE e.ingest_seq > $after AND e.ingest_seq <= $upto RETURN ",
    episode_columns!("e"),
    ", e.ingest_seq ORDER BY e.ingest_seq, e.ingested_at, e.incident_fingerprint LIMIT $limit"
);

pub const ENTITY_LINKS: &str = "MATCH (n:MemoryEntity {entity_type: $t, entity_ref: $r})<-[r:MENTIONS|RESOLVED_BY]-(e:MemoryEpisode) \
     RETURN e.incident_fingerprint, type(r), r.t_valid, r.t_invalid, r.ingested_at, r.expired_at, \
     e.concluded_at, e.ingested_at, e.t_valid";

/// [`ENTITY_LINKS`] of each entity in `$keys`, each row led by the entity's index there.
pub const ENTITY_LINKS_OF: &str = "UNWIND range(0, size($keys) - 1) AS i WITH i, $keys[i] AS k \
     MATCH (n:MemoryEntity {entity_type: k.t, entity_ref: k.r})<-[r:MENTIONS|RESOLVED_BY]-(e:MemoryEpisode) \
     RETURN i, e.incident_fingerprint, type(r), r.t_valid, r.t_invalid, r.ingested_at, r.expired_at, \
     e.concluded_at, e.ingested_at, e.t_valid";

/// Entities with at least `$min` fact edges, most first.
pub const HUBS: &str = "MATCH (n:MemoryEntity)<-[r:MENTIONS|RESOLVED_BY]-(:MemoryEpisode) \
     WITH n, count(r) AS links WHERE links >= $min \
     RETURN n.entity_type, n.entity_ref ORDER BY links DESC, n.entity_type, n.entity_ref";

pub const ENTITIES: &str = "MATCH (n:MemoryEntity) RETURN n.entity_type, n.entity_ref";

/// Every entity with its knowledge time, for export.
pub const ENTITY_RECORDS: &str = "MATCH (n:MemoryEntity) RETURN n.entity_type, n.entity_ref, n.ingested_at \
     ORDER BY n.entity_type, n.entity_ref";

pub const EXISTING_ENTITIES: &str = "UNWIND $keys AS k MATCH (n:MemoryEntity {entity_type: k.t, entity_ref: k.r}) \
     RETURN n.entity_type, n.entity_ref";

/// Statistics, one count per query: each is answered from FalkorDB's own counters or a
/// range index, where one chained query would walk every edge. In `StoreStats` order.
pub const STATS: [&str; 7] = [
    "MATCH (e:MemoryEpisode) RETURN count(e)",
    "MATCH (n:MemoryEntity) RETURN count(n)",
    "MATCH ()-[r:MENTIONS]->() RETURN count(r)",
    "MATCH ()-[r:RESOLVED_BY]->() RETURN count(r)",
    "MATCH ()-[r:SUPERSEDES]->() RETURN count(r)",
    // One type at a time: the range index answers these (t_invalid >= the smallest time).
    "MATCH ()-[r:MENTIONS]->() WHERE r.t_invalid >= -9223372036854775807 RETURN count(r)",
    "MATCH ()-[r:RESOLVED_BY]->() WHERE r.t_invalid >= -9223372036854775807 RETURN count(r)",
];

/// The latest knowledge time recorded: nothing may be written before it.
pub const HIGH_WATER: &str = "OPTIONAL MATCH (e:MemoryEpisode) WITH max(e.ingested_at) AS episodes \
     OPTIONAL MATCH (k:Skill) WITH episodes, max(k.recorded_at) AS skills \
     OPTIONAL MATCH (c:MemoryCorrection) RETURN episodes, skills, max(c.recorded_at)";

pub const LATEST_SKILLS: &str = "UNWIND $keys AS name MATCH (k:Skill {name: name}) \
     WITH name, max(k.version) AS v MATCH (k:Skill {name: name, version: v}) RETURN k.body";

/// Every version of the skills named in `$keys`.
pub const SKILL_VERSIONS: &str = "UNWIND $keys AS name MATCH (k:Skill {name: name}) RETURN k.body";

pub const CODE_UNITS: &str = "MATCH (u:CodeUnit) RETURN u.repo, u.path, u.service, u.embedding_ref \
     ORDER BY u.embedding_ref";

pub const SKILLS: &str = "MATCH (k:Skill) RETURN k.body ORDER BY k.name, k.version";

pub const CODE_UNITS_BY_REF: &str = "UNWIND $keys AS ref MATCH (u:CodeUnit {embedding_ref: ref}) \
     RETURN u.repo, u.path, u.service, u.embedding_ref";

pub const CODE_UNITS_OF_SERVICE: &str = "MATCH (u:CodeUnit {service: $service}) \
     RETURN u.repo, u.path, u.service, u.embedding_ref ORDER BY u.embedding_ref";

/// The store's identity and write generation, on one node that the first write creates.
pub const STORE_META: &str = "MATCH (m:StrataMeta {key: 'store'}) RETURN m.store_id, m.generation";

/// One batch, one query, sent in MULTI/EXEC (FalkorDB then runs it whole, with no other write in
/// between), so a batch lands whole or not at all. It lands only while the store is still at
/// $generation (0: no meta node yet), moving it on by one, and then returns one row; else it
/// writes nothing and returns none. The aggregate keeps the check out of the OPTIONAL MATCH
/// (FalkorDB 4.16 moves a `WITH m WHERE` filter into it, where a failed check yields a null
/// row instead of none). Every write is a MERGE on a natural key (rerunning a batch changes
/// nothing) or a SET that closes an interval or counts a generation; there is no DELETE.
pub const WRITE_BATCH: &str = "\
OPTIONAL MATCH (m:StrataMeta {key: 'store'}) WITH coalesce(max(m.generation), 0) AS seen \
  WHERE seen = $generation \
MERGE (meta:StrataMeta {key: 'store'}) ON CREATE SET meta.store_id = $store_id, meta.generation = 0 \
SET meta.generation = meta.generation + 1 \
FOREACH (x IN $episodes | MERGE (e:MemoryEpisode {incident_fingerprint: x.fp}) \
  ON CREATE SET e.summary_nl = x.summary, e.resolution_nl = x.resolution, e.concluded_at = x.concluded, \
  e.t_valid = x.tv, e.ingested_at = x.at, e.source = x.source, e.status = x.status, e.confidence_score = x.conf, \
  e.ingest_seq = meta.generation) \
FOREACH (x IN $entities | MERGE (n:MemoryEntity {entity_type: x.t, entity_ref: x.r}) ON CREATE SET n.ingested_at = x.at) \
FOREACH (x IN $mentions | MERGE (e:MemoryEpisode {incident_fingerprint: x.fp}) \
  MERGE (n:MemoryEntity {entity_type: x.t, entity_ref: x.r}) MERGE (e)-[f:MENTIONS]->(n) \
  ON CREATE SET f.t_valid = x.tv, f.t_invalid = x.ti, f.ingested_at = x.at, f.expired_at = x.ex, \
  f.source = x.source, f.status = x.status, f.confidence_score = x.conf) \
FOREACH (x IN $resolved | MERGE (e:MemoryEpisode {incident_fingerprint: x.fp}) \
  MERGE (n:MemoryEntity {entity_type: x.t, entity_ref: x.r}) MERGE (e)-[f:RESOLVED_BY]->(n) \
  ON CREATE SET f.t_valid = x.tv, f.t_invalid = x.ti, f.ingested_at = x.at, f.expired_at = x.ex, \
  f.source = x.source, f.status = x.status, f.confidence_score = x.conf) \
FOREACH (x IN $close_mentions | MERGE (e:MemoryEpisode {incident_fingerprint: x.fp}) \
  MERGE (n:MemoryEntity {entity_type: x.t, entity_ref: x.r}) MERGE (e)-[f:MENTIONS]->(n) \
  SET f.t_invalid = x.ti, f.expired_at = x.ex) \
FOREACH (x IN $close_resolved | MERGE (e:MemoryEpisode {incident_fingerprint: x.fp}) \
  MERGE (n:MemoryEntity {entity_type: x.t, entity_ref: x.r}) MERGE (e)-[f:RESOLVED_BY]->(n) \
  SET f.t_invalid = x.ti, f.expired_at = x.ex) \
FOREACH (x IN $lineage | MERGE (e:MemoryEpisode {incident_fingerprint: x.fp}) \
  MERGE (p:MemoryEpisode {incident_fingerprint: x.prior}) \
  MERGE (e)-[s:SUPERSEDES {entity_type: x.t, entity_ref: x.r}]->(p) \
  ON CREATE SET s.t_valid = x.tv, s.ingested_at = x.at, s.source = x.source, s.status = x.status, \
  s.confidence_score = x.conf) \
FOREACH (x IN $skills | MERGE (k:Skill {name: x.name, version: x.version}) \
  ON CREATE SET k.recorded_at = x.at, k.body = x.body) \
FOREACH (x IN $code_units | MERGE (u:CodeUnit {embedding_ref: x.ref}) \
  ON CREATE SET u.repo = x.repo, u.path = x.path, u.service = x.service) \
FOREACH (x IN $versions | MERGE (v:MemoryVersion {record: x.record, known_from: x.at}) \
  ON CREATE SET v.kind = x.kind, v.body = x.body) \
FOREACH (x IN $corrections | MERGE (c:MemoryCorrection {sequence: x.seq}) \
  ON CREATE SET c.recorded_at = x.at, c.body = x.body) \
RETURN meta.generation";

/// Every version of these records (see [`super::versions`]), each record's oldest first.
pub const VERSIONS_OF: &str = "UNWIND $keys AS r MATCH (v:MemoryVersion {record: r}) \
     RETURN v.record, v.body ORDER BY v.record, v.known_from";

/// One version of this kind, if there is any.
pub const ANY_VERSION: &str =
    "MATCH (v:MemoryVersion) WHERE v.kind = $kind RETURN v.record LIMIT 1";

pub const ALL_VERSIONS: &str = "MATCH (v:MemoryVersion) \
     RETURN v.kind, v.record, v.known_from, v.body ORDER BY v.record, v.known_from";

pub const CORRECTION_COUNT: &str = "MATCH (c:MemoryCorrection) RETURN count(c)";

pub const CORRECTIONS: &str = "MATCH (c:MemoryCorrection) RETURN c.body ORDER BY c.sequence";

/// The corrections log after `$after`, `$limit` of them in order: the index on `sequence`
/// finds them, not a read of the whole log.
pub const CORRECTIONS_AFTER: &str = "MATCH (c:MemoryCorrection) WHERE c.sequence > $after \
     RETURN c.body ORDER BY c.sequence LIMIT $limit";

/// Integrity: fact intervals that end before they begin or close without a record of when.
pub const CHECK_FACTS: &str = "MATCH (e:MemoryEpisode)-[r:MENTIONS|RESOLVED_BY]->(n:MemoryEntity) \
     WHERE r.t_valid IS NULL OR r.ingested_at IS NULL \
     OR (r.t_invalid IS NOT NULL AND r.t_invalid <= r.t_valid) \
     OR ((r.t_invalid IS NULL) <> (r.expired_at IS NULL)) \
     OR (r.expired_at IS NOT NULL AND r.expired_at < r.ingested_at) \
     RETURN e.incident_fingerprint, type(r), n.entity_type, n.entity_ref, r.t_valid, r.t_invalid, r.expired_at LIMIT 100";

pub const CHECK_EPISODES: &str = "MATCH (e:MemoryEpisode) WHERE e.incident_fingerprint IS NULL \
     OR e.concluded_at IS NULL OR e.t_valid IS NULL OR e.ingested_at IS NULL \
     RETURN e.incident_fingerprint LIMIT 100";

/// Lineage edges whose prior has no fact about the entity closed at the edge's time.
pub const CHECK_LINEAGE: &str = "MATCH (e:MemoryEpisode)-[s:SUPERSEDES]->(p:MemoryEpisode) \
     OPTIONAL MATCH (p)-[r:MENTIONS|RESOLVED_BY]->(n:MemoryEntity {entity_type: s.entity_type, entity_ref: s.entity_ref}) \
     WITH e, s, p, count(r) AS facts, sum(CASE WHEN r.t_invalid = s.t_valid THEN 1 ELSE 0 END) AS closed \
     WHERE facts = 0 OR closed = 0 \
     RETURN e.incident_fingerprint, p.incident_fingerprint, s.entity_type, s.entity_ref LIMIT 100";

pub const VECTOR_META: &str = "MATCH (m:StrataVectorIndex {property: 'embedding'}) \
     RETURN m.model, m.dimension, m.watermark, m.corrections";

pub const VECTOR_META_CREATE: &str = "MERGE (m:StrataVectorIndex {property: 'embedding'}) \
     ON CREATE SET m.model = $model, m.dimension = $dim, m.watermark = 0";

/// FalkorDB's defaults (M 16, efConstruction 200, efRuntime 10) find 7 in 10 of the exact
/// top 10 at 10k episodes; these find 99 in 100 there and 97 at 100k (efRuntime 4000: 97.5,
/// at 2.6x the search time), per `strata bench server`.
pub const CREATE_VECTOR_INDEX: &str = "CREATE VECTOR INDEX FOR (e:MemoryEpisode) ON (e.embedding) \
     OPTIONS {dimension: $dim, similarityFunction: 'cosine', M: 32, efConstruction: 400, efRuntime: 1000}";

/// Each episode's stored vector, for `export --with-vectors` (read in the compact reply
/// form: the verbose one prints a vector's numbers to six digits).
pub const VECTORS_OF: &str = "UNWIND $fps AS fp MATCH (e:MemoryEpisode {incident_fingerprint: fp}) \
     WHERE e.embedding IS NOT NULL RETURN e.incident_fingerprint, e.embedding";

pub const VECTOR_COUNT: &str =
    "MATCH (e:MemoryEpisode) WHERE e.embedding IS NOT NULL RETURN count(e)";

pub const VECTOR_APPEND: &str = "UNWIND $rows AS x \
     MATCH (e:MemoryEpisode {incident_fingerprint: x.fp}) SET e.embedding = vecf32(x.v) \
     WITH count(e) AS written \
     MATCH (m:StrataVectorIndex {property: 'embedding'}) SET m.watermark = $watermark";

/// kNN over the episodes' texts as first written and their corrected texts
/// (`StrataTextVersion`), then the as-of filter; the third column says whether the hit is
/// visible at (V, K).
pub const VECTOR_SEARCH: &str = "CALL db.idx.vector.queryNodes('MemoryEpisode', 'embedding', $k, vecf32($q)) \
     YIELD node, score \
     RETURN node.incident_fingerprint AS key, score, \
     CASE WHEN node.ingested_at <= $K AND node.t_valid <= $V THEN 1 ELSE 0 END AS visible \
     UNION ALL \
     CALL db.idx.vector.queryNodes('StrataTextVersion', 'embedding', $k, vecf32($q)) \
     YIELD node, score \
     RETURN node.key AS key, score, \
     CASE WHEN node.ingested_at <= $K AND node.t_valid <= $V THEN 1 ELSE 0 END AS visible";

/// The vectors of corrected texts: one `StrataTextVersion` node per version, keyed as
/// [`crate::index::versions::version_key`] says.
pub const CREATE_VERSION_VECTOR_INDEX: &str = "CREATE VECTOR INDEX FOR (v:StrataTextVersion) ON (v.embedding) \
     OPTIONS {dimension: $dim, similarityFunction: 'cosine', M: 32, efConstruction: 400, efRuntime: 1000}";

pub const CREATE_VERSION_KEY_INDEX: &str = "CREATE INDEX FOR (v:StrataTextVersion) ON (v.key)";

pub const VERSION_VECTOR_APPEND: &str = "UNWIND $rows AS x \
     MERGE (v:StrataTextVersion {key: x.fp}) \
     SET v.ingested_at = x.k, v.t_valid = x.t, v.embedding = vecf32(x.v) \
     WITH count(v) AS written \
     MATCH (m:StrataVectorIndex {property: 'embedding'}) SET m.corrections = $corrections";

/// One hop of lineage backwards: the SUPERSEDES edges recorded by $K out of the episodes in
/// $fps (to the priors they closed). The walk goes hop by hop with a visited set, to the end
/// of the chain, so a dense supersession graph costs its edges, not its paths.
pub const LINEAGE_STEP_BACKWARDS: &str = concat!(
    "MATCH (e:MemoryEpisode)-[s:SUPERSEDES]->(p:MemoryEpisode) \
     WHERE e.incident_fingerprint IN $fps AND s.ingested_at <= $K RETURN ",
    lineage_columns!()
);

/// One hop of lineage forwards: the SUPERSEDES edges recorded by $K into the episodes in
/// $fps (from what superseded them).
pub const LINEAGE_STEP_FORWARDS: &str = concat!(
    "MATCH (e:MemoryEpisode)-[s:SUPERSEDES]->(p:MemoryEpisode) \
     WHERE p.incident_fingerprint IN $fps AND s.ingested_at <= $K RETURN ",
    lineage_columns!()
);

/// A batch too large for one query is written in chunks under a `(:StrataIngest)` marker,
/// keyed by the batch's digest: `partial` until its last chunk is written.
pub const INGEST_STARTED: &str = "\
MERGE (i:StrataIngest {digest: $digest}) ON CREATE SET i.started_at = $at, i.written = 0 \
SET i.status = 'partial', i.file = $file, i.records = $records, i.chunks = $chunks, \
    i.attempt_at = $at \
RETURN i.digest";

/// Chunks written only ever grows: a rerun passes over the chunks an earlier run wrote.
pub const INGEST_PROGRESS: &str = "\
MATCH (i:StrataIngest {digest: $digest}) \
SET i.written = CASE WHEN i.written > $written THEN i.written ELSE $written END \
RETURN i.digest";

/// The first chunk did not land and no earlier run of the file wrote any: not partial.
pub const INGEST_NOT_WRITTEN: &str = "\
MATCH (i:StrataIngest {digest: $digest}) WHERE i.status = 'partial' AND i.written = $written \
SET i.status = 'not_written' RETURN i.digest";

pub const INGEST_COMPLETE: &str = "\
MATCH (i:StrataIngest {digest: $digest}) \
SET i.status = 'complete', i.written = i.chunks, i.finished_at = $at RETURN i.digest";

pub const CHECK_PARTIAL_INGESTS: &str = "\
MATCH (i:StrataIngest {status: 'partial'}) \
RETURN i.file, i.records, i.chunks, i.written, i.started_at ORDER BY i.started_at, i.file";

#[cfg(test)]
mod tests {
    /// This file up to its tests: every template, nothing else.
    fn templates() -> &'static str {
        let text = include_str!("cypher.rs");
        let end = text.find("#[cfg(test)]").unwrap_or(text.len());
        &text[..end]
    }

    /// Only comments may mention DELETE: no query deletes anything.
    #[test]
    fn no_template_deletes() {
        for line in templates().lines() {
            if !line.trim_start().starts_with("//") {
                assert!(!line.to_uppercase().contains("DELETE"), "{line}");
            }
        }
    }

    /// Every label and relationship type a template spells is one of the model's, or one of
    /// the nodes Strata keeps about the graph itself: the store's meta node, the vector
    /// index's and its vectors of corrected texts, the markers of chunked ingests, and the
    /// versions and log of corrections.
    #[test]
    fn labels_and_types_come_from_the_model() {
        let allowed = [
            "MemoryEpisode",
            "MemoryEntity",
            "MENTIONS",
            "RESOLVED_BY",
            "SUPERSEDES",
            "Skill",
            "CodeUnit",
            "StrataVectorIndex",
            "StrataTextVersion",
            "StrataMeta",
            "StrataIngest",
            "MemoryVersion",
            "MemoryCorrection",
        ];
        let text = templates();
        let mut seen = 0;
        for (at, _) in text.match_indices(':') {
            if text[..at].ends_with(':') || text[at + 1..].starts_with(':') {
                continue;
            }
            let name: String = text[at + 1..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if name.starts_with(|c: char| c.is_ascii_uppercase()) {
                assert!(
                    allowed.contains(&name.as_str()),
                    "unexpected label or type {name}"
                );
                seen += 1;
            }
        }
        assert!(seen > 50, "found only {seen} labels: the scan is broken");
    }
}
