//! `grep` and `references` against `git grep -n` on the same commits: the
//! same (file, line) matches for literal and regular-expression patterns,
//! case-sensitive or not (notebooks aside: cairn matches their cells'
//! decoded source, git their JSON); pages that add up to the whole; hidden
//! documents that never match; bad patterns refused by field over HTTP and
//! the CLI; definitions on their lines.

use crate::fixtures::{World, cairn, stderr};
use cairn_search::grep::GrepCap;
use cairn_search::{Engine, EngineOptions, Filters, GrepRequest};
use std::collections::BTreeSet;
use std::path::Path;

fn engine(w: &World) -> Engine {
    Engine::open(&EngineOptions {
        index: w.path("out"),
        model_dir: Some(w.model.clone()),
        device: cairn_embed::DevicePref::Cpu,
    })
    .expect("open")
}

/// `git grep -n` at HEAD of `repo`, as (path, line), limited to `indexed` paths.
fn git_grep(
    repo: &Path,
    flags: &[&str],
    pattern: &str,
    indexed: &BTreeSet<String>,
) -> BTreeSet<(String, u32)> {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(["grep", "-n", "--no-color", "-I"])
        .args(flags)
        .args(["-e", pattern, "HEAD"])
        .output()
        .expect("git grep");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let rest = l.strip_prefix("HEAD:")?;
            let (path, rest) = rest.split_once(':')?;
            let (line, _) = rest.split_once(':')?;
            indexed
                .contains(path)
                .then(|| {
                    (path.to_owned(), line.parse().ok())
                        .1
                        .map(|n| (path.to_owned(), n))
                })
                .flatten()
        })
        .collect()
}

fn grep(e: &Engine, req: GrepRequest) -> Vec<(String, u32)> {
    let r = e
        .grep(&req)
        .unwrap_or_else(|err| panic!("{}: {err}", req.pattern));
    assert!(r.truncated.is_none(), "{}: {:?}", req.pattern, r.truncated);
    r.files
        .iter()
        .flat_map(|f| f.matches.iter().map(move |m| (f.doc_id.clone(), m.line)))
        .collect()
}

#[test]
fn grep_finds_what_git_grep_finds() {
    let w = World::new();
    assert!(w.build("out", &[]).status.success());
    let e = engine(&w);
    let snap = e.snapshot();
    assert!(snap.trigrams.is_some(), "a new build writes trigrams.bin");
    let cases: [(&str, bool, bool, &[&str]); 9] = [
        ("fit_model", false, true, &["-F"]),
        ("FIT_MODEL", false, false, &["-F", "-i"]),
        ("self.u_0", false, true, &["-F"]),
        ("line", false, true, &["-F"]),
        ("^def ", true, true, &["-E"]),
        ("t_[0E]", true, true, &["-E"]),
        ("(magnification|sqrt)\\(", true, true, &["-E"]),
        ("[0-9]+\\.[0-9]+", true, true, &["-E"]),
        ("alpha$", true, false, &["-E", "-i"]),
    ];
    for (repo_name, repo) in [("alpha", &w.alpha), ("beta", &w.beta)] {
        let docs: Vec<_> = snap.docs.iter().filter(|d| d.repo == repo_name).collect();
        let indexed: BTreeSet<String> = docs
            .iter()
            .filter(|d| !d.path.ends_with(".ipynb"))
            .map(|d| d.path.clone())
            .collect();
        let prefix = docs[0]
            .doc_id
            .as_str()
            .trim_end_matches(docs[0].path.as_str())
            .to_owned();
        for (pattern, regex, case_sensitive, flags) in cases {
            let want: BTreeSet<(String, u32)> = git_grep(repo, flags, pattern, &indexed)
                .into_iter()
                .map(|(p, n)| (format!("{prefix}{p}"), n))
                .collect();
            let got = grep(
                &e,
                GrepRequest {
                    pattern: pattern.to_owned(),
                    regex,
                    case_sensitive,
                    filters: Filters {
                        repo: vec![repo_name.to_owned()],
                        ..Filters::default()
                    },
                    limit: 1000,
                    ..GrepRequest::default()
                },
            );
            let mut sorted = got.clone();
            sorted.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)));
            assert_eq!(got, sorted, "{pattern}: ordered by doc_id, then line");
            let got: BTreeSet<(String, u32)> = got
                .into_iter()
                .filter(|(d, _)| !d.ends_with(".ipynb"))
                .collect();
            assert_eq!(got, want, "{repo_name} {pattern:?}");
        }
        assert!(!indexed.is_empty());
    }
}

#[test]
fn pages_add_up_and_hidden_documents_never_match() {
    let w = World::new();
    w.write_config("    groups: [team-a]\n");
    assert!(w.build("out", &[]).status.success(), "build");
    let e = engine(&w);
    let all = |groups: Option<Vec<String>>| GrepRequest {
        pattern: "e".to_owned(),
        limit: 1000,
        groups,
        ..GrepRequest::default()
    };
    let trusted = grep(&e, all(None));
    assert!(trusted.iter().any(|(d, _)| d.contains("/alpha/")));
    let outsider = grep(&e, all(Some(Vec::new())));
    assert!(
        !outsider.is_empty() && outsider.iter().all(|(d, _)| !d.contains("/alpha/")),
        "{outsider:?}"
    );
    // Pages of 7 add up to the whole, in order, each cursor going on from the last.
    let mut paged = Vec::new();
    let mut cursor = None;
    for _ in 0..1000 {
        let r = e
            .grep(&GrepRequest {
                limit: 7,
                cursor: cursor.clone(),
                ..all(None)
            })
            .expect("page");
        paged.extend(
            r.files
                .iter()
                .flat_map(|f| f.matches.iter().map(move |m| (f.doc_id.clone(), m.line))),
        );
        match r.next_cursor {
            Some(c) => {
                assert_eq!(r.truncated, Some(GrepCap::Matches));
                cursor = Some(c);
            }
            None => break,
        }
    }
    assert_eq!(paged, trusted);
    // A notebook matches its cells' decoded text (the JSON escapes the
    // quotes), citing the raw line each stands on.
    let r = e
        .grep(&GrepRequest {
            pattern: "print(\"t_E".to_owned(),
            ..all(None)
        })
        .expect("grep");
    let nb = r
        .files
        .iter()
        .find(|f| f.doc_id.ends_with("demo.ipynb"))
        .expect("notebook");
    let raw_line = crate::fixtures::NOTEBOOK
        .lines()
        .position(|l| l.contains("print(\\\"t_E"))
        .expect("in the fixture") as u32
        + 1;
    assert_eq!(nb.matches[0].line, raw_line);
    assert_eq!(nb.matches[0].text, "print(\"t_E ≈ 1 day\")");
    // Context lines and links.
    let r = e
        .grep(&GrepRequest {
            pattern: "def fit_model".to_owned(),
            context: 2,
            ..all(None)
        })
        .expect("grep");
    let m = &r.files[0].matches[0];
    assert_eq!((m.line, m.start_line, m.end_line), (5, 3, 7));
    assert_eq!(m.before.len(), 2);
    assert!(m.permalink.ends_with("#L3-L7"), "{}", m.permalink);
    // A deadline already past stops the scan before it reads anything, and
    // says so with a cursor that starts the same page again.
    let r = e
        .grep(&GrepRequest {
            deadline: cairn_search::Deadline::at(std::time::Instant::now()),
            ..all(None)
        })
        .expect("grep");
    assert_eq!(
        (r.truncated, r.matches, r.documents_read),
        (Some(GrepCap::Deadline), 0, 0)
    );
    assert!(r.next_cursor.is_some());
    // Bad input, by field.
    for (req, field) in [
        (
            GrepRequest {
                pattern: String::new(),
                ..all(None)
            },
            "pattern",
        ),
        (
            GrepRequest {
                pattern: "(".into(),
                regex: true,
                ..all(None)
            },
            "pattern",
        ),
        (
            GrepRequest {
                pattern: "x".repeat(10_000),
                ..all(None)
            },
            "pattern",
        ),
        (
            GrepRequest {
                context: 9,
                ..all(None)
            },
            "context",
        ),
        (
            GrepRequest {
                limit: 5000,
                ..all(None)
            },
            "limit",
        ),
        (
            GrepRequest {
                cursor: Some("nope".into()),
                ..all(None)
            },
            "cursor",
        ),
        (
            GrepRequest {
                path: Some("[".into()),
                ..all(None)
            },
            "path",
        ),
    ] {
        match e.grep(&req) {
            Err(cairn_search::SearchError::Invalid { field: f, .. }) => assert_eq!(f, field),
            other => panic!("{field}: {:?}", other.map(|r| r.matches)),
        }
    }
}

#[test]
fn the_cli_greps_and_finds_references() {
    let w = World::new();
    assert!(w.build("out", &[]).status.success());
    let index = w.path("out");
    let (index, model) = (
        index.to_str().expect("utf8"),
        w.model.to_str().expect("utf8"),
    );
    let o = cairn(&["grep", "fit_model", "--index", index, "--model-dir", model]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("/src/alpha/core.py:5:def fit_model(data, t_E=1.0):"),
        "{out}"
    );
    let o = cairn(&[
        "references",
        "Model",
        "--path",
        "*.py",
        "--json",
        "--index",
        index,
        "--model-dir",
        model,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    let lines: Vec<u64> = v["files"][0]["matches"]
        .as_array()
        .expect("matches")
        .iter()
        .filter_map(|m| m["line"].as_u64())
        .collect();
    // `class Model:`, not `fit_model` (a whole word only).
    assert_eq!(lines, [10], "{v}");
    let o = cairn(&["grep", "(", "-E", "--index", index, "--model-dir", model]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("pattern"), "{}", stderr(&o));
}

#[actix_web::test]
async fn grep_answers_over_http_with_problems_naming_the_field() {
    use actix_web::test;
    let s = crate::http::served(None, |_| {});
    let app = test::init_service(cairn_serve::server::app(s.state.clone())).await;
    let get = |uri: &str| {
        test::TestRequest::get()
            .uri(uri)
            .insert_header(crate::http::bearer(&s.reader))
            .to_request()
    };
    let res =
        test::call_service(&app, get("/grep?pattern=fit_model&toolkit=alpha&context=1")).await;
    assert_eq!(res.status(), 200);
    let v: serde_json::Value = test::read_body_json(res).await;
    assert!(v["matches"].as_u64().is_some_and(|n| n >= 1), "{v}");
    assert!(
        v["files"][0]["matches"][0]["permalink"].as_str().is_some(),
        "{v}"
    );
    let res = test::call_service(&app, get("/references?name=Model&path=*.py")).await;
    assert_eq!(res.status(), 200);
    for (uri, field) in [
        ("/grep?pattern=(&regex=true", "pattern"),
        ("/grep?pattern=x&context=99", "context"),
        ("/grep?pattern=x&regex=maybe", "regex"),
        ("/grep?pattern=x&colour=red", "colour"),
    ] {
        let res = test::call_service(&app, get(uri)).await;
        assert!(res.status().is_client_error(), "{uri}: {}", res.status());
        let v: serde_json::Value = test::read_body_json(res).await;
        assert_eq!(v["field"], field, "{uri}: {v}");
    }
}

#[test]
fn definitions_point_at_the_defining_lines() {
    let w = World::new();
    assert!(w.build("out", &[]).status.success());
    let e = engine(&w);
    let find = |name: &str| {
        e.definitions(&cairn_search::DefinitionsRequest {
            name: name.to_owned(),
            ..Default::default()
        })
        .expect("definitions")
    };
    let r = find("fit_model");
    assert_eq!(r.matched, cairn_search::definitions::NameMatch::Exact);
    let d = &r.definitions[0];
    assert_eq!(
        (d.kind.as_str(), d.start_line, d.end_line),
        ("function", 5, 7),
        "{d:?}"
    );
    assert!(d.signature.starts_with("def fit_model(data"), "{d:?}");
    assert!(d.permalink.ends_with("#L5-L7"), "{d:?}");
    let r = find("Model.magnification");
    assert_eq!(r.matched, cairn_search::definitions::NameMatch::Dotted);
    assert_eq!(
        (r.definitions[0].scope.as_str(), r.definitions[0].start_line),
        ("Model", 15)
    );
    let r = find("model");
    assert_eq!(r.matched, cairn_search::definitions::NameMatch::AnyCase);
    assert_eq!(r.definitions[0].kind, "class");
    let r = find("BinaryMag");
    assert_eq!(
        (r.definitions[0].start_line, r.definitions[0].end_line),
        (4, 6)
    );
    let r = find("Install");
    assert_eq!(r.definitions[0].kind, "section");
    assert!(find("nothing_like_this").definitions.is_empty());
    let o = cairn(&[
        "definitions",
        "Model",
        "--index",
        w.path("out").to_str().expect("utf8"),
        "--model-dir",
        w.model.to_str().expect("utf8"),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("class Model:"));
}
