//! The store's health as the status bar shows it: what kind of trouble, and its message.

use crate::explorer::worker::{CallError, OpenError};
use crate::store::StoreError;

#[derive(Clone, Debug, PartialEq)]
pub enum Health {
    Opening,
    Ok,
    /// The server, or the store's files, cannot be reached.
    Unreachable(String),
    /// A record or the schema cannot be read.
    Corrupt(String),
    /// Other writers hold the store.
    Locked(String),
    /// Any other failure.
    Failed(String),
}

impl Health {
    pub fn of_call(error: &CallError) -> Health {
        let message = error.to_string();
        match error.store() {
            Some(e) => Health::of_store(e, message),
            None => Health::Failed(message),
        }
    }

    pub fn of_open(error: &OpenError) -> Health {
        let message = error.to_string();
        match error.downcast_ref::<StoreError>() {
            Some(e) => Health::of_store(e, message),
            None => Health::Failed(message),
        }
    }

    fn of_store(error: &StoreError, message: String) -> Health {
        match error {
            StoreError::Open { .. }
            | StoreError::Unreachable { .. }
            | StoreError::NotReplicated { .. } => Health::Unreachable(message),
            StoreError::Corrupt { .. }
            | StoreError::Damaged { .. }
            | StoreError::Lost { .. }
            | StoreError::NewerSchema { .. }
            | StoreError::Malformed { .. }
            | StoreError::Migration(_)
            | StoreError::Local(heed::Error::Mdb(
                heed::MdbError::Corrupted
                | heed::MdbError::PageNotFound
                | heed::MdbError::Invalid
                | heed::MdbError::VersionMismatch,
            )) => Health::Corrupt(message),
            StoreError::Busy(_) | StoreError::Contended { .. } => Health::Locked(message),
            StoreError::Rejected { .. }
            | StoreError::ReadOnly { .. }
            | StoreError::WriteFailed { .. }
            | StoreError::Partial { .. }
            | StoreError::Authentication { .. }
            | StoreError::Server { .. }
            | StoreError::Local(_)
            | StoreError::Unsupported { .. }
            | StoreError::Read { .. }
            | StoreError::Changed { .. }
            | StoreError::Internal(_) => Health::Failed(message),
        }
    }

    pub fn is_down(&self) -> bool {
        self.message().is_some()
    }

    /// One word for the status bar.
    pub fn label(&self) -> &'static str {
        match self {
            Health::Opening => "opening",
            Health::Ok => "ok",
            Health::Unreachable(_) => "unreachable",
            Health::Corrupt(_) => "corrupt",
            Health::Locked(_) => "locked",
            Health::Failed(_) => "failed",
        }
    }

    pub fn message(&self) -> Option<&str> {
        match self {
            Health::Opening | Health::Ok => None,
            Health::Unreachable(m) | Health::Corrupt(m) | Health::Locked(m) | Health::Failed(m) => {
                Some(m)
            }
        }
    }
}
