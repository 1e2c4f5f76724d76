//! The search library over a fixture index: filters, links, retrieval, fallbacks.

use crate::fixtures::{World, cairn, stderr, stdout};
use cairn_embed::{BertEmbedder, DevicePref, Embedder, ModelSpec};
use cairn_index::{IndexRoot, LineIndex, Snapshot};
use cairn_search::rank;
use cairn_search::runtime_weights::RuntimeWeights;
use cairn_search::{
    ContextRequest, Engine, EngineOptions, Filters, Mode, SearchError, SearchRequest, SpanRequest,
    TextFormat,
};

fn engine(w: &World) -> Engine {
    assert!(w.build("out", &[]).status.success());
    Engine::open(&EngineOptions {
        index: w.path("out"),
        model_dir: Some(w.model.clone()),
        device: DevicePref::Cpu,
    })
    .expect("open engine")
}

fn search(e: &Engine, query: &str, filters: Filters, mode: Mode) -> cairn_search::SearchResponse {
    e.search(&SearchRequest {
        query: query.into(),
        queries: Vec::new(),
        limit: 20,
        filters,
        mode,
        ..SearchRequest::default()
    })
    .expect("search")
}

#[test]
fn filters_never_leak_in_any_mode() {
    let w = World::new();
    let e = engine(&w);
    for mode in [Mode::Hybrid, Mode::Bm25, Mode::Vector] {
        let r = search(
            &e,
            "magnification model",
            Filters {
                toolkit: vec!["beta".into()],
                ..Filters::default()
            },
            mode,
        );
        assert!(!r.hits.is_empty(), "{mode:?}: no hits");
        assert!(
            r.hits.iter().all(|h| h.toolkit == "beta"),
            "{mode:?}: leaked {:?}",
            r.hits
        );
        let r = search(
            &e,
            "fit model",
            Filters {
                doctype: vec!["readme".into()],
                ..Filters::default()
            },
            mode,
        );
        assert!(
            r.hits.iter().all(|h| h.doctype.as_str() == "readme"),
            "{mode:?}"
        );
        let r = search(
            &e,
            "fit model",
            Filters {
                path_prefix: vec!["science/alpha/src/".into()],
                ..Filters::default()
            },
            mode,
        );
        assert!(
            r.hits
                .iter()
                .all(|h| h.doc_id.starts_with("science/alpha/src/")),
            "{mode:?}"
        );
    }
}

#[test]
fn identifiers_find_their_definition_and_links_follow_branches() {
    let w = World::new();
    let e = engine(&w);
    let r = search(&e, "fit_model", Filters::default(), Mode::Hybrid);
    let top = &r.hits[0];
    assert_eq!(
        top.doc_id, "science/alpha/src/alpha/core.py",
        "{:?}",
        r.hits
    );
    assert!(
        top.start_line <= 5 && top.end_line >= 5,
        "definition at line 5: {top:?}"
    );
    assert!(
        top.github_url
            .starts_with("https://github.com/example/alpha/blob/main/src/alpha/core.py#L")
    );
    let commit = w
        .alpha_repo()
        .head()
        .expect("head")
        .target()
        .expect("oid")
        .to_string();
    assert!(
        top.permalink.contains(&format!("/blob/{commit}/")),
        "{}",
        top.permalink
    );
    assert!(top.snippet.contains("**fit_model**"), "{}", top.snippet);

    let r = search(&e, "BinaryMag", Filters::default(), Mode::Bm25);
    let beta = r.hits.iter().find(|h| h.repo == "beta").expect("beta hit");
    assert!(
        beta.github_url.contains("/blob/master/"),
        "{}",
        beta.github_url
    );
    let r = search(
        &e,
        "install alpha",
        Filters {
            doctype: vec!["readme".into()],
            ..Filters::default()
        },
        Mode::Bm25,
    );
    assert!(
        r.hits[0].github_url.contains("README.md?plain=1#L"),
        "{}",
        r.hits[0].github_url
    );
}

#[test]
fn hits_are_merged_deterministic_and_judged() {
    let w = World::new();
    let e = engine(&w);
    let a = search(&e, "parameters t_0 u_0", Filters::default(), Mode::Hybrid);
    let b = search(&e, "parameters t_0 u_0", Filters::default(), Mode::Hybrid);
    assert_eq!(a.hits, b.hits, "same index and query, same answer");
    let cache = e.query_cache().expect("a model is loaded");
    assert_eq!(
        (cache.hits, cache.misses),
        (1, 1),
        "the repeat's vector came from the cache"
    );
    // A hot swap to a version built with the same model keeps the cache.
    let swapped = e
        .reopen(&EngineOptions {
            index: w.path("out"),
            model_dir: Some(w.model.clone()),
            device: DevicePref::Cpu,
        })
        .expect("reopen");
    search(
        &swapped,
        "parameters t_0 u_0",
        Filters::default(),
        Mode::Hybrid,
    );
    assert_eq!(swapped.query_cache().map(|c| c.hits), Some(2));
    for (i, x) in a.hits.iter().enumerate() {
        for y in &a.hits[i + 1..] {
            let overlap =
                x.doc_id == y.doc_id && x.start_line <= y.end_line && y.start_line <= x.end_line;
            assert!(!overlap, "overlapping hits were not merged: {x:?} {y:?}");
        }
    }
    let strict = e
        .search(&SearchRequest {
            query: "parameters".into(),
            queries: Vec::new(),
            threshold: Some(1.0),
            ..SearchRequest::default()
        })
        .expect("search");
    assert!(strict.insufficient_evidence);
    assert!(!strict.hits.is_empty(), "weak hits are still listed");
    let none = search(&e, "zzzqqq", Filters::default(), Mode::Bm25);
    assert!(none.insufficient_evidence && none.hits.is_empty());
}

#[test]
fn without_the_model_search_answers_in_bm25_and_says_so() {
    let w = World::new();
    assert!(w.build("out", &[]).status.success());
    let root = IndexRoot::new(w.path("out"));
    let snap = Snapshot::open_current(&root).expect("snapshot");
    let e = Engine::from_parts(
        root,
        snap,
        Err("model.safetensors missing".into()),
        RuntimeWeights::in_memory(),
    )
    .expect("engine");
    let r = search(&e, "fit_model", Filters::default(), Mode::Hybrid);
    assert_eq!(r.mode, Mode::Bm25);
    assert!(r.notice.as_deref().is_some_and(|n| n.contains("bm25")));
    assert!(!r.hits.is_empty());
    assert!(!e.health(None).vector_search);
}

#[test]
fn a_different_model_is_refused() {
    let w = World::new();
    assert!(w.build("out", &[]).status.success());
    let other = w.path("other-model");
    cairn_embed::fixtures::write_tiny_bert(&other).expect("model");
    // Same architecture, other weights: flip one weight.
    let path = other.join("model.safetensors");
    let mut bytes = std::fs::read(&path).expect("read");
    let n = bytes.len();
    bytes[n - 1] ^= 0x01;
    std::fs::write(&path, bytes).expect("write");
    let root = IndexRoot::new(w.path("out"));
    let snap = Snapshot::open_current(&root).expect("snapshot");
    let emb = BertEmbedder::load(
        &ModelSpec::Dir(other).locate().expect("files"),
        DevicePref::Cpu,
    )
    .expect("load");
    let shared: std::sync::Arc<dyn Embedder> = std::sync::Arc::new(emb);
    let err = Engine::from_parts(root, snap, Ok(shared), RuntimeWeights::in_memory())
        .err()
        .expect("mismatch");
    assert!(matches!(err, SearchError::ModelMismatch { .. }), "{err}");
}

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

/// Every chunk's span, retrieved, is exactly the file's lines (the property that makes citations exact).
#[test]
fn subchunks_vote_for_their_chunk_and_respect_the_mask() {
    let w = World::new();
    let e = engine(&w);
    let snap = e.snapshot();
    assert!(
        snap.subchunks.len() >= snap.chunks.len(),
        "every chunk has a subchunk"
    );
    let all = vec![true; snap.chunks.len()];
    for (i, p) in snap.subchunks.iter().enumerate() {
        let chunk = &snap.chunks[p.chunk as usize];
        assert!(
            chunk.span.overlaps(&p.span),
            "subchunk {i} outside its chunk"
        );
        // A subchunk's own vector as the query: its chunk comes back at cosine 1.
        let q = snap.subchunk_vectors.row(i);
        let hits = rank::top(&rank::subchunk_cosines(snap, q, &all), &all, 1000);
        let mine = hits.iter().find(|(c, _)| *c == p.chunk).expect("its chunk");
        assert!((mine.1 - 1.0).abs() < 1e-4, "{mine:?}");
        assert!(hits.windows(2).all(|w| w[0].1 >= w[1].1), "best first");
        let mut seen = std::collections::HashSet::new();
        assert!(hits.iter().all(|(c, _)| seen.insert(*c)), "each chunk once");
        let mut masked = all.clone();
        masked[p.chunk as usize] = false;
        let hits = rank::top(&rank::subchunk_cosines(snap, q, &masked), &masked, 1000);
        assert!(hits.iter().all(|(c, _)| *c != p.chunk));
    }
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

#[test]
fn tree_version_health_and_weights() {
    let w = World::new();
    let e = engine(&w);
    let t = e.tree("", 2, 100, None).expect("tree");
    let paths: Vec<&str> = t.entries.iter().map(|x| x.path.as_str()).collect();
    assert!(
        paths.contains(&"science")
            && paths.contains(&"science/alpha")
            && paths.contains(&"tools/beta"),
        "{paths:?}"
    );
    let t = e
        .tree("science/alpha/src/alpha", 1, 100, None)
        .expect("tree");
    assert!(
        t.entries
            .iter()
            .any(|x| x.path == "science/alpha/src/alpha/core.py" && x.kind == "file")
    );
    assert!(e.tree("../x", 1, 10, None).is_err());
    let v = e.version(None);
    assert_eq!(v.repos.len(), 2);
    assert!(
        v.repos
            .iter()
            .any(|r| r.name == "beta" && r.default_branch.as_deref() == Some("master"))
    );
    assert_eq!(e.health(None).docs_by_repo["beta"], 2);

    let before = search(&e, "alpha", Filters::default(), Mode::Bm25);
    let last = before.hits.last().expect("hits").doc_id.clone();
    e.set_weight(&last, 10.0, "global", 1.0, &cairn_search::Caller::local())
        .expect("weight");
    let after = search(&e, "alpha", Filters::default(), Mode::Bm25);
    assert_eq!(after.hits[0].doc_id, last, "a runtime weight lifts the doc");
    assert!(
        w.path("out/runtime-weights.json").is_file(),
        "stored beside the index"
    );
    assert!(
        e.set_weight(
            "science/alpha/missing.py",
            2.0,
            "global",
            1.0,
            &cairn_search::Caller::local()
        )
        .is_err()
    );
}

#[test]
fn cli_search_retrieve_tree_and_eval() {
    let w = World::new();
    assert!(w.build("out", &[]).status.success());
    let idx = w.path("out");
    let idx = idx.to_str().expect("utf8");
    let model = w.model.to_str().expect("utf8");
    let o = cairn(&[
        "search",
        "fit_model",
        "--index",
        idx,
        "--model-dir",
        model,
        "--json",
    ]);
    assert!(o.status.success());
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
    assert_eq!(v["hits"][0]["doc_id"], "science/alpha/src/alpha/core.py");
    let o = cairn(&[
        "search",
        "fit_model",
        "--index",
        idx,
        "--model-dir",
        model,
        "--toolkit",
        "alpha",
    ]);
    assert!(
        stdout(&o).contains("science/alpha/src/alpha/core.py:"),
        "{}",
        stdout(&o)
    );
    // Other phrasings are `--queries` (the API's word); `--also` still works.
    let phrased = |flag: &str| {
        let o = cairn(&[
            "search",
            "light curve",
            flag,
            "fit_model",
            "--index",
            idx,
            "--model-dir",
            model,
            "--json",
        ]);
        assert!(
            o.status.success(),
            "{flag}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
        v["hits"].clone()
    };
    assert_eq!(phrased("--queries"), phrased("--also"));
    let o = cairn(&[
        "retrieve",
        "science/alpha/src/alpha/core.py",
        "--lines",
        "5:6",
        "--index",
        idx,
        "--model-dir",
        model,
    ]);
    assert!(
        stdout(&o).contains("def fit_model(data, t_E=1.0):"),
        "{}",
        stdout(&o)
    );
    let o = cairn(&[
        "retrieve",
        "../etc/passwd",
        "--lines",
        "1:2",
        "--index",
        idx,
        "--model-dir",
        model,
    ]);
    assert_eq!(o.status.code(), Some(2));
    let o = cairn(&["tree", "--index", idx, "--model-dir", model]);
    assert!(stdout(&o).contains("science/alpha/"));
    w.write(
        "golden.yaml",
        "- id: def\n  query: fit_model\n  filters: {}\n  relevant:\n    - doc_id: science/alpha/src/alpha/core.py\n      lines: [5, 7]\n  kind: api\n",
    );
    let golden = w.path("golden.yaml");
    let golden = golden.to_str().expect("utf8");
    let eval = |extra: &[&str]| {
        let mut args = vec![
            "eval",
            golden,
            "--index",
            idx,
            "--model-dir",
            model,
            "--mode",
            "bm25",
        ];
        args.extend(extra);
        cairn(&args)
    };
    let o = eval(&["--min-recall", "1.0"]);
    assert!(o.status.success(), "{}", stdout(&o));
    assert!(stdout(&o).contains("recall@5 1.000"), "{}", stdout(&o));
    // The learned ranker's training rows: each candidate, labelled, with
    // the fusion's parts and the lists that found it.
    let rows = w.path("features.jsonl");
    let o = eval(&["--features", rows.to_str().expect("utf8")]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&rows).expect("features");
    let rows: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    let first = rows.first().expect("a candidate");
    assert_eq!(
        (first["id"].as_str(), first["rank"].as_u64()),
        (Some("def"), Some(1))
    );
    assert_eq!(first["relevant"], true, "{first}");
    let feature = |name: &str| first["features"][name].as_f64().unwrap_or(-1.0);
    assert!(
        feature("bm25") > 0.0 && feature("rr_identifier") > 0.0,
        "{first}"
    );
    assert_eq!(feature("doctype_code"), 1.0, "{first}");
    assert!(
        rows.iter().skip(1).all(|r| r["relevant"] == false),
        "{text}"
    );
    // The nightly's step summary: a table per mode, a row per kind.
    let o = eval(&["--markdown"]);
    assert!(o.status.success(), "{}", stdout(&o));
    let md = stdout(&o);
    assert!(
        md.contains("| bm25 | questions | recall@5 | MRR@10 | nDCG@10 |"),
        "{md}"
    );
    assert!(md.contains("| **all** | 1 | 1.000 | 1.000 |"), "{md}");
    assert!(md.contains("| api | 1 | 1.000 |"), "{md}");
    assert!(!md.contains("Misses"), "{md}");
    // The nightly's gate: today's figures against the last release's.
    let o = eval(&["--json"]);
    let baseline = w.path("baseline.json");
    std::fs::write(&baseline, stdout(&o)).expect("baseline");
    let baseline = baseline.to_str().expect("utf8");
    let o = eval(&["--baseline", baseline]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("recall@k 1.000 (baseline 1.000, +0.000)"),
        "{}",
        stderr(&o)
    );
    // The same question answered elsewhere now: recall fell, the gate says by how much.
    std::fs::write(
        w.path("golden.yaml"),
        "- id: def\n  query: fit_model\n  filters: {}\n  relevant:\n    - doc_id: science/alpha/docs/crlf.txt\n      lines: [1, 1]\n  kind: api\n",
    )
    .expect("golden");
    let o = eval(&["--baseline", baseline]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("recall@k fell by 1.000, more than --max-drop 0.02"),
        "{}",
        stderr(&o)
    );
    // A guard that breaks fails the gate only when asked.
    std::fs::write(
        w.path("golden.yaml"),
        "- id: g\n  query: fit_model\n  relevant:\n    - doc_id: science/alpha/src/alpha/core.py\n  never_first: [science/alpha/src/]\n  kind: guard\n",
    )
    .expect("golden");
    assert!(eval(&[]).status.success());
    let o = eval(&["--fail-on-guard"]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(stderr(&o).contains("a guard question failed"));
    let o = eval(&["--baseline", "/nonexistent/eval.json"]);
    assert_ne!(o.status.code(), Some(0));
    assert!(
        stderr(&o).contains("--baseline /nonexistent/eval.json"),
        "{}",
        stderr(&o)
    );
}

fn span_request(doc_id: &str) -> SpanRequest {
    SpanRequest::lines(doc_id, 1, 1)
}

/// Work whose deadline has passed stops at the next stage instead of running on unread.
#[test]
fn a_search_past_its_deadline_stops() {
    let w = World::new();
    let e = engine(&w);
    let late = e.search(&SearchRequest {
        query: "fit_model".into(),
        queries: Vec::new(),
        deadline: cairn_search::Deadline::at(std::time::Instant::now()),
        ..SearchRequest::default()
    });
    assert!(
        matches!(late, Err(SearchError::DeadlineExceeded)),
        "{late:?}"
    );
    let fine = e.search(&SearchRequest {
        query: "fit_model".into(),
        queries: Vec::new(),
        deadline: cairn_search::Deadline::at(
            std::time::Instant::now() + std::time::Duration::from_secs(60),
        ),
        ..SearchRequest::default()
    });
    assert!(fine.is_ok());
}
