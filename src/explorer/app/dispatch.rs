//! Actions: each changes the state and leaves the requests it needs in the effects.

use super::{App, Effects, Mode};
use crate::explorer::action::{Action, Axis, Step};
use crate::explorer::pane::Pane;
use crate::explorer::panes::{Intent, ReviewView};
use crate::explorer::ui::layout;
use crate::explorer::worker::View;
use crate::model::{AsOf, EntityKey, Timestamp};

const DAY_MS: i64 = 86_400_000;

impl App {
    /// Carries out an action; returns the requests it needs.
    pub fn dispatch(&mut self, action: Action) -> Effects {
        self.act(action);
        self.take_effects()
    }

    pub(super) fn act(&mut self, action: Action) {
        self.record_action(&action);
        self.shared.message = None;
        self.shared.store.notices.clear();
        match action {
            Action::Quit => self.shared.quit = true,
            Action::Help => {
                self.shared.help_scroll = 0;
                self.shared.mode = if self.shared.mode == Mode::Help {
                    Mode::Normal
                } else {
                    Mode::Help
                }
            }
            Action::Palette => {
                self.shared.palette = Default::default();
                self.shared.mode = Mode::Palette;
            }
            Action::Search => {
                self.shared.search = Default::default();
                if let Some(t) = &self.panes.timeline.filter.text {
                    self.shared.search.insert_str(t);
                }
                self.shared.mode = Mode::Search;
            }
            Action::FocusNext => self.shared.set_focus(self.shared.focus.next()),
            Action::FocusPrev => self.shared.set_focus(self.shared.focus.prev()),
            Action::Focus(Pane::Review) => self.show_review(ReviewView::Supersessions),
            Action::FocusChanges => self.show_review(ReviewView::Changes),
            Action::Focus(p) => self.shared.set_focus(p),
            Action::Zoom => self.shared.zoom = !self.shared.zoom,
            Action::Up => self.move_cursor(-1),
            Action::Down => self.move_cursor(1),
            Action::PageUp => self.move_cursor(-(self.page_height() as isize)),
            Action::PageDown => self.move_cursor(self.page_height() as isize),
            Action::Top => self.move_cursor(isize::MIN / 2),
            Action::Bottom => self.move_cursor(isize::MAX / 2),
            Action::Open => {
                let focus = self.shared.focus;
                let intent = self.panes.get(focus).open(&self.shared);
                self.follow(intent.into_iter().collect());
            }
            Action::Back => self.back(),
            Action::AsOfAxis => {
                self.shared.axis = match self.shared.axis {
                    Axis::Valid => Axis::Known,
                    Axis::Known => Axis::Valid,
                }
            }
            Action::AsOfStep(step) => self.step(step),
            Action::AsOfNow => {
                self.tick_clock();
                self.set_as_of(AsOf::now(self.shared.now));
            }
            Action::AsOfSet(axis, t) => {
                let mut as_of = self.shared.as_of;
                match axis {
                    Axis::Valid => as_of.valid_at = t,
                    Axis::Known => as_of.known_at = t.min(self.shared.now),
                }
                self.set_as_of(as_of);
            }
            Action::RecallEdit => self.edit_query(),
            Action::RecallRun => {
                self.cancel_seed();
                self.shared.set_focus(Pane::Recall);
                self.remember_query();
                self.run_recall();
            }
            Action::RecallSeed => self.seed_recall(),
            Action::RecallToggle(leg) => match self.panes.recall.toggle(leg) {
                Ok(()) => self.rerun_recall(),
                Err(why) => self.shared.message = Some(why.into()),
            },
            Action::RecallFusion => {
                self.panes.recall.next_fusion();
                self.rerun_recall();
            }
            Action::RecallSuccessor => match self.panes.recall.successor() {
                Some(intent) => self.follow(vec![intent]),
                None => {
                    self.shared.message =
                        Some("nothing superseded this result as of the as-of point".into())
                }
            },
            Action::RecallQuery(text) => {
                self.cancel_seed();
                self.panes.recall.set_query(&text, None);
                self.shared.set_focus(Pane::Recall);
                self.remember_query();
                self.run_recall();
            }
            Action::HistoryPrev => self.browse_history(true),
            Action::HistoryNext => self.browse_history(false),
            Action::Edit(edit) => self.edit_input(edit),
            Action::FilterText(text) => {
                self.panes.timeline.filter_text(text);
                self.refilter(true);
            }
            Action::FilterEntity(key) => {
                self.panes.timeline.filter_entity(key);
                self.refilter(true);
            }
            Action::FilterClass(class) => match EntityKey::new("fault_class", &class) {
                Ok(key) => {
                    self.panes.timeline.filter_entity(key);
                    self.refilter(true);
                }
                Err(e) => self.shared.message = Some(format!("filter.class: {e}")),
            },
            Action::FilterSelected => match self.panes.entity.key().cloned() {
                Some(key) => {
                    self.panes.timeline.filter_entity(key);
                    self.shared.set_focus(Pane::Timeline);
                    self.refilter(true);
                }
                None => self.shared.message = Some("no entity in view: open a fact first".into()),
            },
            Action::FilterClear => {
                let cleared = self.panes.timeline.clear_filter();
                self.refilter(cleared);
            }
            Action::Select(fp) => {
                self.select(&fp, true);
                self.shared.set_focus(Pane::Facts);
            }
            Action::Correct(kind) => self.start_correction(kind),
            Action::CorrectRecord => {
                self.shared.message = Some("no correction is waiting to be confirmed".into())
            }
            Action::Refresh => {
                self.tick_clock();
                self.request(View::Stats);
                let offset = self.panes.timeline.offset;
                self.reload_timeline(offset, false);
                if let Some(fp) = self.shared.selection.fingerprint.take() {
                    self.select(&fp, false);
                }
                if let Some(key) = self.panes.entity.key().cloned() {
                    self.request(View::Entity(key));
                }
                self.request_review();
                self.rerun_recall();
            }
        }
        self.keep_visible();
    }

    /// Brings the review pane forward showing `view`, read at the as-of point.
    fn show_review(&mut self, view: ReviewView) {
        self.shared.set_focus(Pane::Review);
        let request = self.panes.review.show(view, self.shared.as_of.known_at);
        self.request(request);
    }

    /// Carries out what a pane asked for.
    pub(super) fn follow(&mut self, intents: Vec<Intent>) {
        for intent in intents {
            match intent {
                Intent::Follow { fingerprint, focus } => {
                    self.select(&fingerprint, true);
                    if let Some(p) = focus {
                        self.shared.set_focus(p);
                    }
                }
                Intent::Show(fp) => self.select(&fp, false),
                Intent::OpenEntity(key) => self.open_entity(key),
                Intent::Focus(p) => self.shared.set_focus(p),
                Intent::Request(r) => self.request(r),
            }
        }
    }

    /// Without a fixed `--now`, "now" follows the wall clock when asked to.
    pub(super) fn tick_clock(&mut self) {
        let s = &mut self.shared;
        if s.live_clock {
            let was_now = s.as_of == AsOf::now(s.now);
            s.now = Timestamp::now();
            if was_now {
                s.as_of = AsOf::now(s.now);
            }
        }
    }

    fn page_height(&self) -> usize {
        layout::list_height(self, self.shared.focus).max(1)
    }

    /// Scrolls every pane on screen the least needed for its selection to stay in view.
    pub(super) fn keep_visible(&mut self) {
        for (pane, _) in layout::areas(self).panes {
            let height = layout::list_height(self, pane);
            if let Some(cursor) = self.panes.get_mut(pane).cursor_mut() {
                cursor.keep_visible(height);
            }
        }
    }

    /// Puts a pane's cursor on a row, as a click does.
    pub(super) fn select_row(&mut self, pane: Pane, index: usize) {
        let component = self.panes.get_mut(pane);
        let len = component.len(&self.shared);
        let Some(cursor) = component.cursor_mut() else {
            return;
        };
        if index >= len {
            return;
        }
        cursor.set(index, len);
        let intents = component.moved(&self.shared);
        self.follow(intents);
        self.keep_visible();
    }

    fn move_cursor(&mut self, delta: isize) {
        let component = self.panes.get_mut(self.shared.focus);
        let len = component.len(&self.shared);
        let Some(cursor) = component.cursor_mut() else {
            return;
        };
        cursor.move_by(delta, len);
        let intents = component.moved(&self.shared);
        self.follow(intents);
    }

    pub fn open_entity(&mut self, key: EntityKey) {
        self.panes.entity.opening();
        self.request(View::Entity(key));
        self.shared.set_focus(Pane::Entity);
    }

    fn back(&mut self) {
        if self.shared.zoom {
            self.shared.zoom = false;
        } else if let Some(fp) = self.shared.selection.history.pop() {
            self.select(&fp, false);
        } else if self.shared.focus != Pane::Timeline {
            self.shared.set_focus(Pane::Timeline);
        } else {
            let changed = self.panes.timeline.clear_filter();
            self.refilter(changed);
        }
    }

    /// The timeline's filter changed: its first page, under the new filter.
    fn refilter(&mut self, changed: bool) {
        if changed {
            self.reload_timeline(0, true);
        }
    }

    fn step(&mut self, step: Step) {
        let current = match self.shared.axis {
            Axis::Valid => self.shared.as_of.valid_at,
            Axis::Known => self.shared.as_of.known_at,
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
            self.shared.message = Some(format!(
                "no earlier or later change on the {} axis",
                self.shared.axis.name()
            ));
            return;
        };
        let mut as_of = self.shared.as_of;
        match self.shared.axis {
            Axis::Valid => as_of.valid_at = target,
            Axis::Known => as_of.known_at = target.min(self.shared.now),
        }
        self.set_as_of(as_of);
    }

    /// The times, on the slider's axis, at which the selection's facts change state.
    pub fn change_points(&self) -> Vec<Timestamp> {
        let mut points = Vec::new();
        if let Some(d) = &self.shared.selection.detail {
            for f in &d.facts {
                match self.shared.axis {
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
        if as_of == self.shared.as_of {
            return;
        }
        let knowledge_moved = as_of.known_at != self.shared.as_of.known_at;
        self.shared.as_of = as_of;
        self.panes.facts.clamp(&self.shared);
        if knowledge_moved {
            self.request_lineage();
            self.request_review();
            let known_at = self.shared.known_filter();
            let request = self.panes.timeline.reload_around(known_at);
            self.request(request);
        }
        self.rerun_recall();
    }
}
