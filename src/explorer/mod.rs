//! The explorer: a ratatui app for browsing memory through time and auditing recall.
//!
//! [`app::App`] is the state; it changes in response to named [`action::Action`]s, keys,
//! the mouse and background replies, and returns the requests it needs as effects.
//! [`panes`] holds one component per pane; [`ui`] draws the rest around them;
//! [`worker::Worker`] does all I/O on a background runtime. [`Explorer`] wires the state
//! to the worker; [`terminal::run`] drives it in a real terminal, `crate::headless` from
//! a script.

pub mod action;
pub mod app;
pub mod cursor;
mod driver;
pub mod history;
pub mod key;
pub mod keymap;
pub mod live;
pub mod pane;
pub mod panes;
pub mod terminal;
pub mod theme;
pub mod ui;
pub mod worker;

pub use app::{App, Options};
pub use driver::Explorer;
pub use keymap::{Keymap, KeymapOverrides};
pub use theme::{Theme, ThemeSection};
pub use worker::{RecallOpener, StoreOpener, Worker, WorkerOptions};
