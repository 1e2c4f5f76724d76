//! Latency of embedding one short query at a time (what a search pays):
//! `cargo run --release -p cairn-embed --example query_latency [N]`.

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use cairn_embed::{BertEmbedder, DevicePref, Embedder, ModelSpec};
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n: usize = std::env::args().nth(1).map_or(Ok(300), |s| s.parse())?;
    let e = BertEmbedder::load(&ModelSpec::default_hub().locate()?, DevicePref::Cpu)?;
    let queries = [
        "emcee multiprocessing Pool",
        "how do I mark the true parameter values on a corner plot",
        "dynesty could not find a single point that have a valid log-likelihood",
        "MulensModel PSPL parameter names",
    ];
    let mut took = Vec::with_capacity(n);
    for i in 0..n {
        let q = format!("{} {i}", queries[i % queries.len()]);
        let t = Instant::now();
        e.embed(&[q.as_str()])?;
        took.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    took.sort_by(f64::total_cmp);
    // The tokenizer alone, on the same queries, for the split.
    let mut tok = Vec::with_capacity(n);
    for i in 0..n {
        let q = format!("{} {i}", queries[i % queries.len()]);
        let t = Instant::now();
        e.count_tokens(&q)?;
        tok.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    tok.sort_by(f64::total_cmp);
    println!("tokenizer alone: p50 {:.3} ms", tok[tok.len() / 2]);

    let at = |p: f64| took[((took.len() - 1) as f64 * p) as usize];
    println!(
        "one query at a time, n={n}: p50 {:.2} ms  p90 {:.2} ms  p99 {:.2} ms",
        at(0.5),
        at(0.9),
        at(0.99)
    );
    Ok(())
}
