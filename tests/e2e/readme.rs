//! Every command in README.md and the reference it links (docs/OPERATIONS.md,
//! docs/API.md, docs/CONFIG.md), run as written, in that order, in one fixture
//! sandbox: `cairn` commands with the built binary, `curl` against the
//! `cairn serve` the docs start, the MCP snippets with a real MCP client.
//! Commands that are `.ci/run`'s job (fetching the model, the test suite) must
//! appear there.

use crate::fixtures::commit;
use git2::{Repository, RepositoryInitOptions};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The documents whose commands run, in the order they run: the README
/// builds the first index and starts a server, the later ones use both.
const DOCS: [(&str, &str); 4] = [
    ("README.md", include_str!("../../README.md")),
    (
        "docs/OPERATIONS.md",
        include_str!("../../docs/OPERATIONS.md"),
    ),
    ("docs/API.md", include_str!("../../docs/API.md")),
    ("docs/CONFIG.md", include_str!("../../docs/CONFIG.md")),
];
const CI_RUN: &str = include_str!("../../.ci/run");
const TEST_SH: &str = include_str!("../../scripts/test.sh");
const GOLDEN: &str = include_str!("../../golden/queries.yaml");
const HELDOUT: &str = include_str!("../../golden/heldout.yaml");
const RANDOM: &str = include_str!("../../golden/random.yaml");
const ERRORS: &str = include_str!("../../golden/errors.yaml");
const USERS: &str = include_str!("../../golden/users.yaml");
const REWRITES: &str = include_str!("../../golden/users-rewrites.yaml");

/// Commands `.ci/run` (or the test script it runs) runs instead of this test.
const CI_COMMANDS: [&str; 2] = ["scripts/test.sh", "scripts/fetch-model.sh"];
/// Plain shell tools the docs may use around cairn.
const SHELL_TOOLS: [&str; 6] = ["cd", "ls", "sha256sum", "echo", "cat", "mv"];

/// The fenced blocks of `lang` in `doc`.
fn blocks(doc: &str, lang: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current: Option<String> = None;
    for line in doc.lines() {
        match (&mut current, line.trim_start()) {
            (None, l) if l == format!("```{lang}") => current = Some(String::new()),
            (Some(_), "```") => out.extend(current.take()),
            (Some(b), _) => {
                b.push_str(line);
                b.push('\n');
            }
            _ => {}
        }
    }
    out
}

/// The fenced blocks of `lang` in every document of [`DOCS`], in order, each
/// with the document it comes from.
fn all_blocks(lang: &str) -> Vec<(&'static str, String)> {
    DOCS.iter()
        .flat_map(|(name, doc)| blocks(doc, lang).into_iter().map(move |b| (*name, b)))
        .collect()
}

/// Splits `a && b` outside quotes.
fn split_and(line: &str) -> Vec<String> {
    let (mut parts, mut cur, mut quote) = (Vec::new(), String::new(), None::<char>);
    let chars: Vec<char> = line.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match quote {
            Some(q) if c == q => quote = None,
            None if c == '\'' || c == '"' => quote = Some(c),
            None if c == '&' && chars.get(i + 1) == Some(&'&') => {
                parts.push(cur.trim().to_owned());
                cur.clear();
                i += 2;
                continue;
            }
            _ => {}
        }
        cur.push(c);
        i += 1;
    }
    parts.push(cur.trim().to_owned());
    parts.retain(|p| !p.is_empty());
    parts
}

fn init_repo(path: &Path, files: &[(&str, Vec<u8>)]) {
    let mut opts = RepositoryInitOptions::new();
    opts.initial_head("main");
    let repo = Repository::init_opts(path, &opts).expect("init");
    commit(&repo, files, "first");
}

/// A sandbox laid out like a checkout with `../shared/corpus` beside it.
struct Sandbox {
    _dir: tempfile::TempDir,
    project: PathBuf,
    bin: PathBuf,
    model: PathBuf,
    port: u16,
}

impl Sandbox {
    fn new() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().to_owned();
        let project = root.join("project");
        let ensemble: String = (1..=600)
            .map(|i| match i {
                1 => "class EnsembleSampler:\n".to_owned(),
                2 => "    \"\"\"An ensemble MCMC sampler; pass pool=Pool() to run in parallel.\"\"\"\n".to_owned(),
                560 => "    @property\n".to_owned(),
                561 => "    def chain(self):\n".to_owned(),
                562 => "        \"\"\"Deprecated: use get_chain().\"\"\"\n".to_owned(),
                _ => format!("    # line {i}: walkers move in parallel\n"),
            })
            .collect();
        init_repo(
            &root.join("repos/emcee"),
            &[
                ("README.md", b"# emcee\n\nThe MCMC hammer: ensemble sampling.\n".to_vec()),
                ("src/emcee/ensemble.py", ensemble.into_bytes()),
                (
                    "docs/tutorials/parallel.md",
                    b"# Parallelization\n\nUse multiprocessing Pool with EnsembleSampler(pool=pool).\n".to_vec(),
                ),
                ("docs/tutorials/parallel.ipynb", crate::fixtures::NOTEBOOK.as_bytes().to_vec()),
            ],
        );
        let readme: String =
            std::iter::once("# MulensModel\n\nMicrolensing modelling.\n".to_owned())
                .chain((4..=30).map(|i| format!("Line {i} about PSPL models and parallax fits.\n")))
                .collect();
        init_repo(
            &root.join("repos/MulensModel"),
            &[
                ("README.md", readme.into_bytes()),
                (
                    "source/MulensModel/modelparameters.py",
                    b"class ModelParameters:\n    \"\"\"PSPL parameter names: t_0, u_0, t_E; parallax pi_E_N, pi_E_E.\"\"\"\n\n    def __init__(self, parameters):\n        self.parameters = parameters\n".to_vec(),
                ),
            ],
        );
        let config = format!(
            "general_tools:\n  - name: emcee\n    url: {}\n    web_url: https://github.com/dfm/emcee\nmicrolensing_tools:\n  - name: MulensModel\n    url: {}\n    web_url: https://github.com/rpoleski/MulensModel\n",
            root.join("repos/emcee").display(),
            root.join("repos/MulensModel").display()
        );
        for p in [
            root.join("shared/corpus/repositories.yml"),
            project.join("config/repositories.yml"),
        ] {
            std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
            std::fs::write(&p, &config).expect("write config");
        }
        std::fs::create_dir_all(project.join("golden")).expect("mkdir");
        std::fs::write(project.join("golden/queries.yaml"), GOLDEN).expect("golden");
        std::fs::write(project.join("golden/heldout.yaml"), HELDOUT).expect("held-out");
        std::fs::write(project.join("golden/random.yaml"), RANDOM).expect("random");
        std::fs::write(project.join("golden/errors.yaml"), ERRORS).expect("errors");
        std::fs::write(project.join("golden/users.yaml"), USERS).expect("users");
        std::fs::write(project.join("golden/users-rewrites.yaml"), REWRITES).expect("rewrites");
        let bin = root.join("bin");
        std::fs::create_dir_all(&bin).expect("mkdir");
        #[cfg(unix)]
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_cairn"), bin.join("cairn")).expect("link");
        let model = root.join("model");
        cairn_embed::fixtures::write_tiny_bert(&model).expect("model");
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .expect("port");
        Self {
            _dir: dir,
            project,
            bin,
            model,
            port,
        }
    }

    /// Rewrites one documented command into what the sandbox runs; None when `.ci/run` runs it.
    fn rewrite(&self, cmd: &str) -> Result<Option<String>, String> {
        if CI_COMMANDS.contains(&cmd) {
            return if CI_RUN.contains(cmd) || TEST_SH.contains(cmd) {
                Ok(None)
            } else {
                Err(format!("`{cmd}` is neither run here nor by .ci/run"))
            };
        }
        let cmd = cmd
            .replace("cargo run --release --", "cairn")
            .replace("127.0.0.1:8080", &format!("127.0.0.1:{}", self.port));
        let first = cmd.split_whitespace().next().unwrap_or("");
        let export_cairn = first == "export" && cmd.contains("$(cairn ");
        let run = match first {
            "cairn" if cmd.starts_with("cairn serve") => {
                format!("stop_server; {cmd} >> serve.log 2>&1 & echo $! > server.pid; wait_ready")
            }
            // An MCP client drives it (below); here it only has to parse.
            "cairn" if cmd.starts_with("cairn mcp") => format!("{cmd} --help > /dev/null"),
            "cairn" => cmd.clone(),
            "curl" => cmd.replacen("curl ", "curl --fail-with-body --max-time 30 ", 1),
            _ if export_cairn || SHELL_TOOLS.contains(&first) => cmd.clone(),
            _ => return Err(format!("command not covered by a test: `{cmd}`")),
        };
        Ok(Some(run))
    }

    /// Runs one block of `doc` as a bash script; variables it exports carry over.
    fn run_block(&self, doc: &str, block: &str) -> Result<(), String> {
        let mut script = format!(
            "set -euo pipefail\n[ -f .env ] && source .env\nstop_server() {{ if [ -f server.pid ]; then kill $(cat server.pid) 2>/dev/null || true; while curl -s http://127.0.0.1:{p}/ready >/dev/null 2>&1; do sleep 0.1; done; rm -f server.pid; fi; }}\nwait_ready() {{ for _ in $(seq 300); do curl -fs http://127.0.0.1:{p}/ready >/dev/null 2>&1 && return 0; sleep 0.1; done; cat serve.log; return 1; }}\n",
            p = self.port
        );
        let mut joined = String::new();
        for line in block.lines() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            joined.push_str(line.trim_end_matches('\\'));
            if line.ends_with('\\') {
                joined.push(' ');
                continue;
            }
            for part in split_and(&joined) {
                if let Some(run) = self.rewrite(&part).map_err(|e| format!("{doc}: {e}"))? {
                    script.push_str(&format!("echo '>>> {}'\n{run}\n", part.replace('\'', "")));
                }
            }
            joined.clear();
        }
        script.push_str("export -p | grep -E ' (TOKEN)=' > .env || true\n");
        let path = self.project.join(".readme-block.sh");
        std::fs::write(&path, script).expect("write script");
        let out = Command::new("bash")
            .arg(&path)
            .current_dir(&self.project)
            .env(
                "PATH",
                format!(
                    "{}:{}",
                    self.bin.display(),
                    std::env::var("PATH").unwrap_or_default()
                ),
            )
            .env("CAIRN_MODEL_DIR", &self.model)
            .env("CAIRN_LOG", "warn")
            .env("CAIRN_BIND", format!("127.0.0.1:{}", self.port))
            .env_remove("CAIRN_INDEX")
            .env_remove("CAIRN_TOKENS")
            .output()
            .expect("bash");
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "{doc} block failed:\n{block}\n--- stdout\n{}\n--- stderr\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ))
        }
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        if let Ok(pid) = std::fs::read_to_string(self.project.join("server.pid")) {
            let _ = Command::new("kill").arg(pid.trim()).status();
        }
    }
}

#[test]
fn every_readme_command_runs_as_written() {
    let sb = Sandbox::new();
    std::fs::create_dir_all(&sb.project).expect("project");
    // CONFIG.md has no command blocks (its commands are inline); the other
    // three must keep theirs.
    for (name, doc) in DOCS.iter().filter(|(n, _)| *n != "docs/CONFIG.md") {
        assert!(!blocks(doc, "sh").is_empty(), "{name} has no sh block");
    }
    let sh = all_blocks("sh");
    assert!(sh.len() >= 12, "the docs have {} sh blocks", sh.len());
    for (doc, block) in &sh {
        if let Err(e) = sb.run_block(doc, block) {
            panic!("{e}");
        }
    }

    // The MCP snippets (stdio): the JSON configs' command and args, and the
    // `cairn mcp` line, each driven by a real MCP client.
    let index = sb.project.join(".cairn/index");
    let mut launches: Vec<Vec<String>> = Vec::new();
    for (doc, json) in all_blocks("json") {
        let v: serde_json::Value =
            serde_json::from_str(&json).unwrap_or_else(|e| panic!("{doc}: JSON block: {e}"));
        let servers = v
            .get("mcpServers")
            .or_else(|| v.get("servers"))
            .expect("servers");
        for (_, s) in servers.as_object().expect("object") {
            let mut argv = vec![s["command"].as_str().expect("command").to_owned()];
            for a in s["args"].as_array().expect("args") {
                let a = a.as_str().expect("arg");
                // The snippets' placeholders for where the user keeps the index.
                let a = a
                    .replace("/srv/cairn/index", &index.display().to_string())
                    .replace("${workspaceFolder}", &sb.project.display().to_string());
                argv.push(a);
            }
            launches.push(argv);
        }
    }
    assert!(launches.len() >= 2, "Claude Desktop and VS Code snippets");
    launches.push(vec![
        "cairn".into(),
        "mcp".into(),
        "--index".into(),
        ".cairn/index".into(),
    ]);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    for argv in launches {
        assert_eq!(argv[0], "cairn", "{argv:?}");
        rt.block_on(async {
            let cmd = tokio::process::Command::new(sb.bin.join("cairn")).configure(|c| {
                c.args(&argv[1..])
                    .current_dir(&sb.project)
                    .env("CAIRN_MODEL_DIR", &sb.model)
                    .env("CAIRN_LOG", "error");
            });
            let client =
                ().serve(TokioChildProcess::new(cmd).expect("spawn"))
                    .await
                    .unwrap_or_else(|e| panic!("{argv:?}: {e}"));
            let tools = client.list_all_tools().await.expect("tools/list");
            assert!(tools.iter().any(|t| t.name == "search"), "{argv:?}");
            let args = serde_json::json!({"query": "emcee multiprocessing pool"});
            let serde_json::Value::Object(args) = args else {
                panic!("arguments are an object")
            };
            let r = client
                .call_tool(CallToolRequestParams::new("search").with_arguments(args))
                .await
                .expect("search");
            assert_eq!(r.is_error, Some(false), "{argv:?}");
            client.cancel().await.expect("close");
        });
    }
}

#[test]
fn commands_split_outside_quotes() {
    assert_eq!(
        split_and("a && b 'c && d' && e"),
        vec!["a", "b 'c && d'", "e"]
    );
}

/// docs/API.md names the CLI's operation subcommands in one sentence: it
/// names every one the operations table offers the CLI, and no other.
#[test]
fn the_api_page_names_every_cli_operation() {
    let api = include_str!("../../docs/API.md");
    let end = api
        .find("are the server's\noperations themselves")
        .expect("API.md's sentence naming the CLI's operations");
    let start = api[..end].rfind("\n\n").map_or(0, |i| i + 2);
    let sentence = &api[start..end];
    let named: std::collections::BTreeSet<&str> = sentence
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|w| w.chars().all(|c| c.is_ascii_lowercase() || c == '_'))
        .collect();
    let offered: std::collections::BTreeSet<&str> = cairn_serve::ops::OPERATIONS
        .iter()
        .filter_map(|op| op.meta.cli)
        .collect();
    assert_eq!(named, offered, "docs/API.md: {sentence:?}");
}

/// docs/API.md's endpoint table lists every route of the operations table,
/// method and path, and nothing else but the server's own routes.
#[test]
fn the_api_table_lists_every_route() {
    use cairn_serve::ops::{Method, OPERATIONS};
    use std::collections::BTreeSet;
    let api = include_str!("../../docs/API.md");
    let mut listed = BTreeSet::new();
    for row in api.lines().filter(|l| l.starts_with("| `")) {
        let first = row.split('|').nth(1).unwrap_or("");
        for cell in first.split('`').skip(1).step_by(2) {
            if let Some((method, path)) = cell.split_once(' ')
                && matches!(method, "GET" | "POST")
            {
                listed.insert(format!("{method} {path}"));
            }
        }
    }
    let routes: BTreeSet<String> = OPERATIONS
        .iter()
        .flat_map(|op| op.meta.routes)
        .map(|r| {
            let method = match r.method {
                Method::Get => "GET",
                Method::Post => "POST",
            };
            format!("{method} {}", r.path)
        })
        .collect();
    let missing: Vec<_> = routes.difference(&listed).collect();
    assert!(missing.is_empty(), "docs/API.md's table lacks {missing:?}");
    // The server's own routes, which are not operations.
    let own = [
        "GET /metrics",
        "GET /openapi.json",
        "GET /.well-known/oauth-protected-resource",
        "POST /v1/chat/completions",
    ];
    let unknown: Vec<_> = listed
        .iter()
        .filter(|r| !routes.contains(*r) && !own.contains(&r.as_str()))
        .collect();
    assert!(
        unknown.is_empty(),
        "docs/API.md's table lists routes no operation has: {unknown:?}"
    );
}

/// The docs are current-state pages: no heading outside `docs/log/` names a
/// date, a session or an issue (history goes to the log), BENCHMARKS.md
/// holds at most 300 lines of today's figures, and the README at most 250,
/// with a search among its first 60.
#[test]
fn docs_are_current_state_pages() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut pages: Vec<std::path::PathBuf> = ["README.md", "ARCHITECTURE.md"]
        .iter()
        .map(|p| root.join(p))
        .collect();
    for dir in ["docs", "skills/cairn"] {
        let listed = std::fs::read_dir(root.join(dir)).expect("docs folder");
        pages.extend(
            listed
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "md")),
        );
    }
    let dated = |heading: &str| {
        let words: Vec<&str> = heading.split_whitespace().collect();
        let date = words.iter().any(|w| {
            let w = w.trim_matches(|c: char| !c.is_ascii_digit());
            w.len() == 10
                && w.chars().enumerate().all(|(i, c)| {
                    if i == 4 || i == 7 {
                        c == '-'
                    } else {
                        c.is_ascii_digit()
                    }
                })
        });
        let numbered = words.windows(2).any(|w| {
            ["session", "issue"].contains(&w[0].to_lowercase().trim_start_matches('('))
                && w[1].starts_with(|c: char| c.is_ascii_digit())
        });
        date || numbered
    };
    let mut found = Vec::new();
    for page in &pages {
        let text = std::fs::read_to_string(page).expect("read");
        let mut fenced = false;
        for (i, line) in text.lines().enumerate() {
            if line.trim_start().starts_with("```") {
                fenced = !fenced;
            }
            if !fenced && line.starts_with('#') && dated(line) {
                found.push(format!("{}:{}: {line}", page.display(), i + 1));
            }
        }
    }
    assert!(
        found.is_empty(),
        "dated headings outside docs/log/:\n{}",
        found.join("\n")
    );
    let lines = |rel: &str| {
        std::fs::read_to_string(root.join(rel))
            .expect("read")
            .lines()
            .count()
    };
    assert!(
        lines("docs/BENCHMARKS.md") <= 300,
        "BENCHMARKS.md: {} lines",
        lines("docs/BENCHMARKS.md")
    );
    assert!(
        lines("README.md") <= 250,
        "README.md: {} lines",
        lines("README.md")
    );
    let head: Vec<&str> = DOCS[0].1.lines().take(60).collect();
    assert!(
        head.iter()
            .any(|l| l.contains("-- search \"") || l.starts_with("cairn search")),
        "no search among the README's first 60 lines"
    );
    assert!(dated("### Fewer pages (issue 49, second sitting)") && dated("## Run of 2026-11-29"));
    assert!(!dated("## How cost grows: 1×, 10×, 100×"));
}
