//! `cairn setup` (issue 61) for each client, against a temporary home:
//! what it writes is parsed with the format's own parser and checked
//! against the shape the client documents; a second run changes nothing;
//! a file holding other servers keeps them and is backed up; `--dry-run`
//! writes nothing; a remote entry names `CAIRN_TOKEN` and holds no token; a
//! file with comments is refused where it fails and left as it was; new
//! files are the owner's only; and the entry written for Claude Code starts
//! a working MCP server.

use crate::fixtures::{World, stderr, stdout};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// `cairn setup args` with `home` as the home folder (and its `.config`).
fn setup(home: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cairn"))
        .arg("setup")
        .args(args)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env_remove("CODEX_HOME")
        .env_remove("CAIRN_INDEX")
        .env("CAIRN_LOG", "warn")
        .output()
        .expect("run cairn")
}

/// Each client: its file under the home, and cairn's entry in it as JSON.
fn entry(home: &Path, client: &str) -> (PathBuf, Value) {
    let (file, table) = match client {
        "claude-code" => (".claude.json", "mcpServers"),
        "claude-desktop" => (".config/Claude/claude_desktop_config.json", "mcpServers"),
        "cursor" => (".cursor/mcp.json", "mcpServers"),
        "vscode" => (".config/Code/User/mcp.json", "servers"),
        "codex" => (".codex/config.toml", "mcp_servers"),
        "gemini" => (".gemini/settings.json", "mcpServers"),
        "opencode" => (".config/opencode/opencode.json", "mcp"),
        other => panic!("{other}"),
    };
    let path = home.join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let root: Value = match client {
        "codex" => toml_json(
            text.parse::<toml_edit::DocumentMut>()
                .expect("TOML")
                .as_item(),
        ),
        _ => serde_json::from_str(&text).expect("JSON"),
    };
    (path, root[table]["cairn"].clone())
}

/// A TOML item as JSON (tables, strings, booleans, arrays).
fn toml_json(item: &toml_edit::Item) -> Value {
    if let Some(t) = item.as_table_like() {
        return Value::Object(
            t.iter()
                .map(|(k, v)| (k.to_owned(), toml_json(v)))
                .collect(),
        );
    }
    match item.as_value() {
        Some(toml_edit::Value::String(s)) => Value::from(s.value().as_str()),
        Some(toml_edit::Value::Boolean(b)) => Value::from(*b.value()),
        Some(toml_edit::Value::Array(a)) => Value::Array(
            a.iter()
                .map(|v| toml_json(&toml_edit::Item::Value(v.clone())))
                .collect(),
        ),
        _ => Value::Null,
    }
}

/// The stdio entry as each client documents it: its command line.
fn command_line(client: &str, e: &Value) -> Vec<String> {
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| s.as_str().map(str::to_owned))
            .collect()
    };
    match client {
        "opencode" => {
            assert_eq!(
                (&e["type"], &e["enabled"]),
                (&Value::from("local"), &Value::from(true)),
                "{e}"
            );
            strings(&e["command"])
        }
        _ => {
            if matches!(client, "claude-code" | "vscode") {
                assert_eq!(e["type"], "stdio", "{e}");
            }
            let mut line = vec![e["command"].as_str().expect("command").to_owned()];
            line.extend(strings(&e["args"]));
            line
        }
    }
}

const CLIENTS: [&str; 7] = [
    "claude-code",
    "claude-desktop",
    "cursor",
    "vscode",
    "codex",
    "gemini",
    "opencode",
];

#[test]
fn each_client_is_set_up_in_one_idempotent_step() {
    let w = World::new();
    assert!(w.build("out", &[]).status.success());
    let index = std::fs::canonicalize(w.path("out")).expect("index");
    let index_arg = index.to_str().expect("utf8");
    let skill = stdout(&crate::fixtures::cairn(&["skill"]));
    for client in CLIENTS {
        let home = tempfile::tempdir().expect("home");
        let home = home.path();
        let dry = setup(home, &[client, "--index", index_arg, "--dry-run"]);
        assert!(dry.status.success(), "{client}: {}", stderr(&dry));
        assert!(
            stdout(&dry).contains("would write"),
            "{client}: {}",
            stdout(&dry)
        );
        assert_eq!(
            std::fs::read_dir(home).expect("home").count(),
            0,
            "{client}: --dry-run wrote"
        );

        let o = setup(home, &[client, "--index", index_arg]);
        assert!(o.status.success(), "{client}: {}", stderr(&o));
        let (path, e) = entry(home, client);
        let line = command_line(client, &e);
        assert_eq!(&line[1..], ["mcp", "--index", index_arg], "{client}: {e}");
        assert!(
            Path::new(&line[0]).is_absolute() && Path::new(&line[0]).is_file(),
            "{client}: {e}"
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).expect("file").permissions().mode() & 0o777;
            assert_eq!(mode, 0o600, "{client}: a new file is the owner's only");
        }
        let before = std::fs::read(&path).expect("file");
        let again = setup(home, &[client, "--index", index_arg]);
        assert!(
            stdout(&again).contains("nothing changed"),
            "{client}: {}",
            stdout(&again)
        );
        assert_eq!(
            std::fs::read(&path).expect("file"),
            before,
            "{client}: changed on a second run"
        );
        assert!(
            !PathBuf::from(format!("{}.cairn-backup", path.display())).exists(),
            "{client}"
        );
        if client != "claude-desktop" {
            let installed = walk(home)
                .into_iter()
                .find(|p| p.ends_with("cairn/SKILL.md"))
                .expect("skill");
            assert_eq!(
                std::fs::read_to_string(installed).expect("skill"),
                skill,
                "{client}"
            );
        }
        let list = setup(home, &["--list", "--index", index_arg]);
        let row = stdout(&list)
            .lines()
            .find(|l| l.starts_with(client))
            .unwrap_or_default()
            .to_owned();
        assert!(row.ends_with("(set up)"), "{client}: {row}");
    }
}

/// Every file under `dir`.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn other_servers_are_kept_remote_entries_hold_no_token_and_bad_files_are_left_alone() {
    let home = tempfile::tempdir().expect("home");
    let home = home.path();
    // Cursor's file with another server: kept, and the old file backed up.
    let cursor = home.join(".cursor/mcp.json");
    std::fs::create_dir_all(cursor.parent().expect("dir")).expect("mkdir");
    let old = "{\"mcpServers\": {\"other\": {\"command\": \"other-mcp\"}}, \"x\": 1}\n";
    std::fs::write(&cursor, old).expect("write");
    let url = "https://cairn.example.org/mcp";
    let o = setup(home, &["cursor", "--url", url]);
    assert!(o.status.success(), "{}", stderr(&o));
    let (_, e) = entry(home, "cursor");
    assert_eq!(e["url"], url);
    assert_eq!(e["headers"]["Authorization"], "Bearer ${env:CAIRN_TOKEN}");
    let root: Value =
        serde_json::from_str(&std::fs::read_to_string(&cursor).expect("file")).expect("json");
    assert_eq!(
        (
            root["mcpServers"]["other"]["command"].as_str(),
            root["x"].as_i64()
        ),
        (Some("other-mcp"), Some(1))
    );
    assert_eq!(
        std::fs::read_to_string(home.join(".cursor/mcp.json.cairn-backup")).expect("backup"),
        old
    );
    assert!(stdout(&o).contains("CAIRN_TOKEN"), "{}", stdout(&o));
    // Each client's remote entry, as its documentation spells it.
    for (client, want) in [
        (
            "claude-code",
            serde_json::json!({"type": "http", "url": url, "headers": {"Authorization": "Bearer ${CAIRN_TOKEN}"}}),
        ),
        (
            "vscode",
            serde_json::json!({"type": "http", "url": url, "headers": {"Authorization": "Bearer ${env:CAIRN_TOKEN}"}}),
        ),
        (
            "codex",
            serde_json::json!({"url": url, "bearer_token_env_var": "CAIRN_TOKEN"}),
        ),
        (
            "gemini",
            serde_json::json!({"httpUrl": url, "headers": {"Authorization": "Bearer $CAIRN_TOKEN"}}),
        ),
        (
            "opencode",
            serde_json::json!({"type": "remote", "url": url, "enabled": true, "headers": {"Authorization": "Bearer {env:CAIRN_TOKEN}"}}),
        ),
    ] {
        let o = setup(home, &[client, "--url", url]);
        assert!(o.status.success(), "{client}: {}", stderr(&o));
        assert_eq!(entry(home, client).1, want, "{client}");
    }
    // Claude Desktop takes remote servers in its app, not its file.
    let o = setup(home, &["claude-desktop", "--url", url]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("Connectors"), "{}", stderr(&o));
    // VS Code's file with a comment: refused where it fails, left as it was.
    let vscode = home.join(".config/Code/User/mcp.json");
    std::fs::create_dir_all(vscode.parent().expect("dir")).expect("mkdir");
    let commented = "{\n  // mine\n  \"servers\": {}\n}\n";
    std::fs::write(&vscode, commented).expect("write");
    let o = setup(home, &["vscode", "--url", url]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains(&format!("{}:2:3:", vscode.display())),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read_to_string(&vscode).expect("file"), commented);
    // A client cairn does not know.
    let o = setup(home, &["emacs"]);
    assert!(
        !o.status.success() && stderr(&o).contains("claude-code, claude-desktop"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn the_entry_written_for_claude_code_starts_a_working_server() {
    let w = World::new();
    assert!(w.build("out", &[]).status.success());
    let home = tempfile::tempdir().expect("home");
    let index = w.path("out");
    let o = setup(
        home.path(),
        &["claude-code", "--index", index.to_str().expect("utf8")],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let (_, e) = entry(home.path(), "claude-code");
    let line = command_line("claude-code", &e);
    crate::packages::serves_over_stdio(&line, &w.model);
}
