//! Reading lines back: exact spans, every chunk's lines, notebooks read as
//! cells, and a context budget cut at a raw line.

use crate::fixtures::World;
use crate::search::{engine, search, span_request};
use cairn_index::LineIndex;
use cairn_search::{ContextRequest, Filters, Mode, SpanRequest, TextFormat};

#[test]
fn retrieve_returns_exact_lines_and_rejects_bad_input() {
    let w = World::new();
    let e = engine(&w);
    let r = e
        .retrieve(
            &SpanRequest::lines("science/alpha/src/alpha/nofinal.py", 2, 2),
            None,
        )
        .expect("retrieve");
    assert_eq!(r.text, "    return 'no newline at the end'");
    assert_eq!((r.total_lines, r.clamped), (2, false));
    let r = e
        .retrieve(
            &SpanRequest::lines("science/alpha/docs/crlf.txt", 2, 99),
            None,
        )
        .expect("retrieve");
    assert_eq!(r.text, "second line\r\nthird line\r\n");
    assert!(r.clamped && r.end_line == 3);
    assert!(r.permalink.ends_with("docs/crlf.txt#L2-L3"));
    for (start, end) in [(0, 3), (-1, 2), (5, 3)] {
        let err = e
            .retrieve(
                &SpanRequest::lines("science/alpha/docs/crlf.txt", start, end),
                None,
            )
            .expect_err("bad span");
        assert_eq!(err.code(), "invalid_argument", "{start}..{end}");
    }
    assert_eq!(
        e.retrieve(
            &SpanRequest::lines("science/alpha/docs/crlf.txt", 9, 12),
            None
        )
        .expect_err("past end")
        .code(),
        "invalid_argument"
    );
    assert_eq!(
        e.retrieve(&SpanRequest::lines("science/alpha/nope.py", 1, 2), None)
            .expect_err("missing")
            .code(),
        "not_found"
    );
    for bad in [
        "../../etc/passwd",
        "science/alpha/../beta/x",
        "/etc/passwd",
        "science\\alpha\\x",
        "science/alpha/%2e%2e/x",
    ] {
        assert_eq!(
            e.retrieve(&SpanRequest::lines(bad, 1, 2), None)
                .expect_err("traversal")
                .code(),
            "invalid_argument",
            "{bad}"
        );
    }
    let batch = e
        .retrieve_batch(
            &[
                span_request("science/alpha/README.md"),
                span_request("science/alpha/nope"),
            ],
            None,
        )
        .expect("batch");
    assert!(batch[0].is_ok() && batch[1].is_err());
    assert!(e.retrieve_batch(&[], None).is_err());
}

#[test]
fn retrieve_of_every_chunk_equals_the_file_lines() {
    let w = World::new();
    let e = engine(&w);
    let snap = e.snapshot();
    for c in &snap.chunks {
        let d = &snap.docs[c.doc as usize];
        let span = SpanRequest::lines(d.doc_id.as_str(), c.span.start.into(), c.span.end.into());
        let r = e.retrieve(&span.raw(true), None).expect("retrieve");
        let bytes = snap.doc_bytes(c.doc);
        let li = LineIndex::new(bytes);
        let want = &bytes[li.byte_range(c.span).expect("range")];
        assert_eq!(r.text.as_bytes(), want, "{} {}", d.doc_id, c.span);
        assert_eq!(r.text_format, TextFormat::Raw);
    }
}

const NB: &str = "science/alpha/notebooks/demo.ipynb";

/// The raw line of the fixture notebook that holds `needle`.
fn raw_line_of(needle: &str) -> u32 {
    crate::fixtures::NOTEBOOK
        .lines()
        .position(|l| l.contains(needle))
        .expect("in the notebook") as u32
        + 1
}

/// Every line of a rendered notebook text that is cell source stands for a
/// raw line holding exactly its JSON-escaped text; the rest are markers and fences.
fn assert_maps_back(r: &cairn_search::RetrieveResponse) {
    let raw: Vec<&str> = crate::fixtures::NOTEBOOK.lines().collect();
    assert_eq!(r.raw_lines.len(), r.text.lines().count());
    for (i, line) in r.text.lines().enumerate() {
        let n = r.line_number(i);
        assert!(
            (r.start_line..=r.end_line).contains(&n),
            "{n} outside {r:?}"
        );
        if line.starts_with("<!-- cell ") || line.starts_with("```") {
            continue;
        }
        let escaped = serde_json::to_string(line).expect("json");
        let escaped = escaped.trim_matches('"');
        assert!(
            raw[n as usize - 1].contains(escaped),
            "line {n}: {:?} lacks {escaped:?}",
            raw[n as usize - 1]
        );
    }
}

#[test]
fn notebook_spans_read_as_cells() {
    let w = World::new();
    let e = engine(&w);
    let whole = e
        .retrieve(&SpanRequest::lines(NB, 1, 400), None)
        .expect("retrieve");
    assert_eq!(whole.text_format, TextFormat::NotebookCells);
    assert_eq!(
        whole.text,
        "<!-- cell 1: markdown -->\n# Fitting a light curve\nLoad the data, then fit.\n\
         <!-- cell 2: code -->\n```python\nimport alpha\nmodel = alpha.fit_model(data)\nprint(\"t_E ≈ 1 day\")\n```\n\
         <!-- cell 3: code -->\n```python\ncurve = model.magnification(0.5)\ncurve\n```\n"
    );
    assert_maps_back(&whole);
    // The span, the links and the hash stay those of the raw file.
    let raw = e
        .retrieve(&SpanRequest::lines(NB, 1, 400).raw(true), None)
        .expect("raw");
    assert_eq!(raw.text, crate::fixtures::NOTEBOOK);
    assert_eq!(
        (
            raw.start_line,
            raw.end_line,
            &raw.permalink,
            &raw.content_sha256
        ),
        (
            whole.start_line,
            whole.end_line,
            &whole.permalink,
            &whole.content_sha256
        )
    );
    assert!(raw.raw_lines.is_empty());

    // A span through the middle of a cell shows that cell's lines inside it.
    let from = raw_line_of("model = alpha.fit_model");
    let mid = e
        .retrieve(
            &SpanRequest::lines(NB, from.into(), (from + 1).into()),
            None,
        )
        .expect("mid");
    assert_eq!(
        mid.text,
        "<!-- cell 2: code -->\n```python\nmodel = alpha.fit_model(data)\nprint(\"t_E ≈ 1 day\")\n```\n"
    );
    assert_maps_back(&mid);
    // Outputs only: nothing to render, so the exact lines.
    let out = raw_line_of("\"0.5\\n\"");
    let only = e
        .retrieve(&SpanRequest::lines(NB, out.into(), out.into()), None)
        .expect("output");
    assert_eq!(
        (only.text_format, only.text.trim()),
        (TextFormat::Raw, "\"text\": [\"0.5\\n\"]")
    );

    // Search snippets and context passages read the cells too.
    let notebooks = Filters {
        doctype: vec!["notebook".into()],
        ..Filters::default()
    };
    let r = search(
        &e,
        "fit the light curve model",
        notebooks.clone(),
        Mode::Hybrid,
    );
    let hit = r
        .hits
        .iter()
        .find(|h| h.doc_id == NB)
        .expect("notebook hit");
    assert_eq!(hit.text_format, TextFormat::NotebookCells);
    assert!(
        !hit.snippet.contains("cell_type") && hit.snippet.contains("**fit**"),
        "{}",
        hit.snippet
    );
    let ask = |raw: bool| {
        e.context(&ContextRequest {
            query: Some("fit the light curve model".into()),
            queries: Vec::new(),
            filters: notebooks.clone(),
            threshold: Some(0.0),
            raw,
            ..ContextRequest::default()
        })
        .expect("context")
    };
    let cells = ask(false);
    assert_eq!(cells.citations[0].text_format, TextFormat::NotebookCells);
    assert!(
        cells
            .context
            .contains("<!-- cell 2: code -->\n```python\nimport alpha"),
        "{}",
        cells.context
    );
    assert!(
        !cells.context.contains("\"cell_type\""),
        "{}",
        cells.context
    );
    let bytes = ask(true);
    assert_eq!(bytes.citations[0].text_format, TextFormat::Raw);
    assert!(bytes.context.contains("\"cell_type\": \"code\""));
    assert!(
        cells.tokens < bytes.tokens,
        "cells {} vs raw {}",
        cells.tokens,
        bytes.tokens
    );
}

#[test]
fn a_tight_context_budget_cuts_a_notebook_at_a_raw_line() {
    let w = World::new();
    let e = engine(&w);
    let notebooks = Filters {
        doctype: vec!["notebook".into()],
        ..Filters::default()
    };
    let full = e
        .context(&ContextRequest {
            query: Some("fit the light curve model".into()),
            queries: Vec::new(),
            filters: notebooks.clone(),
            threshold: Some(0.0),
            ..ContextRequest::default()
        })
        .expect("context");
    let preamble = full.context.split("\n[1]").next().expect("preamble");
    // Room for the preamble and about half the passage.
    let budget = cairn_search::TokenizerName::O200kBase.count(preamble)
        + (full.tokens - cairn_search::TokenizerName::O200kBase.count(preamble)) / 2
        + 20;
    let cut = e
        .context(&ContextRequest {
            query: Some("fit the light curve model".into()),
            queries: Vec::new(),
            filters: notebooks,
            threshold: Some(0.0),
            max_tokens: budget.max(100),
            ..ContextRequest::default()
        })
        .expect("context");
    assert!(cut.tokens <= cut.max_tokens);
    let c = &cut.citations[0];
    assert!(c.truncated, "{cut:?}");
    // The cited span is exactly what the passage shows.
    let shown = e
        .retrieve(
            &SpanRequest::lines(NB, c.start_line.into(), c.end_line.into()),
            None,
        )
        .expect("retrieve");
    assert!(
        cut.context.contains(&shown.text),
        "{}\n---\n{}",
        cut.context,
        shown.text
    );
    assert!(shown.permalink == c.permalink);
}
