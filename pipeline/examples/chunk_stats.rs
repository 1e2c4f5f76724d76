//! Chunking statistics of a config, without embedding:
//! `cargo run --release -p cairn-pipeline --example chunk_stats -- repositories.yml [cache]`.

use cairn_embed::{BertEmbedder, DevicePref, Embedder, ModelSpec};
use cairn_index::LineIndex;
use cairn_pipeline::build::chunk_limits;
use cairn_pipeline::chunk::chunk_document;
use cairn_pipeline::config::{BuildSettings, Registry};
use cairn_pipeline::documents::read_commit;
use cairn_pipeline::sync::{Retry, sync};
use std::collections::BTreeMap;
use std::path::Path;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let config = args
        .get(1)
        .ok_or("usage: chunk_stats repositories.yml [cache]")?;
    let cache = Path::new(
        args.get(2)
            .map_or(cairn_pipeline::DEFAULT_CACHE, String::as_str),
    );
    let registry = Registry::load(Path::new(config))?;
    let settings = BuildSettings::default();
    let e = BertEmbedder::load(&ModelSpec::default_hub().locate()?, DevicePref::Cpu)?;
    let specials = e.count_tokens("")?;
    let (limits, subchunk_limits) = chunk_limits(&settings, e.model().max_tokens, specials);
    let count = |lines: &[&str]| -> Vec<usize> {
        e.count_tokens_batch(lines)
            .map(|v| v.into_iter().map(|n| n - specials).collect())
            .unwrap_or_default()
    };
    let mut by_kind: BTreeMap<String, (usize, usize, usize)> = BTreeMap::new();
    let mut docs: Vec<(usize, usize, String)> = Vec::new();
    for cfg in &registry.repos {
        let s = sync(cfg, cache, Retry::default(), |_, _| {})?;
        let (sources, _) = read_commit(&s.repo, s.commit, cfg, &settings.read_limits(None))?;
        for d in &sources {
            let chunks = chunk_document(
                d,
                &LineIndex::new(d.text.as_bytes()),
                &limits,
                &subchunk_limits,
                &count,
            )
            .chunks;
            let tokens: usize = chunks
                .iter()
                .map(|c| (c.tokens + 24).min(e.model().max_tokens))
                .sum();
            let k = by_kind
                .entry(format!("{}/{}", cfg.name, d.doctype))
                .or_default();
            k.0 += 1;
            k.1 += chunks.len();
            k.2 += tokens;
            docs.push((tokens, chunks.len(), format!("{}/{}", cfg.name, d.path)));
        }
    }
    let total: (usize, usize, usize) = by_kind
        .values()
        .fold((0, 0, 0), |a, b| (a.0 + b.0, a.1 + b.1, a.2 + b.2));
    println!(
        "{:40} {:>6} {:>7} {:>9}",
        "repo/doctype", "docs", "chunks", "tokens"
    );
    for (k, v) in &by_kind {
        println!("{k:40} {:>6} {:>7} {:>9}", v.0, v.1, v.2);
    }
    println!(
        "{:40} {:>6} {:>7} {:>9}",
        "total", total.0, total.1, total.2
    );
    docs.sort();
    println!("\nlargest docs by tokens:");
    for (t, c, p) in docs.iter().rev().take(25) {
        println!("{t:>8} {c:>5} {p}");
    }
    Ok(())
}
