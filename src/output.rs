//! Human-readable output of the search commands (`--json` prints the API's JSON instead).

use cairn_search::eval::EvalReport;

/// The reports as Markdown: one table per mode (all questions, then each
/// kind), then the misses of the first mode with where each stood.
pub fn eval_markdown(golden: &str, reports: &[EvalReport]) -> String {
    use std::fmt::Write;
    let mut out = format!("### `{golden}`\n\n");
    for r in reports {
        let mode = serde_json::to_string(&r.mode).unwrap_or_default();
        let _ = writeln!(
            out,
            "| {} | questions | recall@{} | MRR@10 | nDCG@10 | precise recall@{} |\n| --- | --- | --- | --- | --- | --- |",
            mode.trim_matches('"'),
            r.k,
            r.k
        );
        let rows = std::iter::once(("**all**", &r.overall))
            .chain(r.by_kind.iter().map(|(k, m)| (k.as_str(), m)));
        for (kind, m) in rows {
            let _ = writeln!(
                out,
                "| {kind} | {} | {:.3} | {:.3} | {:.3} | {:.3} |",
                m.queries, m.recall_at_k, m.mrr_at_10, m.ndcg_at_10, m.precise_recall_at_k
            );
        }
        out.push('\n');
    }
    if let Some(r) = reports.first().filter(|r| !r.misses.is_empty()) {
        let _ = writeln!(out, "Misses ({}):\n", r.misses.len());
        for m in &r.misses {
            let rank = m.first_relevant.map_or("-".to_owned(), |n| n.to_string());
            let guard = if m.guard_failed { ", guard failed" } else { "" };
            let _ = writeln!(
                out,
                "- `{}` [{}]: first relevant at {rank}{guard}",
                m.id, m.kind
            );
        }
        out.push('\n');
    }
    out
}

pub fn print_eval(r: &EvalReport) {
    let mode = serde_json::to_string(&r.mode).unwrap_or_default();
    println!(
        "{:7} recall@{} {:.3}  MRR@10 {:.3}  nDCG@10 {:.3}  precise@{} {:.3}  ({} queries)",
        mode.trim_matches('"'),
        r.k,
        r.overall.recall_at_k,
        r.overall.mrr_at_10,
        r.overall.ndcg_at_10,
        r.k,
        r.overall.precise_recall_at_k,
        r.overall.queries
    );
    for (kind, m) in &r.by_kind {
        println!(
            "  {kind:12} recall {:.3}  MRR {:.3}  nDCG {:.3}  precise {:.3}  ({})",
            m.recall_at_k, m.mrr_at_10, m.ndcg_at_10, m.precise_recall_at_k, m.queries
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
        println!("       lists: {}", miss.lists.join(", "));
    }
}

/// Prints an errors evaluation: its figures, then each miss (as a table with `markdown`).
pub fn print_error_eval(file: &str, r: &cairn_search::eval::ErrorReport, markdown: bool) {
    let rank = |r: Option<usize>| r.map_or("-".to_owned(), |r| r.to_string());
    if markdown {
        println!("### {file}\n");
        println!(
            "| errors | raise site recall@1 | recall@3 | message only @1 | explain recall@5 | p50 ms | p95 ms |"
        );
        println!("| --- | --- | --- | --- | --- | --- | --- |");
        println!(
            "| {} | {:.3} | {:.3} | {:.3} | {:.3} ({} scored) | {:.1} | {:.1} |\n",
            r.errors,
            r.raise_recall_at_1,
            r.raise_recall_at_3,
            r.message_only_recall_at_1,
            r.explain_recall_at_5,
            r.explain_scored,
            r.p50_ms,
            r.p95_ms
        );
        if !r.misses.is_empty() {
            println!("| miss | shape | raise rank | explain rank | first site |");
            println!("| --- | --- | --- | --- | --- |");
        }
        for m in &r.misses {
            println!(
                "| {} | {} | {} | {} | {} |",
                m.id,
                m.kind,
                rank(m.raise_rank),
                rank(m.explain_rank),
                m.sites.first().map_or("", String::as_str)
            );
        }
        return;
    }
    println!(
        "explain  raise-site recall@1 {:.3}  @3 {:.3}  message only @1 {:.3}  explain recall@5 {:.3} ({} scored)  p50 {:.1} ms  p95 {:.1} ms  ({} errors)",
        r.raise_recall_at_1,
        r.raise_recall_at_3,
        r.message_only_recall_at_1,
        r.explain_recall_at_5,
        r.explain_scored,
        r.p50_ms,
        r.p95_ms,
        r.errors
    );
    for m in &r.misses {
        println!(
            "  miss {} [{}]: raise site at {} (message only {}), explain at {}; first site {}",
            m.id,
            m.kind,
            rank(m.raise_rank),
            rank(m.message_only_rank),
            rank(m.explain_rank),
            m.sites.first().map_or("-", String::as_str)
        );
        println!("       explains: {}", m.explains.join(", "));
    }
}
