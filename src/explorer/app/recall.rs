//! Recall from the app's side: seeding it from an episode, running it, and saying in the
//! status bar what it is doing.

use std::collections::HashMap;

use super::App;
use crate::explorer::pane::Pane;
use crate::explorer::panes::RecallSeed;
use crate::explorer::worker::View;
use crate::learning::CodeUnit;
use crate::query::views::EpisodeDetail;
use crate::recall::RecallResponse;

impl App {
    /// Recalls incidents like the episode the focused pane means (the row under its
    /// cursor, or the selection), leaving it out; the recall pane comes forward.
    pub(super) fn seed_recall(&mut self) {
        let Some(fp) = self.panes.get(self.shared.focus).episode(&self.shared) else {
            self.shared.message = Some("select an episode first".into());
            return;
        };
        self.shared.set_focus(Pane::Recall);
        let loaded = self
            .shared
            .selection
            .detail
            .as_ref()
            .filter(|d| d.episode.incident_fingerprint == fp)
            .map(RecallSeed::of);
        match loaded {
            Some((text, seed)) => self.seeded(text, seed),
            None => {
                self.announce(&fp);
                self.seeding = Some(fp.clone());
                self.request(View::Seed(fp));
            }
        }
    }

    /// The episode to seed from was read.
    pub(super) fn seed_read(&mut self, detail: Option<EpisodeDetail>) {
        let Some(fp) = self.seeding.take() else {
            return;
        };
        match detail.filter(|d| d.episode.incident_fingerprint == fp) {
            Some(d) => {
                let (text, seed) = RecallSeed::of(&d);
                self.seeded(text, seed);
            }
            None => self.shared.message = Some(format!("no episode {fp} to recall like")),
        }
    }

    fn seeded(&mut self, text: String, seed: RecallSeed) {
        self.announce(&seed.fingerprint);
        self.panes.recall.set_query(&text, Some(seed));
        self.run_recall();
    }

    /// Says in the status bar which episode recall is running like, until it answers.
    fn announce(&mut self, fingerprint: &str) {
        let message = format!("recalling like {fingerprint}…");
        self.shared.message = Some(message.clone());
        self.announced = Some(message);
    }

    /// A query of the user's own replaces a seed still being read.
    pub(super) fn cancel_seed(&mut self) {
        self.seeding = None;
    }

    pub(super) fn rerun_recall(&mut self) {
        if self.panes.recall.has_run() {
            self.run_recall();
        }
    }

    pub(super) fn run_recall(&mut self) {
        match self.panes.recall.run(self.shared.as_of) {
            Ok(request) => self.request(request),
            Err(why) => self.shared.message = Some(why.into()),
        }
    }

    /// The newest recall answered; what was announced for it is replaced by what came back.
    pub(super) fn recalled(
        &mut self,
        response: RecallResponse,
        files: HashMap<String, Vec<CodeUnit>>,
    ) {
        let still_announced = self
            .announced
            .take()
            .is_some_and(|announced| self.shared.message.as_deref() == Some(announced.as_str()));
        if still_announced && let Some(seed) = &self.panes.recall.seed {
            let seeds = match response.entities.len() {
                0 => "no entity valid at the as-of point seeded the graph leg".to_string(),
                1 => "the graph leg seeded by its 1 entity".to_string(),
                n => format!("the graph leg seeded by its {n} entities"),
            };
            self.shared.message = Some(format!(
                "recalled {} incidents like {} · {seeds}",
                response.results.len(),
                seed.fingerprint
            ));
        }
        self.panes.recall.answered(response, files);
    }
}
