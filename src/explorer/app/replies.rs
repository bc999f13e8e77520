use serde_json::json;

use super::{App, Health};
use crate::explorer::worker::{Envelope, Reply};

impl App {
    /// Applies a background reply; replies to a request that a newer one of its kind
    /// replaced are dropped.
    pub fn on_reply(&mut self, envelope: Envelope) {
        let Envelope { id, reply } = envelope;
        let kind = reply.kind();
        let stale = reply.answers_request() && self.latest.get(kind) != Some(&id);
        if reply.answers_request() {
            self.pending = self.pending.saturating_sub(1);
        }
        if !matches!(reply, Reply::Progress { .. }) {
            self.record(json!({"event": "reply", "kind": kind, "id": id, "stale": stale}));
        }
        if stale {
            return;
        }
        match reply {
            Reply::Opened { backend, notices } => {
                self.backend_opened = true;
                self.backend = backend;
                self.health = Health::Ok;
                self.notices.extend(notices);
            }
            Reply::OpenFailed(why) => {
                self.health = Health::Down(why.clone());
                self.banner = Some(format!("store unavailable: {why}"));
            }
            Reply::Progress { label, done, total } => {
                self.progress = (done < total).then_some((label, done, total));
            }
            Reply::RecallReady { embedder, notices } => {
                self.embedder = Some(embedder);
                self.progress = None;
                self.notices.extend(notices);
            }
            Reply::Stats(Ok(summary)) => {
                self.summary = Some(summary);
                if matches!(self.health, Health::Down(_)) && self.backend_opened {
                    self.health = Health::Ok;
                }
                if self.health == Health::Ok {
                    self.banner = None;
                }
            }
            Reply::Stats(Err(e)) => self.store_error(e),
            Reply::Timeline(Ok(page)) => {
                self.timeline.loading = false;
                self.timeline.offset = page.offset;
                self.timeline.total = Some(page.total);
                self.timeline.rows = page.rows;
                let len = self.timeline.len();
                let kept = (!self.timeline.select_on_load)
                    .then_some(self.selected.as_deref())
                    .flatten()
                    .and_then(|fp| self.timeline.rows.iter().position(|r| r.fingerprint == fp));
                match kept {
                    Some(i) => self.timeline.cursor.set(self.timeline.offset + i, len),
                    None => {
                        self.timeline.cursor.set(self.timeline.cursor.index, len);
                        if self.timeline.row(self.timeline.cursor.index).is_some()
                            && (self.timeline.select_on_load || self.selected.is_none())
                        {
                            self.timeline_cursor_moved();
                        }
                    }
                }
                self.after_resize();
            }
            Reply::Timeline(Err(e)) => {
                self.timeline.loading = false;
                self.store_error(e);
            }
            Reply::Episode(Ok(detail)) => {
                self.compare_selection(detail.as_ref());
                if detail.is_none() {
                    self.message = Some(format!(
                        "no episode {}",
                        self.selected.as_deref().unwrap_or_default()
                    ));
                }
                self.detail = detail;
                let len = self.fact_views().len();
                self.facts_cursor.set(self.facts_cursor.index, len);
            }
            Reply::Episode(Err(e)) => self.store_error(e),
            Reply::Lineage(Ok(l)) => self.lineage = Some(l),
            Reply::Lineage(Err(e)) => {
                self.lineage = None;
                self.message = Some(e);
            }
            Reply::Entity(Ok(e)) => {
                self.entity = Some(e);
                let len = self.entity_rows().len();
                self.entity_cursor.set(self.entity_cursor.index, len);
            }
            Reply::Entity(Err(e)) => self.store_error(e),
            Reply::Recall(response, files) => {
                self.recall.running = false;
                self.recall.files = files;
                let len = response.results.len();
                self.recall.response = Some(*response);
                self.recall.cursor.set(self.recall.cursor.index, len);
            }
            Reply::Changes(Ok(Some(change))) | Reply::Changed(change) => self.apply_change(change),
            Reply::Changes(Ok(None)) => {}
            Reply::Changes(Err(e)) => self.store_error(e),
            Reply::Indexed(catch_up) => {
                self.progress = None;
                self.notices.extend(catch_up.problems);
            }
        }
        self.after_resize();
    }

    fn store_error(&mut self, e: String) {
        tracing::warn!(error = %e, "store call failed");
        self.health = Health::Down(e.clone());
        self.banner = Some(format!("store error: {e}"));
    }
}
