//! The clients `cairn setup` configures: where each keeps its MCP servers
//! (file, format and the table inside it), how cairn's entry looks there
//! (stdio: `cairn mcp --index …`; remote: the server's `/mcp` with the
//! token read from `CAIRN_TOKEN` in the client's environment, never
//! written), and where it reads agent skills. Paths are each client's
//! documented user-level ones, found from `HOME`, `XDG_CONFIG_HOME` (the
//! platform's config folder elsewhere) and `CODEX_HOME`.

use serde_json::{Value, json};
use std::path::PathBuf;

/// The environment variable a remote entry reads the token from.
pub const TOKEN_VAR: &str = "CAIRN_TOKEN";

/// The name of cairn's entry in every client's table.
pub const ENTRY: &str = "cairn";

/// How a client's file is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// JSON (comments are refused: the file is left as it is).
    Json,
    /// TOML, edited in place (its comments and order kept).
    Toml,
}

/// What the client starts or reaches.
#[derive(Clone, Debug)]
pub enum Target {
    /// `command args…` over stdio.
    Stdio {
        /// The `cairn` executable, absolute.
        command: String,
        /// `mcp --index <absolute index root>`.
        args: Vec<String>,
    },
    /// A running server's `/mcp`.
    Remote {
        /// Its URL.
        url: String,
    },
}

/// One client.
pub struct Client {
    /// Its name on the command line.
    pub name: &'static str,
    /// Its name for people.
    pub title: &'static str,
    /// How its file is written.
    pub format: Format,
    /// The keys leading to its table of servers.
    pub table: &'static [&'static str],
    /// Its MCP configuration file.
    pub config: fn() -> Option<PathBuf>,
    /// Where it reads a skill's `SKILL.md` (none: it has no skill folder).
    pub skill: Option<fn() -> Option<PathBuf>>,
    /// cairn's entry for `target`, or why this client cannot take it.
    pub entry: fn(&Target) -> Result<Value, String>,
}

fn home() -> Option<PathBuf> {
    dirs::home_dir()
}

fn config_dir() -> Option<PathBuf> {
    dirs::config_dir()
}

fn codex_home() -> Option<PathBuf> {
    std::env::var_os("CODEX_HOME")
        .map(PathBuf::from)
        .or_else(|| home().map(|h| h.join(".codex")))
}

/// `Bearer <the client's way of naming CAIRN_TOKEN>`.
fn bearer(reference: &str) -> Value {
    json!({ "Authorization": format!("Bearer {reference}") })
}

/// Every client, in the order `--list` shows them.
pub const CLIENTS: [Client; 7] = [
    Client {
        name: "claude-code",
        title: "Claude Code",
        format: Format::Json,
        table: &["mcpServers"],
        config: || home().map(|h| h.join(".claude.json")),
        skill: Some(|| home().map(|h| h.join(".claude/skills/cairn/SKILL.md"))),
        entry: |t| {
            Ok(match t {
                Target::Stdio { command, args } => {
                    json!({"type": "stdio", "command": command, "args": args, "env": {}})
                }
                Target::Remote { url } => {
                    json!({"type": "http", "url": url, "headers": bearer(&format!("${{{TOKEN_VAR}}}"))})
                }
            })
        },
    },
    Client {
        name: "claude-desktop",
        title: "Claude Desktop",
        format: Format::Json,
        table: &["mcpServers"],
        config: || config_dir().map(|c| c.join("Claude/claude_desktop_config.json")),
        skill: None,
        entry: |t| {
            match t {
            Target::Stdio { command, args } => Ok(json!({"command": command, "args": args})),
            Target::Remote { .. } => Err(
                "Claude Desktop adds remote servers in Settings → Connectors, not in its file: give the URL there, or set it up over stdio (no --url)".to_owned(),
            ),
        }
        },
    },
    Client {
        name: "cursor",
        title: "Cursor",
        format: Format::Json,
        table: &["mcpServers"],
        config: || home().map(|h| h.join(".cursor/mcp.json")),
        skill: Some(|| home().map(|h| h.join(".cursor/skills/cairn/SKILL.md"))),
        entry: |t| {
            Ok(match t {
                Target::Stdio { command, args } => json!({"command": command, "args": args}),
                Target::Remote { url } => {
                    json!({"url": url, "headers": bearer(&format!("${{env:{TOKEN_VAR}}}"))})
                }
            })
        },
    },
    Client {
        name: "vscode",
        title: "VS Code (GitHub Copilot)",
        format: Format::Json,
        table: &["servers"],
        config: || config_dir().map(|c| c.join("Code/User/mcp.json")),
        skill: Some(|| home().map(|h| h.join(".copilot/skills/cairn/SKILL.md"))),
        entry: |t| {
            Ok(match t {
                Target::Stdio { command, args } => {
                    json!({"type": "stdio", "command": command, "args": args})
                }
                Target::Remote { url } => {
                    json!({"type": "http", "url": url, "headers": bearer(&format!("${{env:{TOKEN_VAR}}}"))})
                }
            })
        },
    },
    Client {
        name: "codex",
        title: "Codex",
        format: Format::Toml,
        table: &["mcp_servers"],
        config: || codex_home().map(|c| c.join("config.toml")),
        skill: Some(|| codex_home().map(|c| c.join("skills/cairn/SKILL.md"))),
        entry: |t| {
            Ok(match t {
                Target::Stdio { command, args } => json!({"command": command, "args": args}),
                Target::Remote { url } => json!({"url": url, "bearer_token_env_var": TOKEN_VAR}),
            })
        },
    },
    Client {
        name: "gemini",
        title: "Gemini CLI",
        format: Format::Json,
        table: &["mcpServers"],
        config: || home().map(|h| h.join(".gemini/settings.json")),
        skill: Some(|| home().map(|h| h.join(".gemini/skills/cairn/SKILL.md"))),
        entry: |t| {
            Ok(match t {
                Target::Stdio { command, args } => json!({"command": command, "args": args}),
                Target::Remote { url } => {
                    json!({"httpUrl": url, "headers": bearer(&format!("${TOKEN_VAR}"))})
                }
            })
        },
    },
    Client {
        name: "opencode",
        title: "opencode",
        format: Format::Json,
        table: &["mcp"],
        config: || config_dir().map(|c| c.join("opencode/opencode.json")),
        skill: Some(|| config_dir().map(|c| c.join("opencode/skill/cairn/SKILL.md"))),
        entry: |t| {
            Ok(match t {
                Target::Stdio { command, args } => {
                    let mut line = vec![command.clone()];
                    line.extend(args.iter().cloned());
                    json!({"type": "local", "command": line, "enabled": true})
                }
                Target::Remote { url } => json!({"type": "remote", "url": url, "enabled": true,
                    "headers": bearer(&format!("{{env:{TOKEN_VAR}}}"))}),
            })
        },
    },
];

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

/// The client named `name`.
pub fn by_name(name: &str) -> Option<&'static Client> {
    CLIENTS.iter().find(|c| c.name == name)
}
