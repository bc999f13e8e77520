//! The explorer: a ratatui app for browsing memory through time and auditing recall.
//!
//! [`app::App`] holds the state and changes it in response to named [`action::Action`]s,
//! keys, the mouse and background replies; [`ui::render`] draws it; [`worker::Worker`]
//! does all I/O on a background runtime. [`terminal::run`] drives it in a real terminal,
//! `crate::headless` from a script.

pub mod action;
pub mod app;
pub mod cursor;
pub mod key;
pub mod keymap;
pub mod live;
pub mod pane;
pub mod terminal;
pub mod theme;
pub mod ui;
pub mod worker;

pub use app::{App, Options};
pub use keymap::{Keymap, KeymapOverrides};
pub use theme::{Theme, ThemeSection};
pub use worker::{RecallOpener, StoreOpener, Worker, WorkerOptions};
