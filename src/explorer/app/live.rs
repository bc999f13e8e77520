//! Applying what another process wrote while the explorer is open: the same page, the
//! same selection and scroll, the new rows marked, and a word on what changed under the
//! selected episode.

use std::collections::{BTreeSet, HashSet};

use super::{App, Effects};
use crate::explorer::live::Change;
use crate::explorer::worker::{Request, View};
use crate::model::{FactEdge, Timestamp};
use crate::query::views::EpisodeDetail;

/// New episodes remembered for marking; beyond this a bulk load marks only its first.
const MARKED_AT_MOST: usize = 10_000;

#[derive(Default)]
pub struct LiveState {
    /// On the explorer's clock, when the last change from the store was applied.
    pub changed_at: Option<Timestamp>,
    /// Episodes that arrived while the explorer was open.
    pub new_episodes: HashSet<String>,
    /// What the last changes did to the selected episode, said in its panes.
    pub selection_note: Option<String>,
    /// The next episode reply refreshes the selection: compare it with what was shown.
    pub(super) compare_detail: bool,
}

impl LiveState {
    pub fn is_new(&self, fingerprint: &str) -> bool {
        self.new_episodes.contains(fingerprint)
    }
}

impl App {
    /// Asks the worker once whether the store changed (headless `WaitIdle`); `None` when
    /// the store has not opened.
    pub fn check_for_changes(&mut self) -> Option<Effects> {
        if !self.shared.store.opened {
            return None;
        }
        self.request(Request::Changes);
        Some(self.take_effects())
    }

    /// Re-reads what is on screen after another process wrote to the store.
    pub(super) fn apply_change(&mut self, change: Change) {
        self.tick_clock();
        let live = &mut self.shared.live;
        live.changed_at = Some(self.shared.now);
        for fp in change.new_episodes {
            if live.new_episodes.len() >= MARKED_AT_MOST {
                break;
            }
            live.new_episodes.insert(fp);
        }
        self.reread();
    }

    /// Reads again everything on screen that the store's contents decide.
    pub(super) fn reread(&mut self) {
        self.request(View::Stats);
        let offset = self.panes.timeline.offset;
        self.reload_timeline(offset, false);
        if let Some(fp) = self.shared.selection.fingerprint.clone() {
            self.shared.live.compare_detail = self.shared.selection.detail.is_some();
            self.request(View::Episode(fp));
            self.request_lineage();
        }
        if let Some(key) = self.panes.entity.key().cloned() {
            self.request(View::Entity(key));
        }
        self.request_review();
    }

    /// Notes how the refreshed selection differs from the one shown.
    pub(super) fn compare_selection(&mut self, fresh: Option<&EpisodeDetail>) {
        if !std::mem::take(&mut self.shared.live.compare_detail) {
            return;
        }
        if let (Some(old), Some(new)) = (&self.shared.selection.detail, fresh)
            && let Some(note) = what_changed(old, new)
        {
            self.shared.live.selection_note = Some(note);
        }
    }
}

/// `updated: INC-9 superseded MENTIONS change:cfg-1`, or `None` when nothing the panes show
/// changed.
pub fn what_changed(old: &EpisodeDetail, new: &EpisodeDetail) -> Option<String> {
    let was_closed = |f: &FactEdge| {
        old.facts
            .iter()
            .any(|o| o.relation == f.relation && o.entity == f.entity && o.expired_at.is_some())
    };
    let closed: Vec<&FactEdge> = new
        .facts
        .iter()
        .filter(|f| f.expired_at.is_some() && !was_closed(f))
        .collect();
    if !closed.is_empty() {
        let by: BTreeSet<&str> = closed
            .iter()
            .filter_map(|f| f.superseded_by.as_deref())
            .collect();
        let who = if by.is_empty() {
            "a later episode".to_string()
        } else {
            by.into_iter().collect::<Vec<_>>().join(", ")
        };
        let what = match closed.as_slice() {
            [one] => format!(
                "{} {}:{}",
                one.relation.as_str(),
                one.entity.entity_type,
                one.entity.entity_ref
            ),
            many => format!("{} facts", many.len()),
        };
        return Some(format!("updated: {who} superseded {what}"));
    }
    if old.facts.len() != new.facts.len()
        || old.supersedes.len() != new.supersedes.len()
        || old.superseded_by.len() != new.superseded_by.len()
    {
        return Some("updated: its facts or lineage changed".into());
    }
    if old.episode.versions.len() != new.episode.versions.len() {
        return Some("updated: a reviewer corrected its text".into());
    }
    let reviews = |d: &EpisodeDetail| -> Vec<usize> {
        d.supersedes
            .iter()
            .chain(&d.superseded_by)
            .map(|s| s.reviews.len())
            .collect()
    };
    let fact_versions =
        |d: &EpisodeDetail| -> Vec<usize> { d.facts.iter().map(|f| f.versions.len()).collect() };
    if reviews(old) != reviews(new) || fact_versions(old) != fact_versions(new) {
        return Some("updated: a reviewer retracted, confirmed or corrected its facts".into());
    }
    if old.skills.len() != new.skills.len() || old.lesson != new.lesson {
        return Some("updated: its lesson or skills changed".into());
    }
    None
}
