//! The pruned BM25 search against the exhaustive one, question by
//! question: `cargo run --release -p cairn-search --example bm25_check --
//! INDEX GOLDEN...`. For every golden question, for the caller who sees
//! everything and the caller without groups (at 100×, the public 5 %), it
//! prints how many top-200 lists are identical (chunks, order and scores)
//! and both searches' p50 and p99.

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use cairn_index::{IndexRoot, Snapshot};
use cairn_search::access::visible_chunks;
use cairn_search::rank::{Bm25Tables, ScopedStats, Visible, bm25, bm25_exhaustive};
use std::sync::Arc;
use std::time::Instant;

const K: usize = 200;

fn pct(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(((v.len().max(1) - 1) as f64 * p).round() as usize)
        .copied()
        .unwrap_or(0.0)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let index = args.get(1).ok_or("usage: bm25_check INDEX GOLDEN...")?;
    let snap = Snapshot::open_current(&IndexRoot::new(index))?;
    let tables = Bm25Tables::new(&snap)?;
    let mut questions = Vec::new();
    for golden in &args[2..] {
        for q in cairn_search::eval::load(std::path::Path::new(golden))? {
            questions.push(q.query);
        }
    }
    for (name, groups) in [
        ("sees everything", None),
        ("no groups", Some(Vec::<String>::new())),
    ] {
        let mask = visible_chunks(&snap, groups.as_deref());
        let allowed = Arc::new(mask.clone());
        let visible = Visible::new(&tables, mask);
        let share = allowed.iter().filter(|v| **v).count() as f64 / allowed.len().max(1) as f64;
        let (mut same, mut differ) = (0, Vec::new());
        let (mut pruned_ms, mut exhaustive_ms) = (Vec::new(), Vec::new());
        for q in &questions {
            // New statistics per question, as a search makes them.
            let stats = ScopedStats::new(&snap, &tables, &visible);
            let t = Instant::now();
            let got = bm25(&snap, &stats, q, &[&allowed[..]], K)?
                .pop()
                .unwrap_or_default();
            pruned_ms.push(t.elapsed().as_secs_f64() * 1e3);
            let stats = ScopedStats::new(&snap, &tables, &visible);
            let t = Instant::now();
            let want = bm25_exhaustive(&snap, &stats, q, &allowed, K)?;
            exhaustive_ms.push(t.elapsed().as_secs_f64() * 1e3);
            if got == want {
                same += 1;
            } else {
                let at = got.iter().zip(&want).position(|(a, b)| a != b);
                differ.push(format!("{q:?}: first difference at rank {at:?}"));
                if std::env::var_os("DEBUG_BM25").is_some() && differ.len() == 1 {
                    debug_one(&snap, &stats, &allowed, q);
                }
            }
        }
        println!(
            "{name} ({:.1} % of chunks): {same}/{} identical; pruned p50 {:.2} ms p99 {:.2} ms, exhaustive p50 {:.2} ms p99 {:.2} ms",
            share * 100.0,
            questions.len(),
            pct(&mut pruned_ms, 0.5),
            pct(&mut pruned_ms, 0.99),
            pct(&mut exhaustive_ms, 0.5),
            pct(&mut exhaustive_ms, 0.99),
        );
        for d in differ {
            println!("  differs: {d}");
        }
    }
    Ok(())
}

#[allow(dead_code)]
fn debug_one(snap: &Snapshot, stats: &ScopedStats<'_>, allowed: &Arc<Vec<bool>>, q: &str) {
    let got = bm25(snap, stats, q, &[&allowed[..]], K)
        .ok()
        .and_then(|mut l| l.pop())
        .unwrap_or_default();
    let want = bm25_exhaustive(snap, stats, q, allowed, K).unwrap_or_default();
    let at = got.iter().zip(&want).position(|(a, b)| a != b).unwrap_or(0);
    for i in at.saturating_sub(1)..at + 3 {
        println!("  {:?}  vs  {:?}", got.get(i), want.get(i));
    }
    let gset: std::collections::HashSet<u32> = got.iter().map(|x| x.0).collect();
    if let Some(m) = want.iter().find(|w| !gset.contains(&w.0)) {
        println!("  first missing from pruned: {m:?}");
    }
}
