//! A reviewer's correction from the keys: what it is about (the supersession or episode
//! under the cursor), the new text for an episode, a reason, a confirmation, and then one
//! write on the worker. Its answer comes back as [`App::corrected`].

use ratatui_textarea::{CursorMove, TextArea};

use super::{App, Mode};
use crate::correct::CorrectReport;
use crate::correct::{Correction, CorrectionLine, EpisodeCorrection, SupersessionRef};
use crate::explorer::action::{Action, CorrectionKind, LineEdit};
use crate::explorer::pane::Pane;
use crate::explorer::panes::fact_views;
use crate::explorer::worker::{CallError, Request};

/// Where a correction being drafted stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DraftStep {
    /// Typing an episode's new text.
    Text,
    Reason,
    /// Asked to confirm; `line` is what will be recorded.
    Confirm,
}

/// What the correction is about.
#[derive(Clone, Debug, PartialEq)]
pub enum DraftTarget {
    Supersession(SupersessionRef),
    Episode(String),
}

pub struct Draft {
    pub kind: CorrectionKind,
    pub target: DraftTarget,
    pub step: DraftStep,
    pub text: TextArea<'static>,
    pub reason: TextArea<'static>,
    /// Checked as `strata correct` checks a line, once the reason is given.
    pub line: Option<CorrectionLine>,
    pub by: String,
}

impl Draft {
    /// The text box being typed in, if any.
    pub fn input(&mut self) -> Option<&mut TextArea<'static>> {
        match self.step {
            DraftStep::Text => Some(&mut self.text),
            DraftStep::Reason => Some(&mut self.reason),
            DraftStep::Confirm => None,
        }
    }

    /// What it is about, in words.
    pub fn about(&self) -> String {
        match &self.target {
            DraftTarget::Supersession(s) => format!(
                "{} superseding {} about {}:{}",
                s.episode, s.prior, s.entity_type, s.entity_ref
            ),
            DraftTarget::Episode(fp) => format!("episode {fp}"),
        }
    }

    fn correction(&self) -> Correction {
        let text = || Some(self.text.lines().join(" ").trim().to_string());
        match (&self.target, self.kind) {
            (DraftTarget::Supersession(s), CorrectionKind::Confirm) => {
                Correction::ConfirmSupersession(s.clone())
            }
            (DraftTarget::Supersession(s), _) => Correction::RetractSupersession(s.clone()),
            (DraftTarget::Episode(fp), kind) => Correction::CorrectEpisode(EpisodeCorrection {
                incident_fingerprint: fp.clone(),
                summary_nl: (kind == CorrectionKind::Summary).then(text).flatten(),
                resolution_nl: (kind == CorrectionKind::Resolution).then(text).flatten(),
            }),
        }
    }
}

impl App {
    /// Starts a correction of what is under the cursor in the focused pane.
    pub(super) fn start_correction(&mut self, kind: CorrectionKind) {
        let Some(by) = self.shared.reviewer.clone() else {
            self.shared.message =
                Some("who is correcting? start the explorer with --by NAME (or STRATA_BY)".into());
            return;
        };
        if let Err(why) = &self.shared.write_at {
            self.shared.message = Some(format!("corrections are not written: {why}"));
            return;
        }
        let target = if kind.is_verdict() {
            match self.supersession_under_cursor() {
                Ok(s) => DraftTarget::Supersession(s),
                Err(why) => {
                    self.shared.message = Some(why);
                    return;
                }
            }
        } else {
            let focus = self.shared.focus;
            if ![Pane::Timeline, Pane::Facts, Pane::Lineage, Pane::Review].contains(&focus) {
                self.shared.message = Some(
                    "correct an episode from the timeline, facts, lineage or review pane".into(),
                );
                return;
            }
            match self.panes.get(focus).episode(&self.shared) {
                Some(fp) => DraftTarget::Episode(fp),
                None => {
                    self.shared.message = Some("no episode under the cursor to correct".into());
                    return;
                }
            }
        };
        let mut text = TextArea::default();
        if let (DraftTarget::Episode(fp), Some(d)) = (&target, &self.shared.selection.detail)
            && d.episode.incident_fingerprint == *fp
        {
            // The text a correction replaces: the latest, whatever the as-of point.
            let current = d.episode.current();
            text.insert_str(match kind {
                CorrectionKind::Resolution => &current.resolution_nl,
                _ => &current.summary_nl,
            });
            text.move_cursor(CursorMove::End);
        }
        self.shared.draft = Some(Draft {
            kind,
            step: if kind.is_verdict() {
                DraftStep::Reason
            } else {
                DraftStep::Text
            },
            target,
            text,
            reason: TextArea::default(),
            line: None,
            by,
        });
        self.shared.mode = Mode::Correct;
    }

    /// The supersession the row under the cursor shows, or why there is none.
    fn supersession_under_cursor(&self) -> Result<SupersessionRef, String> {
        let s = &self.shared;
        match s.focus {
            Pane::Lineage => {
                let rows = self.panes.lineage.rows();
                let row = rows
                    .get(self.panes.lineage.cursor.index)
                    .ok_or("no lineage link under the cursor")?;
                let l = row.link;
                Ok(SupersessionRef {
                    episode: l.episode.clone(),
                    prior: l.prior.clone(),
                    entity_type: l.entity_type.clone(),
                    entity_ref: l.entity_ref.clone(),
                })
            }
            Pane::Facts => {
                let views = fact_views(s);
                let v = views
                    .get(self.panes.facts.cursor.index)
                    .ok_or("no fact under the cursor")?;
                let (Some(by), Some(prior)) = (&v.superseded_by, s.selected()) else {
                    return Err(format!(
                        "no supersession closed the {} fact about {}:{}; retract or confirm one from the lineage pane (5)",
                        v.relation, v.entity_type, v.entity_ref
                    ));
                };
                Ok(SupersessionRef {
                    episode: by.clone(),
                    prior: prior.to_string(),
                    entity_type: v.entity_type.clone(),
                    entity_ref: v.entity_ref.clone(),
                })
            }
            Pane::Review => self
                .panes
                .review
                .supersession()
                .ok_or_else(|| "no supersession under the cursor".to_string()),
            _ => Err(
                "retract or confirm a supersession from the facts, lineage or review pane".into(),
            ),
        }
    }

    /// An action while a correction is drafted: `open` moves to the next step, `back`
    /// cancels, `correct.record` writes it once confirmed.
    pub(super) fn in_correction(&mut self, action: Action) {
        match action {
            Action::Open => self.next_step(),
            Action::Back => self.cancel_correction(),
            Action::CorrectRecord => self.record_correction(),
            Action::Edit(edit) => self.edit_draft(edit),
            Action::Quit => self.shared.quit = true,
            _ => {}
        }
    }

    pub(super) fn edit_draft(&mut self, edit: LineEdit) {
        if let Some(input) = self.shared.draft.as_mut().and_then(Draft::input) {
            super::editing::apply(input, edit);
        }
    }

    fn next_step(&mut self) {
        let Some(draft) = self.shared.draft.as_mut() else {
            self.shared.mode = Mode::Normal;
            return;
        };
        self.shared.message = None;
        match draft.step {
            DraftStep::Text if draft.text.lines().join(" ").trim().is_empty() => {
                self.shared.message = Some("the new text is empty; Esc cancels".into());
            }
            DraftStep::Text => draft.step = DraftStep::Reason,
            DraftStep::Reason => {
                let line = CorrectionLine {
                    correction: draft.correction(),
                    reason: draft.reason.lines().join(" ").trim().to_string(),
                    by: draft.by.clone(),
                };
                // The same checks as a line of `strata correct` or a `correct_memory` call.
                let checked = serde_json::to_value(&line)
                    .map_err(|e| e.to_string())
                    .and_then(|v| {
                        crate::correct::parse_line("explorer", v).map_err(|e| e.to_string())
                    });
                match checked {
                    Ok(line) => {
                        draft.line = Some(line);
                        draft.step = DraftStep::Confirm;
                    }
                    Err(why) => self.shared.message = Some(said(&why)),
                }
            }
            DraftStep::Confirm => {}
        }
    }

    fn cancel_correction(&mut self) {
        self.shared.draft = None;
        self.shared.mode = Mode::Normal;
        self.shared.message = Some("correction cancelled; nothing was written".into());
    }

    fn record_correction(&mut self) {
        let Some(draft) = self.shared.draft.take_if(|d| d.step == DraftStep::Confirm) else {
            if self.shared.draft.is_none() {
                self.shared.message = Some("no correction is waiting to be confirmed".into());
            }
            return;
        };
        self.shared.mode = Mode::Normal;
        let (Some(line), Ok(at)) = (draft.line, self.shared.write_at.clone()) else {
            return;
        };
        self.shared.message = Some(format!("recording: {}…", line.correction.kind()));
        self.request(Request::Correct { line, at });
    }

    /// The store's answer to a correction: what it recorded and at what K, or why not.
    pub(super) fn corrected(&mut self, result: Result<CorrectReport, CallError>) {
        match result {
            Ok(report) => {
                let at = report
                    .recorded_at
                    .map(|t| t.to_string())
                    .unwrap_or_default();
                let mut what = Vec::new();
                for (n, word) in [
                    (report.retracted, "retracted"),
                    (report.confirmed, "confirmed"),
                    (report.episodes_corrected, "episode corrected"),
                    (report.facts_reopened, "facts valid again"),
                    (report.facts_reclosed, "facts closed again"),
                ] {
                    if n > 0 {
                        what.push(format!("{n} {word}"));
                    }
                }
                self.shared.message = Some(format!("recorded at K {at}: {}", what.join(", ")));
                // What this process wrote is shown at once; the follower tells the rest.
                self.reread();
            }
            Err(CallError::Store(e @ crate::store::StoreError::Rejected { .. })) => {
                self.shared.message = Some(said(&format!("refused, nothing was written: {e}")));
            }
            Err(e) => {
                self.shared.message = Some(said(&format!(
                    "correction failed, nothing was written: {e}"
                )))
            }
        }
    }
}

/// A store's message for the status bar: secrets redacted, and every control or
/// bidirectional character a reviewer's text may carry shown escaped, never emitted.
fn said(message: &str) -> String {
    crate::redact::escape_terminal_unsafe(&crate::redact::redact(message))
}
