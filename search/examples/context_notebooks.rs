//! How much notebook content a context budget carries, raw JSON lines against
//! rendered cells: `cargo run --release -p cairn-search --example
//! context_notebooks -- INDEX BUDGET GOLDEN...`. For every golden question it
//! builds the context both ways (as asked, and filtered to notebooks) and
//! counts, in the budget's tokens, the cell source (prose and code) the
//! notebook passages carry: the source lines inside each cited span.

use cairn_embed::DevicePref;
use cairn_search::{
    ContextRequest, Engine, EngineOptions, Filters, SpanRequest, TextFormat, TokenizerName,
};

/// Totals over one way of building contexts.
#[derive(Default)]
struct Tally {
    contexts: usize,
    passages: usize,
    /// Tokens the notebook passages take in the block, headers included.
    passage_tokens: usize,
    content_tokens: usize,
}

/// The text of passage `n` in a context block: from its `[n]` header to the next.
fn passage(block: &str, n: usize) -> &str {
    let Some(start) = block.find(&format!("\n[{n}] ")) else {
        return "";
    };
    let rest = &block[start..];
    let end = rest.find(&format!("\n[{}] ", n + 1)).unwrap_or(rest.len());
    &rest[..end]
}

/// Tokens of cell source (prose and code) inside a cited notebook span.
fn content_tokens(e: &Engine, doc_id: &str, start: u32, end: u32) -> usize {
    let Ok(r) = e.retrieve(&SpanRequest::lines(doc_id, start.into(), end.into()), None) else {
        return 0;
    };
    if r.text_format != TextFormat::NotebookCells {
        return 0;
    }
    let source: String = r
        .text
        .lines()
        .filter(|l| !l.starts_with("<!-- cell ") && !l.starts_with("```"))
        .map(|l| format!("{l}\n"))
        .collect();
    TokenizerName::O200kBase.count(&source)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: INDEX BUDGET GOLDEN...";
    let index = args.get(1).ok_or(usage)?;
    let budget: usize = args.get(2).ok_or(usage)?.parse()?;
    let engine = Engine::open(&EngineOptions {
        index: index.into(),
        model_dir: None,
        device: DevicePref::Cpu,
    })?;
    let mut queries = Vec::new();
    for golden in &args[3..] {
        queries.extend(cairn_search::eval::load(std::path::Path::new(golden))?);
    }
    for (label, doctype) in [
        ("as asked", vec![]),
        ("notebooks only", vec!["notebook".to_owned()]),
    ] {
        for raw in [true, false] {
            let mut t = Tally::default();
            for q in &queries {
                let c = engine.context(&ContextRequest {
                    query: Some(q.query.clone()),
                    queries: Vec::new(),
                    max_tokens: budget,
                    filters: Filters {
                        doctype: doctype.clone(),
                        ..Filters::default()
                    },
                    raw,
                    ..ContextRequest::default()
                })?;
                let notebook: Vec<_> = c
                    .citations
                    .iter()
                    .filter(|c| c.doc_id.ends_with(".ipynb"))
                    .collect();
                if notebook.is_empty() {
                    continue;
                }
                t.contexts += 1;
                t.passages += notebook.len();
                t.passage_tokens += notebook
                    .iter()
                    .map(|p| TokenizerName::O200kBase.count(passage(&c.context, p.n)))
                    .sum::<usize>();
                t.content_tokens += notebook
                    .iter()
                    .map(|c| content_tokens(&engine, &c.doc_id, c.start_line, c.end_line))
                    .sum::<usize>();
            }
            println!(
                "{label:15} {:5}  contexts with a notebook passage {:3}  notebook passages {:3}  their tokens {:6}  cell-source tokens in them {:6} ({:.0} %)  per context {:6.1}",
                if raw { "raw" } else { "cells" },
                t.contexts,
                t.passages,
                t.passage_tokens,
                t.content_tokens,
                100.0 * t.content_tokens as f64 / t.passage_tokens.max(1) as f64,
                t.content_tokens as f64 / t.contexts.max(1) as f64
            );
        }
    }
    Ok(())
}
