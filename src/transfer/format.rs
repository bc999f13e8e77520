//! The export format, version 2: NDJSON, one record a line, each a JSON object whose `kind`
//! says what it is.
//!
//! 1. `header`: the format and its version, the Strata version that wrote it, the memory
//!    schema, the knowledge time it was cut at (`known_at`, or null for everything), the
//!    embedding model configured when it was written, and the record counts.
//! 2. `code_unit`s, by `embedding_ref`.
//! 3. Per episode, by (`ingested_at`, `incident_fingerprint`): the `episode` as first written,
//!    its `episode_version`s (each correction of its text) by `known_from`, then its `fact`s
//!    by (relation, entity), each followed by its `fact_version`s by `known_from`, then the
//!    `supersession`s it wrote by (prior, entity), each followed by its `review`s (verdicts)
//!    by `recorded_at`, and last (`--with-vectors` only) its stored `vector`.
//! 4. `entity`s by key; 5. `skill` versions by (name, version).
//! 6. `correction`s, the reviewers' log, by `sequence`.
//! 7. `trailer`: the counts again and the SHA-256 of every line between header and trailer.
//!
//! A `vector` is the episode's embedding as the vector index stored it: f32 little-endian,
//! base64 (standard alphabet, padded), of the header's `vectors.dimension`, built by
//! `vectors.model`.
//!
//! Version 1 is version 2 without sections 3's versions and reviews and without section 6:
//! this build reads both.
//!
//! Every line ends with `"chain"`: 16 hex digits of XXH3-64 over the line without it, seeded
//! with the line before's chain, so a changed, removed or moved line is named by number.
//! Times are RFC 3339 at millisecond precision, exactly as stored. A reader refuses a format
//! version newer than its own; a later version adds kinds (and says so in its number).

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::correct::CorrectionRecord;
use crate::learning::{CodeUnit, Skill};
use crate::model::{
    EntityKey, EpisodeVersion, FactEdge, FactVersion, MemoryEntity, MemoryEpisode, Relation,
    Review, Supersession, Timestamp, Verdict,
};

pub const FORMAT: &str = "strata-export";
/// The version this build writes and the newest it reads.
pub const FORMAT_VERSION: u32 = 2;
/// The memory model the records follow (labels, properties, time axes).
pub const MEMORY_SCHEMA: u32 = 1;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    pub episodes: u64,
    pub facts: u64,
    pub supersessions: u64,
    pub entities: u64,
    pub skills: u64,
    pub code_units: u64,
    #[serde(default)]
    pub episode_versions: u64,
    #[serde(default)]
    pub fact_versions: u64,
    #[serde(default)]
    pub reviews: u64,
    #[serde(default)]
    pub corrections: u64,
    #[serde(default)]
    pub vectors: u64,
}

impl Counts {
    pub fn add(&mut self, record: &Record) {
        match record {
            Record::Episode(_) => self.episodes += 1,
            Record::Fact(_) => self.facts += 1,
            Record::Supersession(_) => self.supersessions += 1,
            Record::Entity(_) => self.entities += 1,
            Record::Skill(_) => self.skills += 1,
            Record::CodeUnit(_) => self.code_units += 1,
            Record::EpisodeVersion(_) => self.episode_versions += 1,
            Record::FactVersion(_) => self.fact_versions += 1,
            Record::Review(_) => self.reviews += 1,
            Record::Correction(_) => self.corrections += 1,
            Record::Vector(_) => self.vectors += 1,
            Record::Header(_) | Record::Trailer(_) => {}
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Header {
    pub format: String,
    pub format_version: u32,
    pub strata_version: String,
    pub schema: u32,
    /// Memory as it stood at this knowledge time; null: everything the store knew.
    pub known_at: Option<Timestamp>,
    /// The embedder configured where the file was written (what built its vectors).
    pub embedding_model: Option<String>,
    pub counts: Counts,
    /// What built the file's `vector` records, when it carries them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vectors: Option<VectorsInfo>,
}

/// The model and shape of the vectors a file carries.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct VectorsInfo {
    /// The embedder's model, as it names itself (`hash`, `all-MiniLM-L6-v2`, …).
    pub model: String,
    pub dimension: usize,
    /// `f32le-base64`: each vector's f32s little-endian, base64 with padding.
    pub encoding: String,
}

pub const VECTOR_ENCODING: &str = "f32le-base64";

/// An episode's stored vector.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VectorRecord {
    pub incident_fingerprint: String,
    pub vector: String,
}

impl VectorRecord {
    pub fn new(fingerprint: &str, vector: &[f32]) -> Self {
        use base64::Engine;
        let mut bytes = Vec::with_capacity(vector.len() * 4);
        for x in vector {
            bytes.extend_from_slice(&x.to_le_bytes());
        }
        VectorRecord {
            incident_fingerprint: fingerprint.to_string(),
            vector: base64::engine::general_purpose::STANDARD.encode(bytes),
        }
    }

    /// The vector, or why it is not one of `dimension` f32s.
    pub fn decode(&self, dimension: usize) -> Result<Vec<f32>, String> {
        use base64::Engine;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(&self.vector)
            .map_err(|e| format!("the vector is not base64: {e}"))?;
        if bytes.len() != dimension * 4 {
            return Err(format!(
                "the vector has {} bytes; expected {dimension} f32s ({} bytes)",
                bytes.len(),
                dimension * 4
            ));
        }
        Ok(bytes
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect())
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Trailer {
    pub counts: Counts,
    /// SHA-256, hex, of every byte between the header line and this one.
    pub sha256: String,
}

/// An episode's text as a correction left it, from `known_from` on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EpisodeVersionRecord {
    pub incident_fingerprint: String,
    pub known_from: Timestamp,
    pub summary_nl: String,
    pub resolution_nl: String,
}

impl EpisodeVersionRecord {
    pub fn new(fingerprint: &str, v: EpisodeVersion) -> Self {
        EpisodeVersionRecord {
            incident_fingerprint: fingerprint.to_string(),
            known_from: v.known_from,
            summary_nl: v.summary_nl,
            resolution_nl: v.resolution_nl,
        }
    }

    pub fn version(&self) -> EpisodeVersion {
        EpisodeVersion {
            known_from: self.known_from,
            summary_nl: self.summary_nl.clone(),
            resolution_nl: self.resolution_nl.clone(),
        }
    }
}

/// A fact's valid interval and closing as a correction left them, from `known_from` on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FactVersionRecord {
    pub episode: String,
    pub relation: Relation,
    pub entity: EntityKey,
    pub known_from: Timestamp,
    pub t_valid: Timestamp,
    pub t_invalid: Option<Timestamp>,
    pub expired_at: Option<Timestamp>,
    pub superseded_by: Option<String>,
}

impl FactVersionRecord {
    pub fn new(fact: &FactEdge, v: FactVersion) -> Self {
        FactVersionRecord {
            episode: fact.episode.clone(),
            relation: fact.relation,
            entity: fact.entity.clone(),
            known_from: v.known_from,
            t_valid: v.t_valid,
            t_invalid: v.t_invalid,
            expired_at: v.expired_at,
            superseded_by: v.superseded_by,
        }
    }

    pub fn version(&self) -> FactVersion {
        FactVersion {
            known_from: self.known_from,
            t_valid: self.t_valid,
            t_invalid: self.t_invalid,
            expired_at: self.expired_at,
            superseded_by: self.superseded_by.clone(),
        }
    }
}

/// A reviewer's verdict on a supersession, from `recorded_at` on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReviewRecord {
    pub episode: String,
    pub prior: String,
    pub entity: EntityKey,
    pub verdict: Verdict,
    pub recorded_at: Timestamp,
    pub by: String,
    pub reason: String,
}

impl ReviewRecord {
    pub fn new(s: &Supersession, r: Review) -> Self {
        ReviewRecord {
            episode: s.episode.clone(),
            prior: s.prior.clone(),
            entity: s.entity.clone(),
            verdict: r.verdict,
            recorded_at: r.recorded_at,
            by: r.by,
            reason: r.reason,
        }
    }

    pub fn review(&self) -> Review {
        Review {
            verdict: self.verdict,
            recorded_at: self.recorded_at,
            by: self.by.clone(),
            reason: self.reason.clone(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Record {
    Header(Header),
    CodeUnit(CodeUnit),
    Episode(MemoryEpisode),
    EpisodeVersion(EpisodeVersionRecord),
    Fact(FactEdge),
    FactVersion(FactVersionRecord),
    Supersession(Supersession),
    Review(ReviewRecord),
    Entity(MemoryEntity),
    Skill(Skill),
    Correction(CorrectionRecord),
    Vector(VectorRecord),
    Trailer(Trailer),
}

impl Record {
    pub fn kind(&self) -> &'static str {
        match self {
            Record::Header(_) => "header",
            Record::CodeUnit(_) => "code_unit",
            Record::Episode(_) => "episode",
            Record::EpisodeVersion(_) => "episode_version",
            Record::Fact(_) => "fact",
            Record::FactVersion(_) => "fact_version",
            Record::Supersession(_) => "supersession",
            Record::Review(_) => "review",
            Record::Entity(_) => "entity",
            Record::Skill(_) => "skill",
            Record::Correction(_) => "correction",
            Record::Vector(_) => "vector",
            Record::Trailer(_) => "trailer",
        }
    }

    /// A record from its JSON. The writer puts `kind` first, so the variant's own fields are
    /// read straight into it (serde's internally tagged path buffers every field first, twice
    /// as slow); JSON laid out otherwise takes that general path.
    pub fn parse(content: &[u8]) -> Result<Record, serde_json::Error> {
        const KIND: &[u8] = br#"{"kind":""#;
        let Some(rest) = content.strip_prefix(KIND) else {
            return serde_json::from_slice(content);
        };
        let Some(end) = rest.iter().position(|&b| b == b'"') else {
            return serde_json::from_slice(content);
        };
        let (kind, after) = (&rest[..end], &rest[end + 1..]);
        let fields = match after.first() {
            Some(b',') => &after[1..],
            Some(b'}') => after,
            _ => return serde_json::from_slice(content),
        };
        let mut object = Vec::with_capacity(fields.len() + 1);
        object.push(b'{');
        object.extend_from_slice(fields);
        let json = object.as_slice();
        Ok(match kind {
            b"code_unit" => Record::CodeUnit(serde_json::from_slice(json)?),
            b"episode" => Record::Episode(serde_json::from_slice(json)?),
            b"episode_version" => Record::EpisodeVersion(serde_json::from_slice(json)?),
            b"fact" => Record::Fact(serde_json::from_slice(json)?),
            b"fact_version" => Record::FactVersion(serde_json::from_slice(json)?),
            b"supersession" => Record::Supersession(serde_json::from_slice(json)?),
            b"review" => Record::Review(serde_json::from_slice(json)?),
            b"entity" => Record::Entity(serde_json::from_slice(json)?),
            b"skill" => Record::Skill(serde_json::from_slice(json)?),
            b"correction" => Record::Correction(serde_json::from_slice(json)?),
            b"vector" => Record::Vector(serde_json::from_slice(json)?),
            _ => return serde_json::from_slice(content),
        })
    }

    /// The record's JSON without its chain: what the chain and comparisons are over.
    pub fn content(&self) -> Result<Vec<u8>, serde_json::Error> {
        serde_json::to_vec(self)
    }

    /// [`Self::content`] appended to `out`.
    pub fn content_into(&self, out: &mut Vec<u8>) -> Result<(), serde_json::Error> {
        serde_json::to_writer(out, self)
    }
}

const CHAIN_KEY: &[u8] = b",\"chain\":\"";
/// `,"chain":"` + 16 hex digits + `"}`.
const CHAIN_SUFFIX: usize = CHAIN_KEY.len() + 16 + 2;

fn chain_of(content: &[u8], previous: u64) -> u64 {
    xxhash_rust::xxh3::xxh3_64_with_seed(content, previous)
}

/// Appends `content` (a JSON object) as one line carrying its chain; returns the chain.
pub fn frame(content: &[u8], previous: u64, out: &mut Vec<u8>) -> u64 {
    let chain = chain_of(content, previous);
    out.extend_from_slice(&content[..content.len().saturating_sub(1)]);
    out.extend_from_slice(CHAIN_KEY);
    out.extend_from_slice(format!("{chain:016x}\"}}\n").as_bytes());
    chain
}

/// The content of one line (without its newline) into `content`, checked against its chain;
/// returns the chain, or what is wrong.
pub fn unframe(line: &[u8], previous: u64, content: &mut Vec<u8>) -> Result<u64, String> {
    let n = line.len();
    if n < CHAIN_SUFFIX + 2
        || !line.starts_with(b"{")
        || !line.ends_with(b"\"}")
        || &line[n - CHAIN_SUFFIX..n - CHAIN_SUFFIX + CHAIN_KEY.len()] != CHAIN_KEY
    {
        return Err("expected a JSON object ending with its \"chain\"".into());
    }
    let hex = std::str::from_utf8(&line[n - 18..n - 2]).unwrap_or("");
    let stated = u64::from_str_radix(hex, 16)
        .map_err(|_| format!("the chain {hex:?} is not 16 hex digits"))?;
    content.clear();
    content.extend_from_slice(&line[..n - CHAIN_SUFFIX]);
    content.push(b'}');
    let chain = chain_of(content, previous);
    if chain != stated {
        return Err(
            "the line does not match its chain: it was changed, or lines before it were \
             changed, removed, added or moved"
                .into(),
        );
    }
    Ok(chain)
}

pub fn hex(digest: &[u8]) -> String {
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

pub fn sha256_hex(hasher: Sha256) -> String {
    hex(&hasher.finalize())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_framed_line_unframes_to_its_content_and_chain() {
        let content = br#"{"kind":"entity","entity_type":"service","entity_ref":"a\"}","ingested_at":"2026-01-01T00:00:00Z"}"#;
        let mut line = Vec::new();
        let chain = frame(content, 7, &mut line);
        assert_eq!(line.last(), Some(&b'\n'));
        let mut back = Vec::new();
        let got = unframe(&line[..line.len() - 1], 7, &mut back).unwrap();
        assert_eq!((got, back.as_slice()), (chain, &content[..]));
        // Seeded with another previous chain, the same line no longer checks.
        assert!(unframe(&line[..line.len() - 1], 8, &mut back).is_err());
        // One byte changed anywhere in the content is caught.
        let mut tampered = line.clone();
        tampered[20] ^= 1;
        assert!(unframe(&tampered[..tampered.len() - 1], 7, &mut back).is_err());
    }

    #[test]
    fn records_carry_their_kind() {
        let t = Timestamp::parse("2026-01-01T00:00:00.123Z").unwrap();
        let r = Record::Entity(MemoryEntity {
            key: crate::model::EntityKey::new("service", "x").unwrap(),
            ingested_at: t,
        });
        let text = String::from_utf8(r.content().unwrap()).unwrap();
        assert_eq!(
            text,
            r#"{"kind":"entity","entity_type":"service","entity_ref":"x","ingested_at":"2026-01-01T00:00:00.123Z"}"#
        );
        let back: Record = serde_json::from_str(&text).unwrap();
        assert_eq!(back, r);
        assert_eq!(Record::parse(text.as_bytes()).unwrap(), r);
    }

    /// The fast path reads what serde's tagged path reads, and refuses what it refuses.
    #[test]
    fn parse_agrees_with_the_tagged_path() {
        let cases: &[&str] = &[
            r#"{"kind":"entity","entity_type":"service","entity_ref":"x","ingested_at":"2026-01-01T00:00:00.123Z"}"#,
            r#"{"entity_type":"service","kind":"entity","entity_ref":"x","ingested_at":"2026-01-01T00:00:00.123Z"}"#,
            r#"{"kind":"vector","incident_fingerprint":"a","vector":"AAAAAA=="}"#,
            r#"{"kind":"vector","incident_fingerprint":"a"}"#,
            r#"{"kind":"vector"}"#,
            r#"{"kind":"nonsense","x":1}"#,
            r#"{"kind":"entity","entity_type":"service","entity_ref":"x","ingested_at":"not a time"}"#,
            r#"{"kind":"entity" , "entity_type":"service"}"#,
            r#"{"kind":"entity"#,
        ];
        for case in cases {
            let tagged = serde_json::from_str::<Record>(case);
            let fast = Record::parse(case.as_bytes());
            assert_eq!(tagged.is_ok(), fast.is_ok(), "{case}");
            if let (Ok(a), Ok(b)) = (tagged, fast) {
                assert_eq!(a, b, "{case}");
            }
        }
    }
}
