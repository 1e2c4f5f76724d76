//! Grep latency on a built index: cairn's grep (trigram candidates, then the
//! line scan) against a brute-force scan of every document, at the index's
//! own size and with its documents replicated 10× and 100×.
//!
//! `cargo run --release -p cairn-search --example grep_bench -- INDEX PATTERNS [RUNS]`
//! (PATTERNS: `scripts/grep-patterns.txt`). At 1× it times `Engine::grep`
//! itself (100 matches a page, links included); replicated, it times the
//! same pattern, trigram file and scan on copies of the content (the
//! engine's loop without links), since an index of 100× the corpus would
//! need 100× the vectors too. Each is timed for the first page (100
//! matches, where a common pattern stops early) and for every match (the
//! whole scan a rare or absent pattern needs). Prints p50/p99 in
//! milliseconds per kind.

use cairn_index::trigrams::{Query, Trigrams, encode};
use cairn_index::{DocRecord, IndexRoot, Snapshot};
use cairn_search::grep::GrepRequest;
use cairn_search::{Engine, EngineOptions};
use std::time::Instant;

struct Pattern {
    kind: String,
    text: String,
}

fn patterns(path: &str) -> Vec<Pattern> {
    std::fs::read_to_string(path)
        .expect("patterns file")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|l| l.split_once('\t'))
        .map(|(k, p)| Pattern {
            kind: k.to_owned(),
            text: p.to_owned(),
        })
        .collect()
}

fn pct(mut ms: Vec<f64>, p: f64) -> f64 {
    ms.sort_by(f64::total_cmp);
    ms[((ms.len() - 1) as f64 * p).round() as usize]
}

fn report(label: &str, kind: &str, ms: Vec<f64>) {
    println!(
        "{label:<42} {kind:<8} p50 {:>8.2} ms   p99 {:>8.2} ms   ({} runs)",
        pct(ms.clone(), 0.5),
        pct(ms.clone(), 0.99),
        ms.len()
    );
}

/// The line matcher and trigram query of a pattern, as `Engine::grep` makes them.
fn compile(p: &Pattern) -> (regex::Regex, Query) {
    let req = GrepRequest {
        pattern: p.text.clone(),
        regex: p.kind == "regex",
        case_sensitive: true,
        ..GrepRequest::default()
    };
    let compiled = cairn_search::grep::compile(&req).expect("pattern");
    (compiled.0, compiled.1)
}

/// Up to `limit` matching lines of `docs` (in order), reading only `read`.
fn scan(texts: &[&str], read: Option<&[u32]>, re: &regex::Regex, limit: usize) -> usize {
    let mut found = 0;
    let all: Vec<u32>;
    let docs = match read {
        Some(r) => r,
        None => {
            all = (0..texts.len() as u32).collect();
            &all
        }
    };
    for &d in docs {
        let text = texts[d as usize];
        if !re.is_match(text) {
            continue;
        }
        for line in text.split('\n') {
            if re.is_match(line) {
                found += 1;
                if found == limit {
                    return found;
                }
            }
        }
    }
    found
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (index, pats) = (&args[1], patterns(&args[2]));
    let runs: usize = args.get(3).and_then(|r| r.parse().ok()).unwrap_or(15);
    let engine = Engine::open(&EngineOptions {
        index: index.into(),
        model_dir: None,
        device: cairn_embed::DevicePref::Cpu,
    })
    .expect("open");
    for kind in ["literal", "regex", "rare"] {
        let mut ms = Vec::new();
        for p in pats.iter().filter(|p| p.kind == kind) {
            let req = GrepRequest {
                pattern: p.text.clone(),
                regex: kind == "regex",
                case_sensitive: true,
                limit: 100,
                ..GrepRequest::default()
            };
            engine.grep(&req).expect("grep");
            for _ in 0..runs {
                let t = Instant::now();
                engine.grep(&req).expect("grep");
                ms.push(t.elapsed().as_secs_f64() * 1e3);
            }
        }
        report("1x  cairn grep (Engine::grep)", kind, ms);
    }
    let snap = Snapshot::open_current(&IndexRoot::new(index)).expect("snapshot");
    let base: Vec<&str> = (0..snap.docs.len() as u32)
        .map(|d| std::str::from_utf8(snap.doc_bytes(d)).unwrap_or(""))
        .collect();
    for factor in [1usize, 10, 100] {
        // The content replicated, documents and offsets with it.
        let mut content = Vec::new();
        let mut docs: Vec<DocRecord> = Vec::new();
        for _ in 0..factor {
            for (d, text) in snap.docs.iter().zip(&base) {
                let mut r = d.clone();
                r.content_offset = content.len() as u64;
                r.size = text.len() as u64;
                content.extend_from_slice(text.as_bytes());
                docs.push(r);
            }
        }
        let t = Instant::now();
        let file = encode(&docs, &content);
        let built = t.elapsed().as_secs_f64();
        let tri = Trigrams::new(file.as_slice()).expect("trigrams");
        let texts: Vec<&str> = docs
            .iter()
            .map(|d| {
                let s = d.content_offset as usize;
                std::str::from_utf8(&content[s..s + d.size as usize]).unwrap_or("")
            })
            .collect();
        println!(
            "{factor}x: {} documents, {:.0} MB of text, trigrams.bin {:.1} MB built in {built:.1} s",
            docs.len(),
            content.len() as f64 / 1e6,
            file.len() as f64 / 1e6
        );
        let reps = if factor >= 100 { 3 } else { runs.min(5) };
        for (what, limit) in [("first 100", 100), ("every match", usize::MAX)] {
            for kind in ["literal", "regex", "rare"] {
                let (mut fast, mut brute) = (Vec::new(), Vec::new());
                for p in pats.iter().filter(|p| p.kind == kind) {
                    let (re, q) = compile(p);
                    for _ in 0..reps {
                        let t = Instant::now();
                        let cands = tri.candidates(&q);
                        scan(&texts, cands.as_deref(), &re, limit);
                        fast.push(t.elapsed().as_secs_f64() * 1e3);
                        let t = Instant::now();
                        scan(&texts, None, &re, limit);
                        brute.push(t.elapsed().as_secs_f64() * 1e3);
                    }
                }
                report(&format!("{factor}x {what}: trigrams + scan"), kind, fast);
                report(&format!("{factor}x {what}: brute force"), kind, brute);
            }
        }
    }
}
