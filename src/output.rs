//! Human-readable output of the search commands (`--json` prints the API's JSON instead).

use cairn_search::eval::EvalReport;

use cairn_search::eval::Metrics;

/// One mode's figures as (label, value), in the order both formats print them.
fn figures(m: &Metrics, k: usize) -> [(String, String); 7] {
    [
        (format!("document@{k}"), format!("{:.3}", m.doc_recall_at_k)),
        (format!("lines@{k}"), format!("{:.3}", m.recall_at_k)),
        (format!("focus@{k}"), format!("{:.3}", m.focus_recall_at_k)),
        (
            format!("precise recall@{k}"),
            format!("{:.3}", m.precise_recall_at_k),
        ),
        ("MRR@10".to_owned(), format!("{:.3}", m.mrr_at_10)),
        ("nDCG@10".to_owned(), format!("{:.3}", m.ndcg_at_10)),
        (
            "median hit / cited lines".to_owned(),
            format!("{} / {}", m.median_hit_lines, m.median_cited_lines),
        ),
    ]
}

/// A report's mode as the CLI spells it (`hybrid`, `bm25`, `vector`).
fn mode_name(r: &EvalReport) -> String {
    serde_json::to_string(&r.mode)
        .unwrap_or_default()
        .trim_matches('"')
        .to_owned()
}

/// A miss's first relevant rank, or `-` when none was in the list.
fn first_relevant(rank: Option<usize>) -> String {
    rank.map_or("-".to_owned(), |n| n.to_string())
}

/// The reports as Markdown: one table per mode (all questions, then each
/// kind), then the misses of the first mode with where each stood.
pub fn eval_markdown(golden: &str, reports: &[EvalReport]) -> String {
    use std::fmt::Write;
    let mut out = format!("### `{golden}`\n\n");
    for r in reports {
        let labels = figures(&r.overall, r.k).map(|(label, _)| label);
        let _ = writeln!(
            out,
            "| {} | questions | {} |\n|{}",
            mode_name(r),
            labels.join(" | "),
            " --- |".repeat(labels.len() + 2)
        );
        let rows = std::iter::once(("**all**", &r.overall))
            .chain(r.by_kind.iter().map(|(k, m)| (k.as_str(), m)));
        for (kind, m) in rows {
            let values = figures(m, r.k).map(|(_, value)| value);
            let _ = writeln!(out, "| {kind} | {} | {} |", m.queries, values.join(" | "));
        }
        out.push('\n');
    }
    if let Some(r) = reports.first().filter(|r| !r.misses.is_empty()) {
        let _ = writeln!(out, "Misses ({}):\n", r.misses.len());
        for m in &r.misses {
            let guard = if m.guard_failed { ", guard failed" } else { "" };
            let rank = first_relevant(m.first_relevant);
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

/// Prints a report as plain lines: the figures of all questions, of each
/// kind, then each miss with the top hit and the lists that held it.
pub fn print_eval(r: &EvalReport) {
    let line = |m: &Metrics| {
        figures(m, r.k)
            .map(|(label, value)| format!("{label} {value}"))
            .join("  ")
    };
    println!(
        "{:7} {}  ({} queries)",
        mode_name(r),
        line(&r.overall),
        r.overall.queries
    );
    for (kind, m) in &r.by_kind {
        println!("  {kind:12} {}  ({})", line(m), m.queries);
    }
    for miss in &r.misses {
        let guard = if miss.guard_failed {
            ", GUARD FAILED"
        } else {
            ""
        };
        println!(
            "  miss {} [{}]: first relevant at {}{guard}; top: {}",
            miss.id,
            miss.kind,
            first_relevant(miss.first_relevant),
            miss.top.first().map_or("", String::as_str)
        );
        println!("       lists: {}", miss.lists.join(", "));
    }
}

/// Prints an errors evaluation: its figures, then each miss (as a table with `markdown`).
pub fn print_error_eval(file: &str, r: &cairn_search::eval::ErrorReport, markdown: bool) {
    let rank = first_relevant;
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
