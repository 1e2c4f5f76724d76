//! `cairn adapt`: fine-tunes the embedding model on pairs mined from an
//! index's own text and writes a model folder for `cairn build --model-dir`.

use crate::cli::AdaptArgs;
use anyhow::Context;
use cairn_embed::ModelSpec;
use cairn_embed::adapt::{AdaptOptions, Pair};
use cairn_index::{IndexRoot, Snapshot};
use std::io::Write;
use std::process::ExitCode;

/// Mines the pairs, trains, and prints what it did.
pub fn run(a: AdaptArgs) -> anyhow::Result<ExitCode> {
    let index = crate::cli::index_root(a.index.as_deref())?;
    let root = IndexRoot::new(&index);
    let snap = Snapshot::open_current(&root)
        .with_context(|| format!("opening the index at {}", index.display()))?;
    let spec = match &a.model_dir {
        Some(d) => ModelSpec::Dir(d.clone()),
        None => ModelSpec::recorded(&snap.manifest.model.id, &snap.manifest.model.revision),
    };
    let files = spec.locate().context("finding the base model")?;
    let mined = cairn_pipeline::pairs::mine(&snap, a.pairs);
    let mut by_source = std::collections::BTreeMap::new();
    for m in &mined {
        *by_source.entry(m.source.as_str()).or_insert(0usize) += 1;
    }
    eprintln!(
        "{} pairs from {} ({})",
        mined.len(),
        snap.version,
        by_source
            .iter()
            .map(|(s, n)| format!("{s} {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    if let Some(path) = &a.dump_pairs {
        let mut out = std::io::BufWriter::new(
            std::fs::File::create(path).with_context(|| format!("writing {}", path.display()))?,
        );
        for m in &mined {
            serde_json::to_writer(&mut out, &m.pair)?;
            writeln!(out)?;
        }
    }
    let pairs: Vec<Pair> = mined.into_iter().map(|m| m.pair).collect();
    let opts = AdaptOptions {
        epochs: a.epochs,
        batch: a.batch,
        learning_rate: a.learning_rate,
        seed: a.seed,
        ..AdaptOptions::default()
    };
    let started = std::time::Instant::now();
    let report =
        cairn_embed::adapt::adapt(&files, &pairs, &opts, &a.out, &mut |step, total, loss| {
            if step == 1 || step % 10 == 0 || step == total {
                eprintln!(
                    "step {step}/{total}: loss {loss:.4} ({:.0} s)",
                    started.elapsed().as_secs_f64()
                );
            }
        })
        .context("adapting the model")?;
    println!(
        "wrote {} ({} pairs, {} steps, loss {:.3} -> {:.3}, {:.1} min); build with --model-dir {}",
        a.out.display(),
        report.pairs,
        report.steps,
        report.loss_first,
        report.loss_last,
        started.elapsed().as_secs_f64() / 60.0,
        a.out.display()
    );
    Ok(ExitCode::SUCCESS)
}
