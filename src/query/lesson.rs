use super::{QueryError, known_episode};
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
    let episode = known_episode(store, fingerprint, &as_of)?;
    let lesson = store
        .lesson(fingerprint)?
        .ok_or_else(|| QueryError::UnknownEpisode(fingerprint.to_string()))?;
    let facts = store.facts(fingerprint)?;
    Ok(LessonView::at(lesson, episode.ingested_at, &facts, &as_of))
}
