//! Headless mode: the real explorer loop driven by a script, writing text and SVG frames.

pub mod frame;
pub mod script;
pub mod session;

pub use script::{Command, Line, ScriptError, parse};
pub use session::{HeadlessError, Session, SessionOptions};
