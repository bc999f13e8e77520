use serde_json::json;

use super::{App, Mode};
use crate::explorer::action::{Action, Axis, Step};
use crate::explorer::pane::Pane;
use crate::explorer::ui::layout;
use crate::explorer::worker::Request;
use crate::model::{AsOf, EntityKey, FactState, Timestamp};
use crate::query::{FactView, LineageLink};
use crate::recall::RecallRequest;

const DAY_MS: i64 = 86_400_000;

/// One row of the lineage pane: a link above (it superseded the selection's chain) or
/// below (the selection's chain superseded it).
pub struct LineageRow<'a> {
    pub later: bool,
    pub link: &'a LineageLink,
}

impl LineageRow<'_> {
    /// The episode on the far side of the link from the selection.
    pub fn target(&self) -> &str {
        if self.later {
            &self.link.episode
        } else {
            &self.link.prior
        }
    }
}

pub struct EntityRow {
    pub fingerprint: String,
    pub concluded_at: Timestamp,
    pub relation: &'static str,
    pub state: FactState,
    pub summary: String,
}

impl App {
    pub fn dispatch(&mut self, action: Action) {
        self.record(json!({
            "event": "action",
            "name": action.name(),
            "argument": action.argument(),
        }));
        self.message = None;
        self.notices.clear();
        match action {
            Action::Quit => self.quit = true,
            Action::Help => {
                self.mode = if self.mode == Mode::Help {
                    Mode::Normal
                } else {
                    Mode::Help
                }
            }
            Action::Palette => {
                self.palette = Default::default();
                self.mode = Mode::Palette;
            }
            Action::Search => {
                self.search = Default::default();
                if let Some(t) = &self.timeline.filter.text {
                    self.search.insert_str(t);
                }
                self.mode = Mode::Search;
            }
            Action::FocusNext => self.focus = self.focus.next(),
            Action::FocusPrev => self.focus = self.focus.prev(),
            Action::Focus(p) => self.focus = p,
            Action::Zoom => self.zoom = !self.zoom,
            Action::Up => self.move_cursor(-1),
            Action::Down => self.move_cursor(1),
            Action::PageUp => self.move_cursor(-(self.page_height() as isize)),
            Action::PageDown => self.move_cursor(self.page_height() as isize),
            Action::Top => self.move_cursor(isize::MIN / 2),
            Action::Bottom => self.move_cursor(isize::MAX / 2),
            Action::Open => self.open(),
            Action::Back => self.back(),
            Action::AsOfAxis => {
                self.axis = match self.axis {
                    Axis::Valid => Axis::Known,
                    Axis::Known => Axis::Valid,
                }
            }
            Action::AsOfStep(step) => self.step(step),
            Action::AsOfNow => {
                self.tick_clock();
                self.set_as_of(AsOf::now(self.now));
            }
            Action::AsOfSet(axis, t) => {
                let mut as_of = self.as_of;
                match axis {
                    Axis::Valid => as_of.valid_at = t,
                    Axis::Known => as_of.known_at = t.min(self.now),
                }
                self.set_as_of(as_of);
            }
            Action::RecallEdit => {
                self.focus = Pane::Recall;
                self.mode = Mode::Query;
            }
            Action::RecallRun => self.run_recall(),
            Action::RecallSeed => self.seed_recall(),
            Action::RecallToggle(leg) => {
                let on = !self.recall.legs.contains(leg);
                let next = self.recall.legs.with(leg, on);
                if next.legs().is_empty() {
                    self.message = Some("at least one leg must stay on".into());
                } else {
                    self.recall.legs = next;
                    self.rerun_recall();
                }
            }
            Action::RecallFusion => {
                self.recall.fusion = self.recall.fusion.next();
                self.rerun_recall();
            }
            Action::RecallQuery(text) => {
                self.recall.query = Default::default();
                self.recall.query.insert_str(&text);
                self.recall
                    .query
                    .move_cursor(ratatui_textarea::CursorMove::Head);
                self.focus = Pane::Recall;
                self.run_recall();
            }
            Action::FilterText(text) => {
                self.timeline.filter.text = Some(text).filter(|t| !t.trim().is_empty());
                self.refilter();
            }
            Action::FilterEntity(key) => {
                self.timeline.filter.entity = Some(key);
                self.refilter();
            }
            Action::FilterClass(class) => match EntityKey::new("fault_class", &class) {
                Ok(key) => {
                    self.timeline.filter.entity = Some(key);
                    self.refilter();
                }
                Err(e) => self.message = Some(format!("filter.class: {e}")),
            },
            Action::FilterSelected => match &self.entity {
                Some(e) => {
                    self.timeline.filter.entity = Some(e.key.clone());
                    self.focus = Pane::Timeline;
                    self.refilter();
                }
                None => self.message = Some("no entity in view: open a fact first".into()),
            },
            Action::FilterClear => {
                if !self.timeline.filter.is_empty() {
                    self.timeline.filter = Default::default();
                    self.refilter();
                }
            }
            Action::Select(fp) => {
                self.select(&fp, true);
                self.focus = Pane::Facts;
            }
            Action::Refresh => {
                self.tick_clock();
                self.request(Request::Stats);
                let offset = self.timeline.offset;
                self.reload_timeline(offset, false);
                if let Some(fp) = self.selected.take() {
                    self.select(&fp, false);
                }
                if let Some(e) = &self.entity {
                    let key = e.key.clone();
                    self.request(Request::Entity(key));
                }
                self.rerun_recall();
            }
        }
        self.keep_visible();
    }

    /// Without a fixed `--now`, "now" follows the wall clock when asked to.
    pub(super) fn tick_clock(&mut self) {
        if self.live_clock {
            let was_now = self.as_of == AsOf::now(self.now);
            self.now = Timestamp::now();
            if was_now {
                self.as_of = AsOf::now(self.now);
            }
        }
    }

    fn page_height(&self) -> usize {
        layout::list_height(self, self.focus).max(1)
    }

    fn keep_visible(&mut self) {
        let h = |app: &App, pane| layout::list_height(app, pane);
        let (t, f, r, l, e) = (
            h(self, Pane::Timeline),
            h(self, Pane::Facts),
            h(self, Pane::Recall),
            h(self, Pane::Lineage),
            h(self, Pane::Entity),
        );
        self.timeline.cursor.keep_visible(t);
        self.facts_cursor.keep_visible(f);
        self.recall.cursor.keep_visible(r);
        self.lineage_cursor.keep_visible(l);
        self.entity_cursor.keep_visible(e);
    }

    pub(super) fn after_resize(&mut self) {
        self.keep_visible();
    }

    /// Puts a pane's cursor on a row, as a click does.
    pub(super) fn select_row(&mut self, pane: Pane, index: usize) {
        match pane {
            Pane::Timeline => {
                let len = self.timeline.len();
                if index < len {
                    self.timeline.cursor.set(index, len);
                    self.timeline_cursor_moved();
                }
            }
            Pane::Facts => {
                let len = self.fact_views().len();
                self.facts_cursor.set(index, len);
            }
            Pane::Recall => {
                let len = self.recall.response.as_ref().map_or(0, |r| r.results.len());
                self.recall.cursor.set(index, len);
            }
            Pane::Entity => {
                let len = self.entity_rows().len();
                self.entity_cursor.set(index, len);
            }
            Pane::Lineage | Pane::Lessons => {}
        }
        self.keep_visible();
    }

    fn move_cursor(&mut self, delta: isize) {
        match self.focus {
            Pane::Timeline => {
                let len = self.timeline.len();
                self.timeline.cursor.move_by(delta, len);
                self.timeline_cursor_moved();
            }
            Pane::Facts => {
                let len = self.fact_views().len();
                self.facts_cursor.move_by(delta, len);
            }
            Pane::Recall => {
                let len = self.recall.response.as_ref().map_or(0, |r| r.results.len());
                self.recall.cursor.move_by(delta, len);
            }
            Pane::Lineage => {
                let len = self.lineage_rows().len();
                self.lineage_cursor.move_by(delta, len);
            }
            Pane::Entity => {
                let len = self.entity_rows().len();
                self.entity_cursor.move_by(delta, len);
            }
            Pane::Lessons => {}
        }
    }

    /// Selects the row under the timeline cursor, loading its page first if needed.
    pub(super) fn timeline_cursor_moved(&mut self) {
        let index = self.timeline.cursor.index;
        match self.timeline.row(index).map(|r| r.fingerprint.clone()) {
            Some(fp) => self.select(&fp, false),
            None if !self.timeline.loading && self.timeline.total.is_some_and(|t| index < t) => {
                self.reload_timeline(index.saturating_sub(super::TIMELINE_PAGE / 2), true);
            }
            None => {}
        }
        let near_end = self.timeline.offset + self.timeline.rows.len();
        let total = self.timeline.len();
        let window_edge = index + 10 >= near_end && near_end < total;
        let window_start = index < self.timeline.offset + 10 && self.timeline.offset > 0;
        if !self.timeline.loading && (window_edge || window_start) {
            self.reload_timeline(index.saturating_sub(super::TIMELINE_PAGE / 2), true);
        }
    }

    fn open(&mut self) {
        match self.focus {
            Pane::Timeline => self.focus = Pane::Facts,
            Pane::Facts => {
                let views = self.fact_views();
                if let Some(v) = views.get(self.facts_cursor.index)
                    && let Ok(key) = EntityKey::new(&v.entity_type, &v.entity_ref)
                {
                    self.open_entity(key);
                }
            }
            Pane::Recall => {
                let fp = self.recall.response.as_ref().and_then(|r| {
                    r.results
                        .get(self.recall.cursor.index)
                        .map(|x| x.fingerprint.clone())
                });
                if let Some(fp) = fp {
                    self.select(&fp, true);
                    self.focus = Pane::Facts;
                }
            }
            Pane::Lineage => {
                let target = self
                    .lineage_rows()
                    .get(self.lineage_cursor.index)
                    .map(|r| r.target().to_string());
                if let Some(fp) = target {
                    self.select(&fp, true);
                }
            }
            Pane::Entity => {
                let target = self
                    .entity_rows()
                    .get(self.entity_cursor.index)
                    .map(|r| r.fingerprint.clone());
                if let Some(fp) = target {
                    self.select(&fp, true);
                    self.focus = Pane::Facts;
                }
            }
            Pane::Lessons => {}
        }
    }

    pub fn open_entity(&mut self, key: EntityKey) {
        self.entity_cursor = Default::default();
        self.request(Request::Entity(key));
        self.focus = Pane::Entity;
    }

    fn back(&mut self) {
        if self.zoom {
            self.zoom = false;
        } else if let Some(fp) = self.history.pop() {
            self.select(&fp, false);
        } else if self.focus != Pane::Timeline {
            self.focus = Pane::Timeline;
        } else if !self.timeline.filter.is_empty() {
            self.timeline.filter = Default::default();
            self.refilter();
        }
    }

    fn refilter(&mut self) {
        self.timeline.cursor = Default::default();
        self.timeline.rows.clear();
        self.timeline.total = None;
        self.reload_timeline(0, true);
    }

    fn step(&mut self, step: Step) {
        let current = match self.axis {
            Axis::Valid => self.as_of.valid_at,
            Axis::Known => self.as_of.known_at,
        };
        let target = match step {
            Step::BackDay => Some(current.plus_millis(-DAY_MS)),
            Step::ForwardDay => Some(current.plus_millis(DAY_MS)),
            Step::BackWeek => Some(current.plus_millis(-7 * DAY_MS)),
            Step::ForwardWeek => Some(current.plus_millis(7 * DAY_MS)),
            Step::PrevChange => self
                .change_points()
                .into_iter()
                .rev()
                .find(|t| *t < current),
            Step::NextChange => self.change_points().into_iter().find(|t| *t > current),
        };
        let Some(target) = target else {
            self.message = Some(format!(
                "no earlier or later change on the {} axis",
                self.axis.name()
            ));
            return;
        };
        let mut as_of = self.as_of;
        match self.axis {
            Axis::Valid => as_of.valid_at = target,
            Axis::Known => as_of.known_at = target.min(self.now),
        }
        self.set_as_of(as_of);
    }

    /// The times, on the slider's axis, at which the selection's facts change state.
    pub fn change_points(&self) -> Vec<Timestamp> {
        let mut points = Vec::new();
        if let Some(d) = &self.detail {
            for f in &d.facts {
                match self.axis {
                    Axis::Valid => {
                        points.push(f.t_valid);
                        points.extend(f.t_invalid);
                    }
                    Axis::Known => {
                        points.push(f.ingested_at);
                        points.extend(f.expired_at);
                    }
                }
            }
        }
        points.sort();
        points.dedup();
        points
    }

    fn set_as_of(&mut self, as_of: AsOf) {
        if as_of == self.as_of {
            return;
        }
        let knowledge_moved = as_of.known_at != self.as_of.known_at;
        self.as_of = as_of;
        let len = self.fact_views().len();
        self.facts_cursor.set(self.facts_cursor.index, len);
        if knowledge_moved {
            self.request_lineage();
            self.timeline.rows.clear();
            self.timeline.total = None;
            let around = self
                .timeline
                .cursor
                .index
                .saturating_sub(super::TIMELINE_PAGE / 2);
            self.reload_timeline(around, false);
        }
        self.rerun_recall();
    }

    fn seed_recall(&mut self) {
        let Some(d) = &self.detail else {
            self.message = Some("select an episode first".into());
            return;
        };
        let text = d.episode.summary_nl.clone();
        self.recall.query = Default::default();
        self.recall.query.insert_str(text);
        self.recall
            .query
            .move_cursor(ratatui_textarea::CursorMove::Head);
        self.focus = Pane::Recall;
        self.run_recall();
    }

    fn rerun_recall(&mut self) {
        if self.recall.response.is_some() || self.recall.running {
            self.run_recall();
        }
    }

    pub(super) fn run_recall(&mut self) {
        let text = self.recall.query.lines().join(" ");
        if text.trim().is_empty() {
            self.message =
                Some("recall: the query is empty (press i to type one, y to seed it)".into());
            return;
        }
        self.recall.running = true;
        self.request(Request::Recall(RecallRequest {
            text,
            entities: Vec::new(),
            as_of: self.as_of,
            k: self.recall_k(),
            legs: self.recall.legs,
            fusion: self.recall.fusion,
        }));
    }

    /// The selection's facts, each with its state at (V, K).
    pub fn fact_views(&self) -> Vec<FactView> {
        let Some(d) = &self.detail else {
            return Vec::new();
        };
        if !self.as_of.knows(d.episode.ingested_at) {
            return Vec::new();
        }
        // Facts recorded after K stay listed, greyed as `not yet known`.
        d.facts
            .iter()
            .map(|f| FactView::of(f, &self.as_of))
            .collect()
    }

    pub fn lineage_rows(&self) -> Vec<LineageRow<'_>> {
        let Some(l) = &self.lineage else {
            return Vec::new();
        };
        let mut rows: Vec<LineageRow<'_>> = l
            .forwards
            .iter()
            .rev()
            .map(|link| LineageRow { later: true, link })
            .collect();
        rows.extend(
            l.backwards
                .iter()
                .map(|link| LineageRow { later: false, link }),
        );
        rows
    }

    pub fn entity_rows(&self) -> Vec<EntityRow> {
        let Some(e) = &self.entity else {
            return Vec::new();
        };
        let mut rows: Vec<EntityRow> = e
            .facts
            .iter()
            .filter_map(|f| {
                let episode = e.episodes.get(&f.episode)?;
                Some(EntityRow {
                    fingerprint: f.episode.clone(),
                    concluded_at: episode.concluded_at,
                    relation: f.relation.as_str(),
                    state: self.as_of.fact_state(f),
                    summary: episode
                        .summary_nl
                        .lines()
                        .next()
                        .unwrap_or_default()
                        .to_string(),
                })
            })
            .collect();
        rows.sort_by(|a, b| {
            (b.concluded_at, &a.fingerprint, a.relation).cmp(&(
                a.concluded_at,
                &b.fingerprint,
                b.relation,
            ))
        });
        rows
    }
}
