use super::QueryError;
use crate::learning::LessonView;
use crate::model::AsOf;
use crate::store::MemoryStore;

/// The episode's lesson as it stood at (V, K): current, or superseded by the episode that
/// closed a fact it rests on.
pub fn lesson_as_of(
    store: &dyn MemoryStore,
    fingerprint: &str,
    as_of: AsOf,
) -> Result<LessonView, QueryError> {
    let episode = store
        .episode(fingerprint)?
        .ok_or_else(|| QueryError::UnknownEpisode(fingerprint.to_string()))?;
    if !as_of.knows(episode.ingested_at) {
        return Err(QueryError::NotYetKnown {
            fingerprint: fingerprint.to_string(),
            known_at: as_of.known_at,
            recorded_at: episode.ingested_at,
        });
    }
    let lesson = store
        .lesson(fingerprint)?
        .ok_or_else(|| QueryError::UnknownEpisode(fingerprint.to_string()))?;
    let facts = store.facts(fingerprint)?;
    Ok(LessonView::at(lesson, episode.ingested_at, &facts, &as_of))
}
