//! Approximate vector search (issue 33) on fixtures built with an
//! approximate index (`ann_min_rows: 0` in build.yaml): its inverted lists
//! are written into the version deterministically and checked by `verify`;
//! searching through them answers as the exact scan does; and a hidden
//! repository changes no answer, because a caller reads only the lists of
//! documents it may see, trained on their rows alone.

use crate::fixtures::{World, cairn, current_dir, stderr};
use cairn_embed::DevicePref;
use cairn_search::{Engine, EngineOptions, Filters, Mode, SearchRequest};

/// The fixture settings, with the approximate index however small the index.
const WITH_ANN: &str = "max_file_bytes: 20000\nchunk_max_lines: 30\nann_min_rows: 0\n";

const QUERIES: [&str; 6] = [
    "fit the model",
    "magnification of a binary lens",
    "install alpha",
    "t_E parameter",
    "widget",
    "lens model data",
];

fn engine(w: &World, out: &str) -> Engine {
    Engine::open(&EngineOptions {
        index: w.path(out),
        model_dir: Some(w.model.clone()),
        device: DevicePref::Cpu,
    })
    .expect("open engine")
}

/// What a caller with `groups` gets for `query`: each hit's place and score.
fn answer(
    e: &Engine,
    query: &str,
    mode: Mode,
    groups: Option<Vec<String>>,
) -> Vec<(String, u32, u32, u32)> {
    answer_filtered(e, query, mode, groups, Filters::default())
}

/// The same, under `filters`, with the most hits a request may ask for.
fn answer_filtered(
    e: &Engine,
    query: &str,
    mode: Mode,
    groups: Option<Vec<String>>,
    filters: Filters,
) -> Vec<(String, u32, u32, u32)> {
    let r = e.search(&SearchRequest {
        query: query.into(),
        queries: Vec::new(),
        limit: 50,
        filters,
        threshold: None,
        mode,
        groups,
        deadline: cairn_search::Deadline::none(),
    });
    // A filter the caller cannot use (another group's repository, an
    // unknown toolkit) is refused alike through the lists and the scan.
    match r {
        Ok(r) => r
            .hits
            .into_iter()
            .map(|h| (h.doc_id, h.start_line, h.end_line, h.score.to_bits()))
            .collect(),
        Err(e) => vec![(format!("refused: {e}"), 0, 0, 0)],
    }
}

#[test]
fn ann_lists_are_written_deterministically_verified_and_answer_as_the_exact_scan() {
    let w = World::new();
    w.write("config/build.yaml", WITH_ANN);
    for out in ["out", "again"] {
        let built = w.build(out, &[]);
        assert!(built.status.success(), "{}", stderr(&built));
    }
    let (a, b) = (current_dir(&w.path("out")), current_dir(&w.path("again")));
    assert_eq!(a.file_name(), b.file_name(), "same inputs, same version");
    let listed: Vec<String> = std::fs::read_dir(&a)
        .expect("version")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with("ann"))
        .collect();
    assert!(
        listed.contains(&"ann.json".to_owned()) && listed.len() >= 3,
        "{listed:?}"
    );
    for f in &listed {
        assert!(
            std::fs::read(a.join(f)).ok() == std::fs::read(b.join(f)).ok(),
            "{f} differs between two builds"
        );
    }
    let out = w.path("out");
    let verified = cairn(&["verify", "--index", out.to_str().expect("utf8")]);
    assert!(verified.status.success(), "{}", stderr(&verified));

    // Through the lists (forced on this small index) as through the exact scan.
    let exact = engine(&w, "out");
    let mut listed_engine = engine(&w, "out");
    listed_engine.set_exact_below(0);
    for q in QUERIES {
        for mode in [Mode::Vector, Mode::Hybrid] {
            assert_eq!(
                answer(&exact, q, mode, None),
                answer(&listed_engine, q, mode, None),
                "{q:?} {mode:?}"
            );
        }
    }

    // Lists that do not match their version are found by verify.
    let broken = w.path("broken");
    std::fs::create_dir_all(broken.join("versions")).expect("mkdir");
    let copy = broken.join("versions").join(a.file_name().expect("name"));
    crate::serve_process::copy_dir(&a, &copy);
    std::fs::write(
        broken.join("CURRENT"),
        format!(
            "{}\n",
            a.file_name().and_then(|n| n.to_str()).expect("name")
        ),
    )
    .expect("current");
    std::fs::write(
        copy.join("ann.json"),
        r#"[{"groups": [], "chunks": 1, "subchunks": 1}]"#,
    )
    .expect("tamper");
    let refused = cairn(&["verify", "--index", broken.to_str().expect("utf8")]);
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("ann.json")
            || crate::fixtures::stdout(&refused).contains("ann.json"),
        "{}",
        stderr(&refused)
    );
}

#[test]
fn a_hidden_repository_changes_nothing_a_caller_reads() {
    let w = World::new();
    // write_config writes the default build.yaml: the lists' settings after it.
    w.write_config("    groups: [team-a]\n");
    w.write("config/build.yaml", WITH_ANN);
    assert!(w.build("present", &[]).status.success());
    let built = w.build_without_alpha("absent");
    assert!(built.status.success(), "{}", stderr(&built));
    for out in ["present", "absent"] {
        assert!(current_dir(&w.path(out)).join("ann.json").exists(), "{out}");
    }
    let (mut present, mut absent) = (engine(&w, "present"), engine(&w, "absent"));
    present.set_exact_below(0);
    absent.set_exact_below(0);
    for q in QUERIES {
        for mode in [Mode::Vector, Mode::Hybrid] {
            let seen = answer(&present, q, mode, Some(Vec::new()));
            assert!(seen.iter().all(|h| !h.0.contains("/alpha/")), "{seen:?}");
            assert_eq!(
                seen,
                answer(&absent, q, mode, Some(Vec::new())),
                "{q:?} {mode:?}"
            );
        }
    }
    // A member of team-a reads alpha's lists too.
    let member = answer(
        &present,
        "fit the model",
        Mode::Vector,
        Some(vec!["team-a".to_owned()]),
    );
    assert!(member.iter().any(|h| h.0.contains("/alpha/")), "{member:?}");
}

/// Filters a caller sends (another group's repository by name, a doctype, a
/// toolkit nothing has, a category) read the lists as the exact scan reads
/// the rows: the same hits and scores for every caller, nothing of alpha
/// for a caller outside team-a however it is named, and a filter that keeps
/// few rows scans those rows instead of reading lists that hold none.
#[test]
fn filters_and_another_groups_names_answer_through_the_lists_as_exactly() {
    let w = World::new();
    w.write_config("    groups: [team-a]\n");
    w.write("config/build.yaml", WITH_ANN);
    let built = w.build("out", &[]);
    assert!(built.status.success(), "{}", stderr(&built));
    assert!(current_dir(&w.path("out")).join("ann.json").exists());
    let exact = engine(&w, "out");
    let mut lists = engine(&w, "out");
    lists.set_exact_below(0);
    let strings = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let filters = [
        Filters {
            repo: strings(&["alpha"]),
            ..Filters::default()
        },
        Filters {
            doctype: strings(&["code"]),
            ..Filters::default()
        },
        Filters {
            toolkit: strings(&["no-such-toolkit"]),
            ..Filters::default()
        },
        Filters {
            category: strings(&["science", "tools"]),
            doctype: strings(&["doc", "code"]),
            ..Filters::default()
        },
    ];
    // A doctype that does not exist is refused, naming the field.
    let refused = lists
        .search(&SearchRequest {
            query: "fit the model".into(),
            filters: Filters {
                doctype: strings(&["docs"]),
                ..Filters::default()
            },
            ..SearchRequest::default()
        })
        .err()
        .map(|e| format!("{e:?}"));
    assert!(
        refused.as_ref().is_some_and(|e| e.contains("doctype")),
        "{refused:?}"
    );
    let callers = [
        None,
        Some(Vec::new()),
        Some(strings(&["team-a"])),
        Some(strings(&["team-b"])),
    ];
    for f in &filters {
        for groups in &callers {
            for q in QUERIES {
                for mode in [Mode::Vector, Mode::Hybrid] {
                    let got = answer_filtered(&lists, q, mode, groups.clone(), f.clone());
                    assert_eq!(
                        got,
                        answer_filtered(&exact, q, mode, groups.clone(), f.clone()),
                        "{q:?} {mode:?} {groups:?} {f:?}"
                    );
                    if groups
                        .as_ref()
                        .is_some_and(|g| !g.contains(&"team-a".to_owned()))
                    {
                        assert!(got.iter().all(|h| !h.0.contains("/alpha/")), "{got:?}");
                    }
                }
            }
        }
    }
}
