//! Background replies. Stale ones never get here: the worker marks them and
//! [`crate::explorer::Explorer`] drops them.

use super::{App, Effects, Health};
use crate::explorer::worker::{CallError, Reply};

impl App {
    /// Applies a fresh reply; returns the requests it leads to.
    pub fn on_reply(&mut self, reply: Reply) -> Effects {
        match reply {
            Reply::Opened { backend, notices } => {
                let store = &mut self.shared.store;
                store.opened = true;
                store.backend = backend;
                store.health = Health::Ok;
                store.notices.extend(notices);
            }
            Reply::OpenFailed(why) => {
                tracing::warn!(error = ?why, "the store could not be opened");
                let health = Health::of_open(&why);
                let store = &mut self.shared.store;
                store.banner = Some(format!("store unavailable: {why}"));
                store.health = health;
            }
            Reply::Progress(p) => {
                self.shared.store.progress = (p.done < p.total).then_some(p);
            }
            Reply::RecallReady { embedder, notices } => {
                let store = &mut self.shared.store;
                store.embedder = Some(embedder);
                store.progress = None;
                store.notices.extend(notices);
            }
            Reply::Stats(Ok(summary)) => {
                let store = &mut self.shared.store;
                store.summary = Some(summary);
                if store.health.is_down() && store.opened {
                    store.health = Health::Ok;
                }
                if store.health == Health::Ok {
                    store.banner = None;
                }
            }
            Reply::Stats(Err(e)) => self.store_error(&e),
            Reply::Warm(signal) => self.shared.store.warm = Some(signal),
            Reply::Timeline(Ok(page)) => {
                let intents =
                    self.panes
                        .timeline
                        .loaded(page, self.shared.selected(), &self.shared);
                self.follow(intents);
            }
            Reply::Timeline(Err(e)) => {
                self.panes.timeline.failed();
                self.store_error(&e);
            }
            Reply::Episode(Ok(detail)) => {
                self.compare_selection(detail.as_ref());
                if detail.is_none() {
                    self.shared.message = Some(format!(
                        "no episode {}",
                        self.shared.selected().unwrap_or_default()
                    ));
                }
                self.shared.selection.detail = detail;
                self.panes.facts.clamp(&self.shared);
            }
            Reply::Episode(Err(e)) => self.store_error(&e),
            Reply::Seed(Ok(detail)) => self.seed_read(detail),
            Reply::Seed(Err(e)) => {
                self.seed_read(None);
                self.store_error(&e);
            }
            Reply::Lineage(result) => {
                if let Err(e) = &result {
                    self.shared.message = Some(e.to_string());
                }
                self.panes.lineage.loaded(result.ok());
            }
            Reply::Entity(Ok(e)) => self.panes.entity.loaded(e, &self.shared),
            Reply::Entity(Err(e)) => self.store_error(&e),
            Reply::Recall(response, files) => self.recalled(*response, files),
            Reply::Changes(Ok(Some(change))) | Reply::Changed(change) => self.apply_change(change),
            Reply::Changes(Ok(None)) => {}
            Reply::Changes(Err(e)) => self.store_error(&e),
            Reply::History(Ok(entries)) => self.history.loaded(entries),
            // With no store there is nothing to recall, nor a history of it to show.
            Reply::History(Err(CallError::NotOpen))
            | Reply::QuerySaved(Err(CallError::NotOpen)) => {}
            Reply::History(Err(e)) | Reply::QuerySaved(Err(e)) => {
                tracing::warn!(error = %e, "query history");
                self.shared.store.notices.push(e.to_string());
            }
            Reply::QuerySaved(Ok(())) => {}
            Reply::Review(Ok(rows)) => self.panes.review.loaded_rows(rows),
            Reply::Feed(Ok(feed)) => self.panes.review.loaded_feed(feed),
            Reply::Review(Err(e)) | Reply::Feed(Err(e)) => self.store_error(&e),
            Reply::Corrected(result) => self.corrected(result),
            Reply::Indexed(catch_up) => {
                self.shared.store.progress = None;
                self.shared.store.notices.extend(catch_up.problems);
            }
        }
        self.keep_visible();
        self.take_effects()
    }

    fn store_error(&mut self, e: &CallError) {
        tracing::warn!(error = ?e, "store call failed");
        let store = &mut self.shared.store;
        store.health = Health::of_call(e);
        store.banner = Some(format!("store error: {e}"));
    }
}
