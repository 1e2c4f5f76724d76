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
            "| {} | questions | document@{k} | lines@{k} | focus@{k} | precise recall@{k} | MRR@10 | nDCG@10 | median hit / cited lines |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
            mode.trim_matches('"'),
            k = r.k
        );
        let rows = std::iter::once(("**all**", &r.overall))
            .chain(r.by_kind.iter().map(|(k, m)| (k.as_str(), m)));
        for (kind, m) in rows {
            let _ = writeln!(
                out,
                "| {kind} | {} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {} / {} |",
                m.queries,
                m.doc_recall_at_k,
                m.recall_at_k,
                m.focus_recall_at_k,
                m.precise_recall_at_k,
                m.mrr_at_10,
                m.ndcg_at_10,
                m.median_hit_lines,
                m.median_cited_lines
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
    let o = &r.overall;
    println!(
        "{:7} document@{k} {:.3}  lines@{k} {:.3}  focus@{k} {:.3}  precise@{k} {:.3}  MRR@10 {:.3}  nDCG@10 {:.3}  median hit {} / cited {} lines  ({} queries)",
        mode.trim_matches('"'),
        o.doc_recall_at_k,
        o.recall_at_k,
        o.focus_recall_at_k,
        o.precise_recall_at_k,
        o.mrr_at_10,
        o.ndcg_at_10,
        o.median_hit_lines,
        o.median_cited_lines,
        o.queries,
        k = r.k
    );
    for (kind, m) in &r.by_kind {
        println!(
            "  {kind:12} document {:.3}  lines {:.3}  focus {:.3}  precise {:.3}  MRR {:.3}  nDCG {:.3}  ({})",
            m.doc_recall_at_k,
            m.recall_at_k,
            m.focus_recall_at_k,
            m.precise_recall_at_k,
            m.mrr_at_10,
            m.ndcg_at_10,
            m.queries
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

/// `text` with `query`'s words in bold (ANSI) on its quoted lines (those
/// starting `    | `, a hit's snippet): a search read on a terminal.
pub fn bold_matches(text: &str, query: &str) -> String {
    let words: Vec<String> = query
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| w.len() >= 3)
        .map(str::to_lowercase)
        .collect();
    let mut out = String::with_capacity(text.len() + 64);
    for line in text.split_inclusive('\n') {
        let lower = line.to_lowercase();
        // Byte offsets agree only where lowercasing keeps lengths.
        if !line.starts_with("    | ") || lower.len() != line.len() {
            out.push_str(line);
            continue;
        }
        let mut bold = vec![false; line.len()];
        for w in &words {
            for (i, _) in lower.match_indices(w.as_str()) {
                bold[i..i + w.len()].fill(true);
            }
        }
        let mut open = false;
        for (i, c) in line.char_indices() {
            if bold[i] != open {
                out.push_str(if bold[i] { "\x1b[1m" } else { "\x1b[22m" });
                open = bold[i];
            }
            out.push(c);
        }
        if open {
            out.push_str("\x1b[22m");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::bold_matches;

    #[test]
    fn only_quoted_lines_get_bold_matches() {
        let text = " 1. a/b/emcee.py:1-5  [emcee code]\n    | the emcee Pool\n";
        assert_eq!(
            bold_matches(text, "emcee pool"),
            " 1. a/b/emcee.py:1-5  [emcee code]\n    | the \x1b[1memcee\x1b[22m \x1b[1mPool\x1b[22m\n"
        );
    }
}
