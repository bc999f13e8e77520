//! What recall hands back: everything it found (active), or nothing yet (shadow). A memory is
//! rolled out shadow-first: the legs run and every recall is recorded, so the warm signal
//! shows whether the memory returns real hits before an agent is given its answers.

use serde::Serialize;

#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    serde::Deserialize,
    clap::ValueEnum,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum RecallMode {
    /// Recall hands back what it found
    #[default]
    Active,
    /// Recall runs every leg and is recorded, but hands back no results: how many it
    /// withheld and each leg's status
    Shadow,
}

impl RecallMode {
    pub const ALL: [RecallMode; 2] = [RecallMode::Active, RecallMode::Shadow];

    pub fn as_str(self) -> &'static str {
        match self {
            RecallMode::Active => "active",
            RecallMode::Shadow => "shadow",
        }
    }

    pub fn index(self) -> usize {
        self as usize
    }
}

impl std::fmt::Display for RecallMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
