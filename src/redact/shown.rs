//! Redaction at the boundary of what is shown: every value the explorer displays passes
//! through [`Shown::shown`] once, on its way out of the I/O layer, whatever the store holds.

use super::redact;
use crate::learning::{CodeUnit, Lesson, Skill};
use crate::model::MemoryEpisode;
use crate::query::views::{EntityDetail, EpisodeDetail, TimelineRow, TimelineRows};
use crate::recall::RecallResponse;

pub trait Shown {
    /// The value with its free text redacted.
    fn shown(self) -> Self;
}

fn text(s: &mut String) {
    if let std::borrow::Cow::Owned(r) = redact(s) {
        *s = r;
    }
}

impl<T: Shown> Shown for Vec<T> {
    fn shown(self) -> Self {
        self.into_iter().map(Shown::shown).collect()
    }
}

impl<T: Shown> Shown for Option<T> {
    fn shown(self) -> Self {
        self.map(Shown::shown)
    }
}

impl Shown for MemoryEpisode {
    fn shown(mut self) -> Self {
        text(&mut self.summary_nl);
        text(&mut self.resolution_nl);
        for v in &mut self.versions {
            text(&mut v.summary_nl);
            text(&mut v.resolution_nl);
        }
        self
    }
}

impl Shown for Lesson {
    fn shown(mut self) -> Self {
        text(&mut self.text);
        self.cites.iter_mut().for_each(text);
        self
    }
}

impl Shown for Skill {
    fn shown(mut self) -> Self {
        text(&mut self.name);
        self.steps.iter_mut().for_each(text);
        self
    }
}

impl Shown for CodeUnit {
    fn shown(mut self) -> Self {
        text(&mut self.repo);
        text(&mut self.path);
        self
    }
}

/// The characters of a timeline row's summary kept, after redaction.
const ROW_SUMMARY_CHARS: usize = 240;

impl Shown for TimelineRow {
    fn shown(mut self) -> Self {
        text(&mut self.summary);
        if let Some((cut, _)) = self.summary.char_indices().nth(ROW_SUMMARY_CHARS) {
            self.summary.truncate(cut);
        }
        self
    }
}

impl Shown for TimelineRows {
    fn shown(mut self) -> Self {
        self.rows = self.rows.shown();
        self
    }
}

impl Shown for EpisodeDetail {
    fn shown(mut self) -> Self {
        self.episode = self.episode.shown();
        self.lesson = self.lesson.shown();
        self.skills = self.skills.shown();
        self
    }
}

impl Shown for EntityDetail {
    fn shown(mut self) -> Self {
        self.episodes = self
            .episodes
            .into_iter()
            .map(|(fp, e)| (fp, e.shown()))
            .collect();
        self
    }
}

impl Shown for crate::query::ReviewRow {
    fn shown(mut self) -> Self {
        text(&mut self.episode_summary);
        text(&mut self.prior_summary);
        if let Some(r) = &mut self.review {
            text(&mut r.by);
            text(&mut r.reason);
        }
        self
    }
}

impl Shown for crate::query::NearestLineage {
    fn shown(mut self) -> Self {
        let links = self.lineage.backwards.iter_mut();
        for r in links
            .chain(self.lineage.forwards.iter_mut())
            .filter_map(|l| l.review.as_mut())
        {
            text(&mut r.by);
            text(&mut r.reason);
        }
        self
    }
}

impl Shown for crate::query::Change {
    fn shown(mut self) -> Self {
        text(&mut self.target);
        self.by.iter_mut().for_each(text);
        self.reason.iter_mut().for_each(text);
        self
    }
}

impl Shown for RecallResponse {
    fn shown(mut self) -> Self {
        text(&mut self.query);
        for result in &mut self.results {
            text(&mut result.summary);
        }
        for s in &mut self.skills {
            text(&mut s.name);
            s.shared.iter_mut().for_each(text);
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_text_is_redacted_and_keys_are_kept() {
        let row = TimelineRow {
            fingerprint: "INC-1".into(),
            concluded_at: crate::model::Timestamp::from_millis(0),
            ingested_at: crate::model::Timestamp::from_millis(0),
            summary: "mail ops@example.com about it".into(),
            supersedes: false,
            superseded: false,
        }
        .shown();
        assert_eq!(row.fingerprint, "INC-1");
        assert!(!row.summary.contains("ops@example.com"), "{}", row.summary);
    }

    #[test]
    fn a_secret_across_the_row_width_is_redacted_whole_before_the_cut() {
        let summary = format!("{}ops@example.com and more", "x ".repeat(115));
        let row = TimelineRow {
            fingerprint: "INC-1".into(),
            concluded_at: crate::model::Timestamp::from_millis(0),
            ingested_at: crate::model::Timestamp::from_millis(0),
            summary,
            supersedes: false,
            superseded: false,
        }
        .shown();
        assert!(!row.summary.contains("ops@"), "{}", row.summary);
        assert!(row.summary.chars().count() <= ROW_SUMMARY_CHARS);
    }
}
