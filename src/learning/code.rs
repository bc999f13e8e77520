//! The code↔graph join: `CodeUnit`s (files of a repository owned by a service), each with
//! a deterministic `embedding_ref` that a vector store can use as its point id.

use serde::{Deserialize, Serialize};
use uuid::Uuid;

#[derive(
    Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct CodeUnit {
    pub repo: String,
    pub path: String,
    /// The owning service: the `entity_ref` of a `service:` entity.
    pub service: String,
    /// UUIDv5 of `repo|path` in the URL namespace.
    pub embedding_ref: String,
}

impl CodeUnit {
    pub fn new(repo: &str, path: &str, service: &str) -> CodeUnit {
        CodeUnit {
            repo: repo.to_string(),
            path: path.to_string(),
            service: service.to_string(),
            embedding_ref: embedding_ref(repo, path),
        }
    }
}

/// `uuid5(NAMESPACE_URL, "repo|path")`: the same in every program that follows the rule
/// (Python: `uuid.uuid5(uuid.NAMESPACE_URL, f"{repo}|{path}")`).
pub fn embedding_ref(repo: &str, path: &str) -> String {
    Uuid::new_v5(&Uuid::NAMESPACE_URL, format!("{repo}|{path}").as_bytes()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedding_ref_is_uuid5_of_repo_and_path() {
        // python3 -c 'import uuid; print(uuid.uuid5(uuid.NAMESPACE_URL, "acme/auth|src/session.rs"))'
        assert_eq!(
            embedding_ref("acme/auth", "src/session.rs"),
            "c114cc27-7563-5b1f-b932-edcd52dc828b"
        );
        let a = embedding_ref("acme/auth", "src/session.rs");
        assert_eq!(a, embedding_ref("acme/auth", "src/session.rs"));
        assert_ne!(a, embedding_ref("acme/auth", "src/session.go"));
        assert_eq!(Uuid::parse_str(&a).unwrap().get_version_num(), 5);
    }
}
