//! `cairn build`: a whole build, one shard of it, or a merge of shards.

use crate::cli::{BuildArgs, BuildInputs};
use crate::commands::{print_json, report_error, status};
use crate::progress;
use cairn_pipeline::{BuildError, BuildOptions, Shard};
use std::process::ExitCode;

/// The library's build options from the flags `build` and `watch` share.
pub fn options(a: BuildInputs) -> BuildOptions {
    BuildOptions {
        config: a.config,
        weights: a.weights,
        settings: a.settings,
        out: crate::cli::index_out(a.out.as_deref()),
        cache: a.cache,
        model_dir: a.model_dir,
        device: a.device.into(),
        keep: a.keep,
        keep_going: a.keep_going,
        arxiv_url: a.arxiv_url,
        // This binary reads each PDF in a child of its own (`cairn __pdf-text`).
        pdf_helper: std::env::current_exe().ok(),
    }
}

/// Builds and publishes, or writes a part.
pub fn run(a: BuildArgs) -> anyhow::Result<ExitCode> {
    let opts = options(a.inputs);
    let reporter = progress::TermReporter::new();
    if let Some(shard) = a.shard {
        let shard = Shard::parse(&shard).map_err(|e| anyhow::anyhow!("--shard: {e}"))?;
        let summary = match cairn_pipeline::build_shard(&opts, shard, &reporter) {
            Ok(s) => s,
            Err(e) => return Ok(failed(e)),
        };
        if a.json {
            print_json(&summary)?;
        } else {
            println!(
                "shard {}/{}: {} repositories, {} docs, {} chunks ({} embedded, {} cached) in {}",
                shard.index,
                shard.count,
                summary.repos.len(),
                summary.docs,
                summary.chunks,
                summary.stats.embedded,
                summary.stats.cached,
                summary.part.display()
            );
        }
        return Ok(status(summary.repos.iter().any(vanished)));
    }
    let result = match a.merge.is_empty() {
        true => cairn_pipeline::build(&opts, &reporter),
        false => cairn_pipeline::merge(&opts, &a.merge, &reporter),
    };
    let summary = match result {
        Ok(s) => s,
        Err(e) => return Ok(failed(e)),
    };
    if a.json {
        print_json(&summary)?;
    } else {
        progress::print_summary(&summary);
    }
    Ok(status(summary.repos.iter().any(vanished)))
}

/// A repository that failed and is missing from the index (a stale one kept
/// the commit its cache held, so the build still did its job).
fn vanished(r: &cairn_index::manifest::RepoRecord) -> bool {
    r.error.is_some() && !r.stale
}

/// Reports a failed build: 2 for bad configuration, 1 otherwise.
pub fn failed(e: BuildError) -> ExitCode {
    let code = e.exit_code();
    report_error(&e);
    ExitCode::from(code)
}
