//! The search library over a fixture index: filters, links, retrieval, fallbacks.

use crate::fixtures::World;
use cairn_embed::{BertEmbedder, DevicePref, Embedder, ModelSpec};
use cairn_index::{IndexRoot, Snapshot};
use cairn_search::rank;
use cairn_search::runtime_weights::RuntimeWeights;
use cairn_search::{Engine, EngineOptions, Filters, Mode, SearchError, SearchRequest, SpanRequest};

pub(crate) fn engine(w: &World) -> Engine {
    assert!(w.build("out", &[]).status.success());
    Engine::open(&EngineOptions {
        index: w.path("out"),
        model_dir: Some(w.model.clone()),
        device: DevicePref::Cpu,
    })
    .expect("open engine")
}

pub(crate) fn search(
    e: &Engine,
    query: &str,
    filters: Filters,
    mode: Mode,
) -> cairn_search::SearchResponse {
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

pub(crate) fn span_request(doc_id: &str) -> SpanRequest {
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

/// Issue 58: the first k hits (document, lines, focus, order) are the same
/// whatever `limit` ≥ k, for every question of every golden file, in each
/// mode, over a fixture where answers run past 50 hits: 40 files of long
/// sections written from the golden questions' own words, so neighbouring
/// windows touch and merge (before: a larger limit drafted more hits, and
/// lower candidates widened the first ones).
#[test]
fn the_first_hits_are_the_same_whatever_the_limit() {
    let golden = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("golden");
    let mut questions = Vec::new();
    for file in ["queries", "heldout", "random", "users", "papers"] {
        let path = golden.join(format!("{file}.yaml"));
        questions.extend(cairn_search::eval::load(&path).expect(file));
    }
    let words: Vec<String> = questions
        .iter()
        .flat_map(|q| q.query.split_whitespace().map(str::to_lowercase))
        .filter(|w| w.chars().all(char::is_alphanumeric) && w.len() > 2)
        .collect();
    let w = World::new();
    let mut files = Vec::new();
    let mut seed = 7u64;
    let mut next = move || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) as usize
    };
    for f in 0..40 {
        let mut text = String::new();
        for section in 0..4 {
            text.push_str(&format!("# Section {section} of notes {f}\n\n"));
            for _ in 0..45 {
                let line: Vec<&str> = (0..8)
                    .map(|_| words[next() % words.len()].as_str())
                    .collect();
                text.push_str(&line.join(" "));
                text.push('\n');
            }
            text.push('\n');
        }
        files.push((format!("docs/notes{f}.md"), text.into_bytes()));
    }
    let refs: Vec<(&str, Vec<u8>)> = files.iter().map(|(p, b)| (p.as_str(), b.clone())).collect();
    crate::fixtures::commit(&w.alpha_repo(), &refs, "many notes");
    let e = engine(&w);
    let mut checked = 0;
    for q in &questions {
        for mode in [Mode::Hybrid, Mode::Bm25, Mode::Vector] {
            let ask = |limit: usize| {
                let hits = e
                    .search(&SearchRequest {
                        query: q.query.clone(),
                        limit,
                        filters: q.filters.clone(),
                        mode,
                        ..SearchRequest::default()
                    })
                    .map(|r| r.hits)
                    .unwrap_or_default();
                hits.into_iter()
                    .map(|h| {
                        (
                            h.doc_id,
                            h.start_line,
                            h.end_line,
                            h.focus_start,
                            h.focus_end,
                        )
                    })
                    .collect::<Vec<_>>()
            };
            let all = ask(50);
            for limit in [5, 10, 20] {
                let got = ask(limit);
                let n = limit.min(all.len());
                assert_eq!(got, all[..n], "{} ({mode:?}) at limit {limit}", q.id);
            }
            checked += usize::from(all.len() > 20);
        }
    }
    assert!(checked > 100, "only {checked} answers ran past 20 hits");
}
