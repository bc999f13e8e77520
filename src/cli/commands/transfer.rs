use std::process::ExitCode;

use color_eyre::eyre::{Result, eyre};

use crate::cli::args::{BackupArgs, ExportArgs, RestoreArgs};
use crate::cli::context::{Context, progress_printer};
use crate::cli::output::{print_json, say};
use strata::store::StoreLocation;
use strata::store::embedded::EmbeddedStore;
use strata::transfer::export::{CarriedVectors, Destination, ExportOptions};
use strata::transfer::restore::RestoreOptions;
use strata::transfer::{TransferError, backup as backups, export as exports, restore as restores};

/// The embedder named in an export's header: what built the vectors of the store it came from.
fn embedding_model(ctx: &Context) -> String {
    match ctx.embedder.kind {
        strata::embed::EmbedderKind::Minilm => "all-MiniLM-L6-v2".to_string(),
        strata::embed::EmbedderKind::Openai => format!("openai:{}", ctx.embedder.openai_model),
        strata::embed::EmbedderKind::Hash => "hash".to_string(),
    }
}

pub fn export(ctx: &Context, args: &ExportArgs) -> Result<ExitCode> {
    let store = ctx.open_store()?;
    let vectors = if args.with_vectors {
        // The index caught up with the store first: every episode's vector is in the file.
        let stack = ctx.open_recall(store.clone());
        let (Some(index), Some(embedder)) = (stack.vectors.clone(), stack.embedder.clone()) else {
            return Err(eyre!(
                "--with-vectors: the vector index cannot be opened ({})",
                stack.notices.join("; ")
            ));
        };
        Some(CarriedVectors::new(
            index,
            embedder.model(),
            embedder.dimension(),
        ))
    } else {
        None
    };
    let options = ExportOptions {
        known_at: args.known_at,
        embedding_model: Some(embedding_model(ctx)),
        vectors,
    };
    let mut progress = progress_printer("exported episodes");
    let summary = match &args.to {
        Some(path) => exports::export(
            store.as_ref(),
            &options,
            Destination::File(path),
            &mut progress,
        )?,
        None => {
            let mut stdout = std::io::stdout().lock();
            exports::export(
                store.as_ref(),
                &options,
                Destination::Writer(&mut stdout),
                &mut progress,
            )?
        }
    };
    let c = summary.counts;
    say!(
        "exported {} episodes, {} facts, {} supersessions, {} entities, {} skill versions, {} code units{}{} ({} bytes, sha256 {})",
        c.episodes,
        c.facts,
        c.supersessions,
        c.entities,
        c.skills,
        c.code_units,
        corrections_said(&c),
        if c.vectors > 0 {
            format!(", {} vectors", c.vectors)
        } else {
            String::new()
        },
        summary.bytes,
        summary.sha256
    );
    if args.json {
        print_json(&summary)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// ", N corrections (V versions, R reviews)" when the file has corrections.
fn corrections_said(c: &strata::transfer::format::Counts) -> String {
    if c.corrections == 0 {
        return String::new();
    }
    format!(
        ", {} corrections ({} versions, {} reviews)",
        c.corrections,
        c.episode_versions + c.fact_versions,
        c.reviews
    )
}

pub fn restore(ctx: &Context, args: &RestoreArgs) -> Result<ExitCode> {
    let store = ctx.open_store()?;
    say!("{}: checking", args.file.display());
    let mut progress = progress_printer("restored episodes");
    let report = match restores::restore(
        store.as_ref(),
        &args.file,
        RestoreOptions { merge: args.merge },
        &mut progress,
    ) {
        Ok(r) => r,
        Err(e @ (TransferError::Refused { .. } | TransferError::NotEmpty { .. })) => {
            say!("{e}");
            return Ok(ExitCode::FAILURE);
        }
        Err(e) => return Err(e.into()),
    };
    let c = report.counts;
    say!(
        "{}: {} ({} episodes, {} facts, {} supersessions, {} entities, {} skill versions, {} code units{}; read back equal to the file)",
        report.file,
        report.outcome.replace('_', " "),
        c.episodes,
        c.facts,
        c.supersessions,
        c.entities,
        c.skills,
        c.code_units,
        corrections_said(&c)
    );
    if !args.no_index && report.applied.new_episodes > 0 {
        carry_vectors(ctx, &store, &report)?;
        say!("rebuilding the recall indexes");
        let stack = ctx.open_recall(store);
        say!(
            "recall indexes: {} texts, {} vectors added",
            stack.sync.text_indexed,
            stack.sync.vectors_embedded
        );
    }
    if args.out.json {
        print_json(&report)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The vectors the file carries, written into the vector index when they were built by
/// this store's embedder, so that the catch-up after a restore embeds nothing.
fn carry_vectors(
    ctx: &Context,
    store: &std::sync::Arc<dyn strata::store::MemoryStore>,
    report: &restores::RestoreReport,
) -> Result<()> {
    if report.vectors.is_none() {
        return Ok(());
    }
    let stack = strata::recall::RecallStack::open(
        store.clone(),
        ctx.build_embedder(),
        &strata::recall::StackOptions {
            index_dir: ctx.index_dir(),
            sync: false,
            vectors: ctx.vectors.clone(),
            runtime: None,
        },
        &mut |_, _| {},
    );
    let (Some(index), Some(embedder)) = (&stack.vectors, &stack.embedder) else {
        say!(
            "the file's vectors are not used: the vector index cannot be opened ({})",
            stack.notices.join("; ")
        );
        return Ok(());
    };
    let restored = restores::restore_vectors(
        store.as_ref(),
        report,
        index.as_ref(),
        (embedder.model(), embedder.dimension()),
    )?;
    match restored.not_used {
        Some(why) => say!("{why}"),
        None => say!(
            "vectors: {} carried from the file into {}, none embedded for them",
            restored.carried,
            index.describe()
        ),
    }
    Ok(())
}

pub fn backup(ctx: &Context, args: &BackupArgs) -> Result<ExitCode> {
    let StoreLocation::Embedded(dir) = &ctx.store else {
        return Err(eyre!(
            "strata backup copies the embedded store; a FalkorDB graph is backed up by the \
             server (BGSAVE, see docs/operations.md), or moved with strata export"
        ));
    };
    let store = EmbeddedStore::open(dir)?;
    let manifest = backups::backup(&store, dir, &args.dir, strata::model::Timestamp::now())?;
    say!(
        "backed up {} episodes ({} bytes, generation {}) into {}",
        manifest.episodes,
        manifest.bytes,
        manifest.generation,
        args.dir.display()
    );
    if args.out.json {
        print_json(&manifest)?;
    }
    Ok(ExitCode::SUCCESS)
}
