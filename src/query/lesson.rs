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
    let facts = store.facts(fingerprint)?;
    // A corrected resolution teaches its own lesson from then on.
    let lesson = if episode_corrected(store, fingerprint, &as_of)? {
        crate::learning::render(
            fingerprint,
            &episode.resolution_nl,
            facts.iter().map(|f| (f.relation, &f.entity)),
        )
    } else {
        store
            .lesson(fingerprint)?
            .ok_or_else(|| QueryError::UnknownEpisode(fingerprint.to_string()))?
    };
    Ok(LessonView::at(lesson, episode.ingested_at, &facts, &as_of))
}

fn episode_corrected(
    store: &dyn MemoryStore,
    fingerprint: &str,
    as_of: &AsOf,
) -> Result<bool, QueryError> {
    Ok(store
        .episode(fingerprint)?
        .is_some_and(|e| e.corrected_at(as_of.known_at)))
}
