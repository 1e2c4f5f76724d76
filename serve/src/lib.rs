//! cairn's connectors: the read-only HTTP API ([`http`], actix-web) and the
//! MCP server ([`mcp`], rmcp) over the search library, both generated from
//! one table of operations ([`ops`], one file each), as the CLI is;
//! plus what serving needs around them: how a server is configured
//! ([`config`], defaults and limits in [`limits`]) and started ([`server`]),
//! credentials ([`auth`], OAuth access tokens in [`oauth`]) and web
//! sign-in sessions ([`session`]), the
//! hot-swapped live index ([`live`]), the bounded CPU pool ([`pool`]) and
//! what each caller's work on it costs ([`costs`]), problem+json errors
//! ([`problem`]), metrics and per-caller rate limits;
//! and the web page for people ([`ui`]), rendered from the same operations.
//!
//! Imports point one way, from the top: `server` → `ui` → `http` → `mcp` →
//! `ops` → (`pool`, `costs` → `ratelimit`, `problem`); `live` → `ops`; `config`, `session` →
//! `auth` → `oauth` → `limits`.
//!
//! Connectors never read index files: every answer comes from
//! `cairn_search::Engine`. Only the `cairn` binary depends on this crate.

pub mod auth;
pub mod config;
pub mod costs;
pub mod http;
pub mod limits;
pub mod live;
pub mod mcp;
pub mod metrics;
pub mod oauth;
pub mod ops;
pub mod pool;
pub mod problem;
pub mod ratelimit;
pub mod server;
pub mod session;
pub mod ui;

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};
    use std::path::Path;

    /// The top-level modules each module's code (not its comments or tests) names with `crate::`.
    fn imports(dir: &Path, top: Option<&str>, graph: &mut BTreeMap<String, BTreeSet<String>>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = path
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or("")
                .to_owned();
            if path.is_dir() {
                imports(&path, Some(top.unwrap_or(&name)), graph);
                continue;
            }
            let module = top.unwrap_or(&name).to_owned();
            if module == "lib" || path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let source = std::fs::read_to_string(&path).unwrap_or_default();
            let code = source.split("#[cfg(test)]").next().unwrap_or("");
            let deps = graph.entry(module.clone()).or_default();
            for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
                for (i, _) in line.match_indices("crate::") {
                    let rest = &line[i + "crate::".len()..];
                    let dep: String = rest
                        .chars()
                        .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                        .collect();
                    if !dep.is_empty() && dep != module {
                        deps.insert(dep);
                    }
                }
            }
        }
    }

    /// ARCHITECTURE.md's rule: imports point one way, so serve's modules form no circle.
    #[test]
    fn the_modules_import_one_way() {
        let mut graph = BTreeMap::new();
        imports(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
            None,
            &mut graph,
        );
        assert!(
            graph.contains_key("http") && graph["http"].contains("ops"),
            "{graph:?}"
        );
        // Kahn's algorithm: what is left after peeling modules with no imports is a circle.
        let mut left = graph.clone();
        while let Some(leaf) = left
            .iter()
            .find(|(_, deps)| deps.iter().all(|d| !left.contains_key(d)))
            .map(|(m, _)| m.clone())
        {
            left.remove(&leaf);
        }
        assert!(left.is_empty(), "modules importing each other: {left:?}");
    }
}
