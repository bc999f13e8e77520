//! The explorer: its state wired to its worker. Every change of state returns effects;
//! the requests among them go to the worker, and what comes back is handed to the state
//! unless a newer request of its kind made it stale.

use std::time::Duration;

use ratatui::Frame;
use ratatui::layout::Rect;
use serde_json::{Value, json};

use super::app::{App, Effects, MouseKind, Options};
use super::key::KeyChord;
use super::worker::{Envelope, Raw, Worker};
use super::{action::Action, ui};

pub struct Explorer {
    app: App,
    worker: Worker,
    /// The event log, when recording.
    events: Option<Vec<Value>>,
}

impl Explorer {
    pub fn new(options: Options, worker: Worker, size: Rect) -> Explorer {
        let record = options.record_events;
        let (app, effects) = App::new(options, size);
        let mut explorer = Explorer {
            app,
            worker,
            events: record.then(Vec::new),
        };
        explorer.carry_out(effects);
        explorer
    }

    pub fn app(&self) -> &App {
        &self.app
    }

    pub fn render(&self, frame: &mut Frame) {
        ui::render(frame, &self.app);
    }

    pub fn quit(&self) -> bool {
        self.app.shared.quit
    }

    pub fn dispatch(&mut self, action: Action) {
        let effects = self.app.dispatch(action);
        self.carry_out(effects);
    }

    pub fn on_key(&mut self, key: KeyChord) {
        let effects = self.app.on_key(key);
        self.carry_out(effects);
    }

    pub fn on_mouse(&mut self, kind: MouseKind, column: u16, row: u16) {
        let effects = self.app.on_mouse(kind, column, row);
        self.carry_out(effects);
    }

    pub fn on_resize(&mut self, width: u16, height: u16) {
        let effects = self.app.on_resize(width, height);
        self.carry_out(effects);
    }

    /// Asks the worker once whether the store changed; returns whether it asked.
    pub fn check_for_changes(&mut self) -> bool {
        match self.app.check_for_changes() {
            Some(effects) => {
                self.carry_out(effects);
                true
            }
            None => false,
        }
    }

    /// Requests sent and not yet answered, stale ones included.
    pub fn pending(&self) -> usize {
        self.worker.pending()
    }

    pub fn is_idle(&self) -> bool {
        self.app.is_idle()
    }

    /// The channel replies arrive on, for a loop that waits on it beside its input.
    pub fn replies(&self) -> crossbeam_channel::Receiver<Raw> {
        self.worker.receiver().clone()
    }

    /// Applies a reply taken from [`Explorer::replies`].
    pub fn on_raw(&mut self, raw: Raw) {
        let envelope = self.worker.open(raw);
        self.on_reply(envelope);
    }

    /// Applies every reply already waiting; returns whether there was any.
    pub fn drain(&mut self) -> bool {
        let mut any = false;
        while let Some(envelope) = self.worker.try_recv() {
            self.on_reply(envelope);
            any = true;
        }
        any
    }

    /// Waits up to `timeout` for one reply and applies it; false when none came.
    pub fn wait(&mut self, timeout: Duration) -> bool {
        match self.worker.recv_timeout(timeout) {
            Some(envelope) => {
                self.on_reply(envelope);
                true
            }
            None => false,
        }
    }

    fn on_reply(&mut self, Envelope { id, stale, reply }: Envelope) {
        self.app.set_pending(self.worker.pending());
        if !matches!(reply, super::worker::Reply::Progress(_)) {
            self.record(json!({"event": "reply", "kind": reply.name(), "id": id, "stale": stale}));
        }
        if stale {
            return;
        }
        let effects = self.app.on_reply(reply);
        self.carry_out(effects);
    }

    fn carry_out(&mut self, effects: Effects) {
        let Effects { requests, actions } = effects;
        for action in actions {
            self.record(json!({
                "event": "action",
                "name": action.name(),
                "argument": action.argument(),
            }));
        }
        for request in requests {
            let kind = request.kind();
            let id = self.worker.send(request);
            self.record(json!({"event": "request", "kind": kind.as_str(), "id": id}));
        }
        self.app.set_pending(self.worker.pending());
    }

    fn record(&mut self, event: Value) {
        if let Some(events) = &mut self.events {
            events.push(event);
        }
    }

    pub fn record_frame(&mut self, hash: &str) {
        self.record(json!({"event": "frame", "hash": hash}));
    }

    /// The events recorded since the last call (empty unless recording).
    pub fn take_events(&mut self) -> Vec<Value> {
        self.events.as_mut().map(std::mem::take).unwrap_or_default()
    }
}
