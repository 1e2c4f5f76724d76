//! ARCHITECTURE.md's rule for every crate: its modules import one way, so
//! no two of them need each other. A module's imports are the top-level
//! modules its code (not its comments or tests) names with `crate::`,
//! directly (`crate::engine::Engine`), in a group (`crate::{access, links}`)
//! or through a name the crate root re-exports from a module
//! (`crate::Hit`, which `lib.rs` takes from `passages`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

type Graph = BTreeMap<String, BTreeSet<String>>;

/// The names the crate root re-exports, each with the module it comes from
/// (`pub use passages::{Hit, SearchRequest};` gives `Hit → passages` …).
fn reexports(root: &str) -> BTreeMap<String, String> {
    let mut names = BTreeMap::new();
    for statement in root.split(';') {
        let Some(rest) = statement.trim().strip_prefix("pub use ") else {
            continue;
        };
        let Some((module, items)) = rest.split_once("::") else {
            continue;
        };
        let items = items.trim().trim_start_matches('{').trim_end_matches('}');
        for item in items.split(',') {
            let name = item.split(" as ").last().unwrap_or("").trim();
            if !name.is_empty() {
                names.insert(name.to_owned(), module.trim().to_owned());
            }
        }
    }
    names
}

/// What one path after `crate::` names: its first segment, or each first
/// segment of a `{…}` group.
fn heads(path: &str) -> Vec<String> {
    let ident = |s: &str| -> String {
        s.trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    match path.strip_prefix('{') {
        Some(group) => {
            let group = &group[..group.find('}').unwrap_or(group.len())];
            group.split(',').map(ident).collect()
        }
        None => vec![ident(path)],
    }
}

/// The imports of every top-level module of the crate whose sources are `src`.
fn graph(src: &Path) -> Graph {
    let root = ["lib.rs", "main.rs"]
        .iter()
        .find_map(|f| std::fs::read_to_string(src.join(f)).ok())
        .unwrap_or_default();
    let names = reexports(&root);
    let mut graph = Graph::new();
    let mut files = vec![(src.to_path_buf(), None::<String>)];
    while let Some((dir, top)) = files.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
            let module = top.clone().unwrap_or_else(|| stem.to_owned());
            if path.is_dir() {
                files.push((path.clone(), Some(module)));
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs")
                || (top.is_none() && (stem == "lib" || stem == "main"))
            {
                continue;
            }
            let source = std::fs::read_to_string(&path).unwrap_or_default();
            let code = source.split("#[cfg(test)]").next().unwrap_or("");
            let deps = graph.entry(module.clone()).or_default();
            for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
                for (i, _) in line.match_indices("crate::") {
                    for head in heads(&line[i + "crate::".len()..]) {
                        let dep = names.get(&head).cloned().unwrap_or(head);
                        if dep.chars().next().is_some_and(|c| c.is_ascii_lowercase())
                            && dep != module
                        {
                            deps.insert(dep);
                        }
                    }
                }
            }
        }
    }
    // Only the crate's own modules count (`crate::SearchError` lives in the root).
    let modules: BTreeSet<String> = graph.keys().cloned().collect();
    for deps in graph.values_mut() {
        deps.retain(|d| modules.contains(d));
    }
    graph
}

/// The modules that import each other: what is left after peeling, again and
/// again, the modules that import none of those left (Kahn's algorithm).
fn circles(graph: &Graph) -> Graph {
    let mut left = graph.clone();
    while let Some(leaf) = left
        .iter()
        .find(|(_, deps)| deps.iter().all(|d| !left.contains_key(d)))
        .map(|(m, _)| m.clone())
    {
        left.remove(&leaf);
    }
    left
}

/// The crate in `dir` (relative to the workspace root) has no import circle,
/// and its graph holds each `(module, import)` pair named, so the reading of
/// imports is seen to work.
fn imports_one_way(dir: &str, expected: &[(&str, &str)]) {
    let graph = graph(&Path::new(env!("CARGO_MANIFEST_DIR")).join(dir).join("src"));
    for (module, import) in expected {
        assert!(
            graph.get(*module).is_some_and(|d| d.contains(*import)),
            "{dir}: expected {module} to import {import}: {graph:?}"
        );
    }
    let left = circles(&graph);
    assert!(
        left.is_empty(),
        "{dir}: modules importing each other: {left:?}"
    );
}

#[test]
fn search_imports_one_way() {
    imports_one_way(
        "search",
        &[
            ("passages", "engine"),
            ("retrieve", "engine"),
            ("context", "passages"),
        ],
    );
}

#[test]
fn pipeline_imports_one_way() {
    imports_one_way("pipeline", &[("build", "config"), ("articles", "config")]);
}

#[test]
fn serve_imports_one_way() {
    imports_one_way("serve", &[("http", "ops")]);
}

#[test]
fn index_imports_one_way() {
    imports_one_way("index", &[("snapshot", "vectors")]);
}

#[test]
fn embed_imports_one_way() {
    imports_one_way("embed", &[("bert", "cpu")]);
}

#[test]
fn the_binary_imports_one_way() {
    imports_one_way(".", &[("commands", "cli")]);
}

#[test]
fn a_circle_is_found() {
    let graph: Graph = [("a", "b"), ("b", "c"), ("c", "a"), ("d", "a")]
        .iter()
        .map(|(m, d)| (m.to_string(), BTreeSet::from([d.to_string()])))
        .collect();
    let left = circles(&graph);
    assert_eq!(left.keys().collect::<Vec<_>>(), ["a", "b", "c", "d"]);
    assert_eq!(
        reexports("pub use passages::{\n    Hit, PassageId as Id,\n};\npub use code::Code;"),
        BTreeMap::from([
            ("Hit".to_owned(), "passages".to_owned()),
            ("Id".to_owned(), "passages".to_owned()),
            ("Code".to_owned(), "code".to_owned()),
        ])
    );
    assert_eq!(heads("{access, links::x}::y"), ["access", "links"]);
}

/// ARCHITECTURE.md's list of the engine's calls (`Engine::{search, …}`)
/// names only methods the search library has, and every call module the
/// library has is named in the same paragraph.
#[test]
fn architecture_names_the_engine_calls_there_are() {
    let arch = include_str!("../../ARCHITECTURE.md");
    let start = arch
        .find("`Engine::{")
        .expect("ARCHITECTURE.md lists Engine::{…}");
    let list = &arch[start + "`Engine::{".len()..];
    let list = &list[..list.find('}').expect("closing brace")];
    let names: Vec<&str> = list.split(',').map(str::trim).collect();
    assert!(names.len() >= 10, "{names:?}");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("search/src");
    let mut source = String::new();
    let mut dirs = vec![root.clone()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("search/src").flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                source.push_str(&std::fs::read_to_string(&path).expect("source"));
            }
        }
    }
    for name in &names {
        assert!(
            source.contains(&format!("pub fn {name}(")),
            "ARCHITECTURE.md names Engine::{name}, which search/src does not define"
        );
    }
    let paragraph_end = arch[start..]
        .find("\n* **")
        .map_or(arch.len(), |i| start + i);
    let paragraph = &arch[start..paragraph_end];
    for module in [
        "passages/",
        "retrieve",
        "tree",
        "status",
        "grep/",
        "definitions",
        "context",
        "explain/",
    ] {
        assert!(
            paragraph.contains(&format!("`{module}`")),
            "ARCHITECTURE.md's search paragraph does not name `{module}`"
        );
        let file = root.join(module.trim_end_matches('/'));
        assert!(
            file.is_dir() || file.with_extension("rs").is_file(),
            "search/src has no {module}"
        );
    }
}

/// ARCHITECTURE.md's lists, checked the other way too: every Engine call an
/// operation makes (`serve/src/ops/`) is in its `Engine::{…}` list, and its
/// diagram names exactly the CLI subcommands the operations table offers.
#[test]
fn architecture_lists_every_call_and_subcommand_there_is() {
    let arch = include_str!("../../ARCHITECTURE.md");
    let start = arch.find("`Engine::{").expect("Engine::{…}");
    let list = &arch[start + "`Engine::{".len()..];
    let listed: BTreeSet<&str> = list[..list.find('}').expect("}")]
        .split(',')
        .map(str::trim)
        .collect();
    let ops = Path::new(env!("CARGO_MANIFEST_DIR")).join("serve/src/ops");
    let mut called = BTreeSet::new();
    for path in crate::walls::rust_files(&ops) {
        let text = std::fs::read_to_string(&path).expect("op");
        for (i, _) in text.match_indices("engine") {
            let rest = &text[i + "engine".len()..];
            let rest = rest.trim_start_matches("()").trim_start();
            let Some(call) = rest.strip_prefix('.') else {
                continue;
            };
            let name: String = call
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                .collect();
            if call[name.len()..].starts_with('(') {
                // A cited version's read is the call's other form.
                called.insert(name.trim_end_matches("_cited").to_owned());
            }
        }
    }
    for helper in ["snapshot", "open_version"] {
        called.remove(helper);
    }
    assert!(called.len() >= 8, "{called:?}");
    let missing: Vec<&String> = called
        .iter()
        .filter(|c| !listed.contains(c.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md's Engine::{{…}} lacks {missing:?}"
    );

    let from = arch.find("The CLI's ").expect("the diagram's CLI list") + "The CLI's ".len();
    let to = from + arch[from..].find(" subcommands").expect("subcommands");
    let named: BTreeSet<String> = arch[from..to]
        .replace('│', "")
        .split('/')
        .map(|s| s.split_whitespace().collect::<String>())
        .collect();
    let offered: BTreeSet<String> = cairn_serve::ops::OPERATIONS
        .iter()
        .filter_map(|op| op.meta.cli.map(str::to_owned))
        .collect();
    assert_eq!(named, offered, "ARCHITECTURE.md's CLI subcommands");
}

/// What in `text` names a crate path or a source file that does not exist:
/// each `crate::module` path (`search::access`, `serve::http::trace`,
/// `rank::scopes`), with at most one item at its end, defined or re-exported
/// in that module's files (`index::VersionBuilder`); each source file or
/// folder (`passages/focus.rs`, `grep/`).
fn nonexistent(text: &str) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let crates = ["index", "embed", "pipeline", "search", "serve"];
    let mut sources: Vec<(String, String)> = Vec::new();
    for c in crates.iter().copied().chain(["."]) {
        let src = root.join(c).join("src");
        let mut dirs = vec![src.clone()];
        while let Some(d) = dirs.pop() {
            for e in std::fs::read_dir(&d).expect("src").flatten() {
                let p = e.path();
                if p.is_dir() {
                    dirs.push(p);
                } else if p.extension().is_some_and(|x| x == "rs") {
                    let rel = p
                        .strip_prefix(&src)
                        .expect("rel")
                        .to_string_lossy()
                        .into_owned();
                    let name = match c {
                        "." => format!("cairn/{rel}"),
                        _ => format!("{c}/{rel}"),
                    };
                    sources.push((name, std::fs::read_to_string(&p).expect("read")));
                }
            }
        }
    }
    // The files of a module (`engine`: engine/mod.rs and engine/*.rs), in a crate or any.
    let files_of = |krate: Option<&str>, module: &[&str]| -> Vec<&String> {
        let rel = module.join("/");
        sources
            .iter()
            .filter(|(f, _)| krate.is_none_or(|k| f.starts_with(&format!("{k}/"))))
            .filter(|(f, _)| match rel.is_empty() {
                true => f.ends_with("/lib.rs") || f.ends_with("/main.rs"),
                false => {
                    f.ends_with(&format!("/{rel}.rs"))
                        || f.contains(&format!("/{rel}/"))
                        || f.ends_with(&format!("{rel}.rs")) && f.split('/').count() == 2
                }
            })
            .map(|(_, t)| t)
            .collect()
    };
    let names = |text: &str, name: &str| {
        text.match_indices(name).any(|(i, _)| {
            let before = text[..i].trim_end();
            let after = &text[i + name.len()..];
            !after.starts_with(|c: char| c.is_alphanumeric() || c == '_')
                && !text[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_')
                && [
                    "fn", "struct", "enum", "const", "type", "trait", "mod", "static", "{", ",",
                    "::", "use",
                ]
                .iter()
                .any(|kw| before.ends_with(kw))
        })
    };
    let mut missing = Vec::new();
    let words = text
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':' || c == '/' || c == '.'));
    for w in words {
        let w = w.trim_matches(|c: char| c == '.' || c == ':' || c == '/');
        if w.contains("::") && !w.contains('/') {
            let parts: Vec<&str> = w.split("::").collect();
            let (krate, modules) = match crates.contains(&parts[0]) {
                true => (Some(parts[0]), &parts[1..]),
                false => (None, &parts[..]),
            };
            if krate.is_none() && files_of(None, &modules[..1]).is_empty() {
                continue; // Not a path of ours (`serde::Serialize`, `Engine::search`).
            }
            let mut n = 0;
            while n < modules.len() && !files_of(krate, &modules[..=n]).is_empty() {
                n += 1;
            }
            let ok = match modules.len() - n {
                0 => true,
                1 => files_of(krate, &modules[..n])
                    .iter()
                    .any(|t| names(t, modules[n])),
                _ => false,
            };
            if !ok {
                missing.push(w.to_owned());
            }
        } else if (w.ends_with(".rs") || w.ends_with('/')) && w.contains('/') && !w.contains("//") {
            let path = w.trim_end_matches('/');
            let found = sources
                .iter()
                .any(|(f, _)| f.ends_with(&format!("/{path}")) || f.contains(&format!("/{path}/")))
                || root.join(path).exists();
            if !found {
                missing.push(w.to_owned());
            }
        }
    }
    missing.sort();
    missing.dedup();
    missing
}

/// Everything ARCHITECTURE.md names exists (and the check finds names
/// that do not: the review's four).
#[test]
fn architecture_names_only_what_exists() {
    let missing = nonexistent(include_str!("../../ARCHITECTURE.md"));
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md names what does not exist: {missing:?}"
    );
    let stale = nonexistent(
        "`search::engine::search`, `engine::focus`, `commands::hint`, search/src/nothing.rs",
    );
    assert_eq!(
        stale,
        [
            "commands::hint",
            "engine::focus",
            "search/src/nothing.rs",
            "search::engine::search"
        ]
    );
}
