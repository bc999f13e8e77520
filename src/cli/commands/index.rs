use std::process::{Command, ExitCode, Stdio};
use std::sync::Arc;

use color_eyre::eyre::Result;

use crate::cli::context::Context;
use crate::cli::output::{print_json, say};
use strata::index::VectorLocation;
use strata::index::vectors::{VectorIndex, index_path};
use strata::store::MemoryStore;

/// Set in the child that reads the local vector index through before `strata index` uses it.
const VERIFIER: &str = "STRATA_INDEX_VERIFIER";
/// What the child says once the store opened, so a crash after it is the index's.
const STORE_OPENED: &str = "store opened";

pub fn run(ctx: &Context, json: bool) -> Result<ExitCode> {
    if std::env::var_os(VERIFIER).is_some() {
        return read_vectors_through(ctx);
    }
    let store: Arc<dyn MemoryStore> = ctx.open_store()?;
    if ctx.vectors == VectorLocation::Local {
        set_aside_vectors_that_crash_a_reader(ctx);
    }
    let stack = ctx.open_recall(store);
    let value = serde_json::json!({
        "text_indexed": stack.sync.text_indexed,
        "vectors_embedded": stack.sync.vectors_embedded,
        "text_documents": stack.text.as_ref().map(|t| t.len()),
        "vectors": stack.vectors.as_ref().map(|v| v.count().unwrap_or(0)),
        "embedder": stack.engine.embedder_label(),
        "notices": stack.notices,
    });
    if json {
        print_json(&value)?;
    } else {
        println!(
            "indexed {} new texts and {} new vectors; text index {} documents, vector index {} vectors ({})",
            stack.sync.text_indexed,
            stack.sync.vectors_embedded,
            stack.text.as_ref().map_or(0, |t| t.len()),
            stack.vectors.as_ref().map_or(0, |v| v.count().unwrap_or(0)),
            stack.engine.embedder_label()
        );
    }
    // The indexes caught up, or a failure saying which did not.
    Ok(if stack.stopped.is_empty() && stack.text.is_some() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// LMDB trusts the vector index's pages; a page garbled in just the wrong place can stop the
/// process reading it. A child reads the whole index first (as opening it does): an index
/// that stops the child is moved aside, and this process rebuilds it from the store.
fn set_aside_vectors_that_crash_a_reader(ctx: &Context) {
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    let child = Command::new(exe)
        .args(std::env::args_os().skip(1))
        .env(VERIFIER, "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .output();
    let Ok(out) = child else {
        return;
    };
    let reached = String::from_utf8_lossy(&out.stdout).contains(STORE_OPENED);
    let crashed = std::os::unix::process::ExitStatusExt::signal(&out.status).is_some()
        || out.status.code() == Some(strata::lmdb::fatal::DAMAGED_EXIT);
    if !(reached && crashed) {
        return;
    }
    let Ok(embedder) = ctx.build_embedder() else {
        return;
    };
    let path = index_path(&ctx.index_dir(), embedder.model());
    let aside = path.with_file_name(format!(
        "{}.damaged-{}",
        path.file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
        strata::model::Timestamp::now().millis()
    ));
    match std::fs::rename(&path, &aside) {
        Ok(()) => say!(
            "note: the vector index {} stopped a process reading it (a garbled page): moved \
             aside to {}; rebuilding it from the store",
            path.display(),
            aside.display()
        ),
        Err(e) => say!(
            "note: the vector index {} stopped a process reading it, and cannot be moved \
             aside: {e}",
            path.display()
        ),
    }
}

/// The child's part: open the store, then the local vector index, which reads every row.
fn read_vectors_through(ctx: &Context) -> Result<ExitCode> {
    let store = ctx.open_store()?;
    let id = strata::index::store_identity(store.as_ref())?;
    println!("{STORE_OPENED}");
    let embedder = ctx.build_embedder()?;
    // A damage it can tell (a checksum, a row out of place) it mends itself, as any open.
    VectorIndex::open(
        &ctx.index_dir(),
        embedder.model(),
        embedder.dimension(),
        Some(&id),
    )?;
    Ok(ExitCode::SUCCESS)
}
