//! The search library over a real index built from real git repositories
//! with the tiny model: what each call answers, and what a caller's groups
//! and admin flag allow (no server involved).

use cairn_embed::DevicePref;
use cairn_pipeline::fixtures::Sandbox;
use cairn_pipeline::{Silent, build};
use cairn_search::{Caller, Code, Engine, EngineOptions, Mode, SearchRequest, SpanRequest};

/// A built index: `alpha` is restricted to group `team-a`, `beta` is public.
struct Built {
    _sandbox: Sandbox,
    engine: Engine,
}

fn built() -> Built {
    let sandbox = Sandbox::new(
        &[(
            "alpha/core.py",
            b"def fit_model(data):\n    \"\"\"Fit a point lens.\"\"\"\n    return data\n".to_vec(),
        )],
        &[(
            "README.md",
            b"# Beta\n\nBinary lens magnification.\n".to_vec(),
        )],
        &["team-a"],
    );
    Built {
        engine: open(&sandbox),
        _sandbox: sandbox,
    }
}

/// Builds `sandbox`'s index and opens it with the tiny model.
fn open(sandbox: &Sandbox) -> Engine {
    build(&sandbox.options("index"), &Silent).expect("build");
    Engine::open(&EngineOptions {
        index: sandbox.path("index"),
        model_dir: Some(sandbox.path("model")),
        device: DevicePref::Cpu,
    })
    .expect("open")
}

/// A BM25 search for five hits by a trusted caller, with other phrasings.
fn bm25(query: &str, queries: Vec<String>) -> SearchRequest {
    SearchRequest {
        query: query.into(),
        queries,
        limit: 5,
        mode: Mode::Bm25,
        ..SearchRequest::default()
    }
}

fn team() -> Caller {
    Caller {
        name: "ada".into(),
        groups: Some(vec!["team-a".into()]),
        admin: false,
    }
}

#[test]
fn search_retrieve_and_tree_answer_with_exact_lines_and_links() {
    let b = built();
    let r = b
        .engine
        .search(&bm25("fit_model", Vec::new()))
        .expect("search");
    let hit = r.hits.first().expect("a hit");
    assert_eq!(hit.doc_id, "science/alpha/alpha/core.py");
    assert!(hit.permalink.contains("#L"), "{}", hit.permalink);
    let lines = b
        .engine
        .retrieve(
            &SpanRequest::lines("science/alpha/alpha/core.py", 1, 1),
            None,
        )
        .expect("retrieve");
    assert_eq!(lines.text, "def fit_model(data):\n");
    let tree = b.engine.tree("", 3, 100, None).expect("tree");
    assert!(tree.to_string().contains("tools/beta/"), "{tree}");
}

#[test]
fn documents_are_paged_within_the_callers_groups() {
    let b = built();
    let ids = |groups: Option<&[String]>| -> Vec<String> {
        let mut out = Vec::new();
        let mut cursor = Some(0);
        while let Some(c) = cursor {
            let (page, next) = b.engine.documents(groups, c, 1);
            assert!(page.len() <= 1);
            out.extend(page.iter().map(|d| d.doc_id.to_string()));
            cursor = next;
        }
        out
    };
    let everyone = ids(None);
    assert_eq!(
        everyone,
        ["science/alpha/alpha/core.py", "tools/beta/README.md"]
    );
    assert_eq!(ids(team().groups.as_deref()), everyone);
    assert_eq!(
        ids(Some(&[])),
        ["tools/beta/README.md"],
        "alpha is team-a's"
    );
}

#[test]
fn only_an_admin_sets_weights_and_only_on_what_it_sees() {
    let b = built();
    let set = |by: &Caller, doc: &str| b.engine.set_weight(doc, 2.0, "global", 1.0, by);
    let e = set(&team(), "tools/beta/README.md").expect_err("not an admin");
    assert_eq!(e.code(), Code::Forbidden);
    let outsider = Caller {
        admin: true,
        groups: Some(Vec::new()),
        ..team()
    };
    let e = set(&outsider, "science/alpha/alpha/core.py").expect_err("hidden from it");
    assert_eq!(e.code(), Code::NotFound);
    let w = set(
        &Caller {
            admin: true,
            ..team()
        },
        "science/alpha/alpha/core.py",
    )
    .expect("admin");
    assert_eq!(w.multiplier, 2.0);
}

#[test]
fn a_hit_has_a_focus_inside_it_and_other_phrasings_fuse() {
    let long: String = (1..=60)
        .map(|i| match i {
            41 => "def blend_flux(ratio):\n".to_owned(),
            42 => "    \"\"\"The blending flux ratio of the source.\"\"\"\n".to_owned(),
            _ => format!("x_{i} = {i}  # filler line\n"),
        })
        .collect();
    let sandbox = Sandbox::new(
        &[("alpha/flux.py", long.into_bytes())],
        &[(
            "README.md",
            b"# Beta\n\nBinary lens magnification.\n".to_vec(),
        )],
        &[],
    );
    let engine = open(&sandbox);
    let ask = |queries: Vec<String>| {
        engine.search(&bm25("how much light comes from other stars", queries))
    };
    // The user's words alone find nothing by BM25; a rewrite naming the
    // identifier finds the function, and the focus is its lines.
    let plain = ask(Vec::new()).expect("search");
    assert!(
        plain.hits.iter().all(|h| !h.doc_id.ends_with("flux.py")),
        "{plain:?}"
    );
    let fused = ask(vec!["blend_flux blending flux ratio".into()]).expect("search");
    let hit = fused.hits.first().expect("a hit");
    assert!(hit.doc_id.ends_with("alpha/flux.py"), "{hit:?}");
    let (fs, fe) = (
        hit.focus_start.expect("focus"),
        hit.focus_end.expect("focus"),
    );
    assert!(
        hit.start_line <= fs && fe <= hit.end_line && fe - fs < 15,
        "{hit:?}"
    );
    assert!(
        (fs..=fe).contains(&41),
        "the focus holds the definition: {fs}-{fe}"
    );
    // At most five other phrasings, each a real one.
    let six = ask(vec!["a".into(); 6]).expect_err("too many");
    assert_eq!(six.code(), Code::InvalidArgument);
    let empty = ask(vec![" ".into()]).expect_err("empty");
    assert_eq!(empty.code(), Code::InvalidArgument);
}

#[test]
fn every_limit_gives_the_first_hits_of_the_longest_answer() {
    // One long section: its windows are one unit, so a window ranked low
    // joins the hit it touches; another document ranks between them.
    let notes: String = std::iter::once("# Caustics\n\n".to_owned())
        .chain((1..=160).map(|i| match i {
            1..=12 => format!("A caustic crossing at step {i} brightens the caustic image.\n"),
            13..=30 => format!("Line {i} mentions a caustic once.\n"),
            _ => format!("Filler line {i} about nothing in particular.\n"),
        }))
        .collect();
    let sandbox = Sandbox::new(
        &[("alpha/notes.md", notes.into_bytes())],
        &[(
            "README.md",
            b"# Beta\n\nA caustic crossing magnifies the source.\n\n## Other\n\nA caustic.\n"
                .to_vec(),
        )],
        &[],
    );
    let engine = open(&sandbox);
    for query in ["caustic crossing", "caustic image", "caustic"] {
        let ask = |limit: usize| {
            let mut req = bm25(query, Vec::new());
            req.limit = limit;
            let hits = engine.search(&req).expect("search").hits;
            hits.into_iter()
                .map(|h| (h.doc_id, h.start_line, h.end_line, h.focus_start))
                .collect::<Vec<_>>()
        };
        let most = ask(50);
        assert!(!most.is_empty(), "{query}");
        for limit in 1..=50 {
            let n = limit.min(most.len());
            assert_eq!(ask(limit), most[..n], "{query}, limit {limit}");
        }
    }
}

/// BM25 for several scopes in one pass over the postings (a question that
/// names a toolkit ranks that toolkit and everything) gives each scope the
/// list a search of it alone gives: scopes whose first stages fill at
/// different bars, one that allows nothing, over a hundred files of words
/// in differing mixes. (Where block-max WAND runs, a first-stage score at
/// the cut may differ in its last bit: see `rank::lexical::pruned`.)
#[test]
fn one_bm25_pass_for_several_scopes_answers_each_as_alone() {
    use cairn_search::rank::{Bm25Tables, ScopedStats, Visible, bm25};
    let words = [
        "lens",
        "magnification",
        "binary",
        "fit",
        "model",
        "source",
        "flux",
        "sampler",
    ];
    let file = |i: usize| {
        let text: Vec<String> = (0..12)
            .map(|l| {
                let pick = |j: usize| words[(i * 7 + l * 3 + j * 5) % words.len()];
                format!(
                    "{} {} {} line {l}\n",
                    pick(0),
                    pick(i % 3 + 1),
                    pick(l % 4 + 2)
                )
            })
            .collect();
        (format!("notes/n{i:03}.md"), text.concat().into_bytes())
    };
    let (alpha, beta): (Vec<_>, Vec<_>) = (0..120)
        .map(file)
        .partition(|(p, _)| p.ends_with("0.md") || p.ends_with("5.md"));
    fn as_files(v: &[(String, Vec<u8>)]) -> Vec<(&str, Vec<u8>)> {
        v.iter().map(|(p, b)| (p.as_str(), b.clone())).collect()
    }
    let sandbox = Sandbox::new(&as_files(&alpha), &as_files(&beta), &[]);
    let engine = open(&sandbox);
    let snap = engine.snapshot();
    let tables = Bm25Tables::new(snap).expect("tables");
    let everything = vec![true; snap.chunks.len()];
    let alpha_only: Vec<bool> = snap
        .chunks
        .iter()
        .map(|c| snap.docs[c.doc as usize].repo == "alpha")
        .collect();
    let nothing = vec![false; snap.chunks.len()];
    assert!(
        alpha_only.iter().filter(|a| **a).count() > 10,
        "a scope with many chunks"
    );
    let visible = Visible::new(&tables, everything.clone());
    let stats = ScopedStats::new(snap, &tables, &visible);
    let scopes: [&[bool]; 3] = [&everything, &alpha_only, &nothing];
    for q in [
        "binary lens magnification",
        "fit the source flux model",
        "sampler lens",
    ] {
        for k in [1, 3, 50] {
            let together = bm25(snap, &stats, q, &scopes, k).expect("bm25");
            let alone: Vec<Vec<(u32, f32)>> = scopes
                .iter()
                .map(|s| bm25(snap, &stats, q, &[s], k).expect("bm25").remove(0))
                .collect();
            assert_eq!(together, alone, "{q:?}, k {k}");
            assert!(together[0].len() >= k.min(3), "{q:?}, k {k}");
            assert!(!together[1].is_empty() && together[2].is_empty(), "{q:?}");
        }
    }
}
