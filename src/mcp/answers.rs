//! The tools' answers that are not the CLI's `--json` as it is: a list is wrapped in an object
//! (MCP's structured content is an object), with its length.

use schemars::JsonSchema;
use serde::Serialize;

use crate::learning::{CodeUnit, Skill};

/// `skills`: what `strata skills --json` lists.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Skills {
    pub count: usize,
    pub skills: Vec<Skill>,
}

/// `code`: what `strata code --json` lists.
#[derive(Debug, Serialize, JsonSchema)]
pub struct CodeUnits {
    pub count: usize,
    pub code_units: Vec<CodeUnit>,
}
