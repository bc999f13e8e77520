use std::process::ExitCode;
use std::sync::Arc;

use color_eyre::eyre::Result;

use crate::cli::context::Context;
use crate::cli::output::print_json;
use strata::store::MemoryStore;

pub fn run(ctx: &Context, json: bool) -> Result<ExitCode> {
    let store: Arc<dyn MemoryStore> = ctx.open_store()?;
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
