//! Human-readable output of the search commands (`--json` prints the API's JSON instead).

use cairn_search::eval::EvalReport;
use cairn_search::{RetrieveResponse, SearchResponse, TreeResponse};

/// `START:END` (or a single line) to numbers; range checks are the library's.
pub fn parse_lines(s: &str) -> anyhow::Result<(i64, i64)> {
    let parse = |x: &str| {
        x.trim()
            .parse::<i64>()
            .map_err(|_| anyhow::anyhow!("--lines {s:?}: expected START:END, e.g. 10:40"))
    };
    match s.split_once(':') {
        Some((a, b)) => Ok((parse(a)?, parse(b)?)),
        None => {
            let n = parse(s)?;
            Ok((n, n))
        }
    }
}

pub fn print_search(r: &SearchResponse) {
    if let Some(n) = &r.notice {
        println!("note: {n}");
    }
    if r.insufficient_evidence {
        println!("insufficient evidence: nothing answers this confidently");
    }
    for (i, h) in r.hits.iter().enumerate() {
        println!(
            "{:2}. {}:{}-{}  [{} {}]  score {:.4} (bm25 {:.2}, cos {:.3}, w {:.2})",
            i + 1,
            h.doc_id,
            h.start_line,
            h.end_line,
            h.toolkit,
            h.doctype,
            h.score,
            h.breakdown.bm25,
            h.breakdown.vector,
            h.breakdown.weight
        );
        if !h.title.is_empty() {
            println!("    § {}", h.title);
        }
        for line in h.snippet.lines() {
            println!("    | {line}");
        }
        println!("    {}", h.github_url);
    }
    println!(
        "({} hits, {} mode, index {})",
        r.hits.len(),
        serde_json::to_string(&r.mode)
            .unwrap_or_default()
            .trim_matches('"'),
        r.index_version
    );
}

pub fn print_retrieve(r: &RetrieveResponse) {
    println!(
        "{}:{}-{} of {} lines{}",
        r.doc_id,
        r.start_line,
        r.end_line,
        r.total_lines,
        if r.clamped { " (clamped)" } else { "" }
    );
    println!("{}", r.permalink);
    for (i, line) in r.text.lines().enumerate() {
        println!("{:6}  {line}", r.start_line as usize + i);
    }
}

pub fn print_tree(t: &TreeResponse) {
    for e in &t.entries {
        match (e.kind, e.files, e.lines) {
            ("file", _, Some(lines)) => println!(
                "{}  ({}, {lines} lines)",
                e.path,
                e.doctype.as_deref().unwrap_or("")
            ),
            (kind, Some(n), _) => println!("{}/  ({kind}, {n} files)", e.path),
            _ => println!("{}", e.path),
        }
    }
    if t.truncated {
        println!("… (more entries; raise --max-entries)");
    }
}

pub fn print_eval(r: &EvalReport) {
    let mode = serde_json::to_string(&r.mode).unwrap_or_default();
    println!(
        "{:7} recall@{} {:.3}  MRR@10 {:.3}  nDCG@10 {:.3}  ({} queries)",
        mode.trim_matches('"'),
        r.k,
        r.overall.recall_at_k,
        r.overall.mrr_at_10,
        r.overall.ndcg_at_10,
        r.overall.queries
    );
    for (kind, m) in &r.by_kind {
        println!(
            "  {kind:12} recall {:.3}  MRR {:.3}  nDCG {:.3}  ({})",
            m.recall_at_k, m.mrr_at_10, m.ndcg_at_10, m.queries
        );
    }
    for miss in &r.misses {
        println!(
            "  miss {} [{}]: first relevant at {}{}; top: {}",
            miss.id,
            miss.kind,
            miss.first_relevant
                .map_or("-".to_owned(), |r| r.to_string()),
            if miss.guard_failed {
                ", GUARD FAILED"
            } else {
                ""
            },
            miss.top.first().map_or("", String::as_str)
        );
    }
}
