//! The walls between files (issue 59): no glob import outside tests (a
//! folder that is one namespace is not a module), and no two files of a
//! crate that import each other, directly or around a circle. A file's
//! imports are the crate paths its code names (`crate::`, `super::`,
//! `self::`, or a child module's name), each resolved to the file that
//! defines the item, through the re-exports on the way; a module re-exporting
//! its own child's items (`pub use child::Item;`) is its interface, not an
//! import.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The crates' source folders, relative to the workspace root.
const CRATES: [&str; 6] = [
    "src",
    "index/src",
    "embed/src",
    "pipeline/src",
    "search/src",
    "serve/src",
];

/// The code of a source file before its tests, without comments.
fn code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let before_tests = text.split("#[cfg(test)]").next().unwrap_or("").to_owned();
    before_tests
        .lines()
        .map(|l| match l.find("//") {
            // `//` inside a string (a URL) is rare in imports; a comment's rest goes.
            Some(i) if !l[..i].contains('"') => &l[..i],
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every `.rs` file under `dir` (none when it is missing), sorted.
pub(crate) fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The module path of a crate file (`["rank", "fusion"]` for
/// `src/rank/fusion.rs`; `[]` for lib.rs or main.rs).
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap_or(file);
    let mut parts: Vec<String> = rel
        .iter()
        .map(|s| s.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap_or_default();
    let stem = last.trim_end_matches(".rs");
    if !matches!(stem, "mod" | "lib" | "main") || !parts.is_empty() && stem != "mod" {
        parts.push(stem.to_owned());
    }
    parts
}

/// Expands one `use` tree (`a::{b, c::{d as e, self}}`) into full paths
/// (an alias is left out: the path names what is imported).
fn expand(tree: &str) -> Vec<Vec<String>> {
    fn go(prefix: &[String], t: &str, out: &mut Vec<Vec<String>>) {
        let t = t.trim();
        if t.is_empty() {
            return;
        }
        if let Some(i) = t.find('{')
            && t.ends_with('}')
        {
            let mut p = prefix.to_vec();
            p.extend(
                t[..i]
                    .trim_end_matches(':')
                    .split("::")
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned),
            );
            let inner = &t[i + 1..t.len() - 1];
            let (mut depth, mut start) = (0, 0);
            for (j, c) in inner.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        go(&p, &inner[start..j], out);
                        start = j + 1;
                    }
                    _ => {}
                }
            }
            go(&p, &inner[start..], out);
            return;
        }
        let t = t.split(" as ").next().unwrap_or(t);
        let mut p = prefix.to_vec();
        p.extend(
            t.split("::")
                .map(str::trim)
                .filter(|s| *s != "self" && !s.is_empty())
                .map(str::to_owned),
        );
        out.push(p);
    }
    let tree = tree.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out = Vec::new();
    go(&[], &tree, &mut out);
    out
}

/// The byte ranges of a file's inline modules (`mod imp { … }`).
fn inline_modules(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    // A macro's body is expanded where the macro is used: like an inline module.
    let openers = text
        .match_indices("mod ")
        .map(|(i, _)| (i, 4))
        .chain(text.match_indices("macro_rules! ").map(|(i, _)| (i, 13)));
    for (i, skip) in openers {
        let rest = &text[i + skip..];
        let name_len = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let after = rest[name_len..].trim_start();
        if name_len == 0 || !after.starts_with('{') {
            continue;
        }
        let open = i + skip + name_len + (rest[name_len..].len() - after.len());
        let mut depth = 0;
        for (j, c) in text[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        out.push((open, open + j));
                        break;
                    }
                }
                _ => {}
            }
        }
    }
    out
}

/// One crate: each file's module path, its child modules, its `use`
/// statements (pub or not) and the items it defines.
struct Crate {
    files: BTreeMap<Vec<String>, PathBuf>,
    uses: BTreeMap<Vec<String>, Vec<(bool, Vec<String>)>>,
    defines: BTreeMap<Vec<String>, BTreeSet<String>>,
    inline: BTreeMap<Vec<String>, Vec<Vec<String>>>,
}

fn read_crate(src: &Path) -> Crate {
    let mut c = Crate {
        files: BTreeMap::new(),
        uses: BTreeMap::new(),
        defines: BTreeMap::new(),
        inline: BTreeMap::new(),
    };
    for file in rust_files(src) {
        let name = file.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name == "tests.rs" || file.components().any(|p| p.as_os_str() == "bin") {
            continue;
        }
        let module = module_of(src, &file);
        let text = code(&file);
        let mut uses = Vec::new();
        for stmt in text.split(';') {
            let s = stmt.trim();
            let (public, rest) = match s.find("use ") {
                Some(i) if s[..i].trim().is_empty() => (false, &s[i + 4..]),
                Some(i) if s[..i].trim().starts_with("pub") && !s[..i].contains('{') => {
                    (true, &s[i + 4..])
                }
                _ => continue,
            };
            for p in expand(rest) {
                uses.push((public, p));
            }
        }
        let defines: BTreeSet<String> = text
            .lines()
            .filter_map(|l| {
                let words: Vec<&str> = l.split_whitespace().collect();
                let kw = words.iter().position(|w| {
                    matches!(
                        *w,
                        "fn" | "struct" | "enum" | "const" | "type" | "trait" | "static" | "mod"
                    )
                })?;
                let name = words.get(kw + 1)?;
                Some(
                    name.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                        .next()?
                        .to_owned(),
                )
            })
            .collect();
        let mut inline = Vec::new();
        let nested = inline_modules(&text);
        for prefix in ["crate::", "super::", "self::"] {
            for (i, _) in text.match_indices(prefix) {
                // A path inside `pub(in crate::x)` is a visibility, not an import.
                let before = &text[..i];
                if before.ends_with(|ch: char| ch.is_alphanumeric() || ch == '_' || ch == ':')
                    || before.ends_with("(in ")
                {
                    continue;
                }
                let path: String = text[i..]
                    .chars()
                    .take_while(|ch| ch.is_alphanumeric() || *ch == '_' || *ch == ':')
                    .collect();
                // Inside an inline `mod x { … }`, `self` and the first
                // `super`s name that module or this file: no other file.
                let depth = nested.iter().filter(|(a, b)| (*a..*b).contains(&i)).count();
                let supers = path.matches("super::").count();
                if depth > 0 && (prefix != "crate::" && supers <= depth) {
                    continue;
                }
                let path = path.replacen("super::", "", depth.min(supers));
                // `use super::{a, b}` is read by its use statement.
                if path.trim_end_matches(':').split("::").count() < 2 {
                    continue;
                }
                inline.push(
                    path.split("::")
                        .filter(|s| !s.is_empty())
                        .map(str::to_owned)
                        .collect(),
                );
            }
        }
        c.files.insert(module.clone(), file);
        c.uses.insert(module.clone(), uses);
        c.defines.insert(module.clone(), defines);
        c.inline.insert(module, inline);
    }
    c
}

impl Crate {
    /// `path` as written in `module`, made absolute (None: another crate's).
    fn absolute(&self, module: &[String], path: &[String]) -> Option<Vec<String>> {
        let mut at: Vec<String> = module.to_vec();
        let mut rest = path;
        match rest.first().map(String::as_str) {
            Some("crate") => {
                at.clear();
                rest = &rest[1..];
            }
            Some("self") => rest = &rest[1..],
            Some("super") => {
                while rest.first().is_some_and(|s| s == "super") {
                    at.pop()?;
                    rest = &rest[1..];
                }
            }
            Some(first) => {
                let mut child = module.to_vec();
                child.push(first.to_owned());
                if !self.files.contains_key(&child) {
                    return None;
                }
            }
            None => return None,
        }
        at.extend(rest.iter().cloned());
        Some(at)
    }

    /// The file that defines what the absolute `path` names, following
    /// re-exports (at most a few steps: a re-export chain is short).
    fn file_of(&self, path: &[String], depth: usize) -> Option<Vec<String>> {
        // The longest prefix that is a module; the next segment is an item in it.
        let mut module: Vec<String> = Vec::new();
        let mut i = 0;
        while i < path.len() {
            let mut next = module.clone();
            next.push(path[i].clone());
            if !self.files.contains_key(&next) {
                break;
            }
            module = next;
            i += 1;
        }
        let Some(item) = path.get(i) else {
            return Some(module);
        };
        if depth > 0
            && !self.defines.get(&module).is_some_and(|d| d.contains(item))
            && let Some((_, target)) = self.uses.get(&module).and_then(|u| {
                u.iter()
                    .find(|(_, p)| p.last() == Some(item) && p.len() > 1)
            })
            && let Some(abs) = self.absolute(&module, target)
        {
            return self.file_of(&abs, depth - 1).or(Some(module));
        }
        Some(module)
    }

    /// Each file's imports, as files (module paths).
    fn graph(&self) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
        let mut g: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
        for (module, uses) in &self.uses {
            let deps = g.entry(module.clone()).or_default();
            let is_child = |p: &[String]| {
                p.len() >= 2 && p.len() > module.len() && p[..module.len()] == module[..]
            };
            let inline = self.inline.get(module).into_iter().flatten();
            let written = uses
                .iter()
                .map(|(public, p)| (*public, p))
                .chain(inline.map(|p| (false, p)));
            for (public, p) in written {
                let Some(abs) = self.absolute(module, p) else {
                    continue;
                };
                // A module's interface: re-exporting its own child's items.
                if public && is_child(&abs) {
                    continue;
                }
                if let Some(file) = self.file_of(&abs, 4)
                    && file != *module
                    && !(module.len() < file.len() && file[..module.len()] == module[..] && public)
                {
                    if std::env::var_os("CAIRN_WALLS_DEBUG").is_some() {
                        eprintln!("{module:?} -> {file:?} by {p:?}");
                    }
                    deps.insert(file);
                }
            }
        }
        g
    }
}

/// The files that import each other, each circle once, as `a → b → a`.
fn circles(g: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Vec<String> {
    let name = |m: &Vec<String>| match m.is_empty() {
        true => "lib".to_owned(),
        false => m.join("::"),
    };
    let mut found = BTreeSet::new();
    for start in g.keys() {
        // A path back to `start` from what it imports, breadth first.
        let mut back: BTreeMap<Vec<String>, Vec<String>> = BTreeMap::new();
        let mut queue: Vec<Vec<String>> = g[start].iter().cloned().collect();
        for q in &queue {
            back.insert(q.clone(), start.clone());
        }
        let mut i = 0;
        while i < queue.len() {
            let at = queue[i].clone();
            i += 1;
            if at == *start {
                let mut cycle = vec![name(start)];
                let mut cur = back[start].clone();
                while cur != *start {
                    cycle.push(name(&cur));
                    cur = back[&cur].clone();
                }
                cycle.push(name(start));
                cycle.reverse();
                let mut key = cycle[..cycle.len() - 1].to_vec();
                key.sort();
                if found.insert(key.join(",")) {
                    found.insert(format!("= {}", cycle.join(" → ")));
                }
                break;
            }
            for next in g.get(&at).into_iter().flatten() {
                if !back.contains_key(next) {
                    back.insert(next.clone(), at.clone());
                    queue.push(next.clone());
                }
            }
        }
    }
    found
        .into_iter()
        .filter_map(|s| s.strip_prefix("= ").map(str::to_owned))
        .collect()
}

#[test]
fn no_file_imports_a_file_that_imports_it_back() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut all = Vec::new();
    for dir in CRATES {
        let krate = read_crate(&root.join(dir));
        let g = krate.graph();
        // The reading works: a known import is seen.
        if dir == "search/src" {
            let passages_run = vec!["passages".to_owned(), "run".to_owned()];
            assert!(
                g[&passages_run].contains(&vec!["access".to_owned()]),
                "{:?}",
                g[&passages_run]
            );
        }
        all.extend(circles(&g).into_iter().map(|c| format!("{dir}: {c}")));
    }
    assert!(
        all.is_empty(),
        "files importing each other:\n{}",
        all.join("\n")
    );
}

/// No glob import of the crate's own modules outside tests (`use super::*`,
/// `pub use child::*`): each file names what it takes and what it offers.
/// Other crates' globs (`std::arch::x86_64::*`, a prelude) are theirs to ask.
#[test]
fn no_glob_import_outside_tests() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut found = Vec::new();
    for dir in CRATES {
        for file in rust_files(&root.join(dir)) {
            if file.file_name().is_some_and(|n| n == "tests.rs") {
                continue;
            }
            let text = code(&file);
            let children: BTreeSet<&str> = text
                .lines()
                .filter_map(|l| {
                    let l = l.trim().trim_end_matches(';');
                    let name = l.rsplit("mod ").next()?;
                    (l.contains("mod ") && !l.contains('{')).then_some(name.trim())
                })
                .collect();
            for (i, line) in text.lines().enumerate() {
                let l = line.trim();
                let Some((_, path)) = l
                    .split_once("use ")
                    .filter(|(v, _)| v.is_empty() || v.starts_with("pub"))
                else {
                    continue;
                };
                let first = path.split("::").next().unwrap_or("").trim();
                let local = ["super", "self", "crate"].contains(&first) || children.contains(first);
                if path.contains("::*") && local {
                    found.push(format!("{}:{}: {l}", file.display(), i + 1));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "glob imports outside tests:\n{}",
        found.join("\n")
    );
}

#[test]
fn use_trees_expand_and_circles_are_found() {
    assert_eq!(
        expand("super::{a, b::{c as d, self}}"),
        [
            vec!["super", "a"],
            vec!["super", "b", "c"],
            vec!["super", "b"]
        ]
    );
    let m = |s: &str| -> Vec<String> { s.split("::").map(str::to_owned).collect() };
    let g: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = [
        (m("a"), BTreeSet::from([m("b")])),
        (m("b"), BTreeSet::from([m("c")])),
        (m("c"), BTreeSet::from([m("a")])),
        (m("d"), BTreeSet::from([m("a")])),
    ]
    .into_iter()
    .collect();
    assert_eq!(circles(&g), ["a → b → c → a"]);
}

/// Errors live in their own files, not in a crate's root: `error.rs`
/// (the search library's and the embedder's, the builder's and its config's)
/// is imported by the files that fail that way, and the crate root only
/// re-exports it, so no file takes its errors back up from the root.
#[test]
fn errors_live_in_their_own_files() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for file in [
        "search/src/error.rs",
        "embed/src/error.rs",
        "pipeline/src/build/error.rs",
        "pipeline/src/config/error.rs",
    ] {
        assert!(root.join(file).is_file(), "{file}");
    }
    let mut up = Vec::new();
    for dir in ["search/src", "embed/src"] {
        for file in rust_files(&root.join(dir)) {
            for (i, line) in code(&file).lines().enumerate() {
                let l = line.trim();
                let from_root = ["crate::SearchError", "crate::EmbedError", "crate::invalid("]
                    .iter()
                    .any(|p| l.contains(p))
                    || (l.starts_with("use crate::{")
                        && ["SearchError", "EmbedError", " invalid"]
                            .iter()
                            .any(|n| l.contains(n)));
                if from_root {
                    up.push(format!("{}:{}: {l}", file.display(), i + 1));
                }
            }
        }
    }
    assert!(
        up.is_empty(),
        "errors taken from the crate root:\n{}",
        up.join("\n")
    );
}
