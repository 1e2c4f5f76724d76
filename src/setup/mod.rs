//! `cairn setup`: cairn's MCP entry written into a client's own
//! configuration ([`clients`]: the file, its format, the table), merged
//! with what the file holds, and cairn's skill installed where the client
//! reads skills. Idempotent: an entry and a skill already as they would be
//! written change nothing. Every file it changes is copied first to
//! `<file>.cairn-backup` (the first one kept: later ones `.cairn-backup.N`),
//! and written whole by a rename (through a link, to where it points); a new file is
//! readable by its owner only. A file it cannot parse (JSON with comments,
//! say) is left untouched, and the error names its line and column. The
//! token is never written: a remote entry names `CAIRN_TOKEN`.

pub mod clients;

use clients::{CLIENTS, Client, ENTRY, Format, Target};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

/// What can stop a setup.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// No home folder to find the client's files from.
    #[error("no home folder: set HOME")]
    NoHome,
    /// The client cannot take this entry.
    #[error("{0}")]
    Unsupported(String),
    /// The client's file is not what its format says (it is left as it is).
    #[error(
        "{path}:{line}:{column}: {detail} (the file is left as it is; fix it, or move it aside and run again)"
    )]
    Parse {
        /// The file.
        path: PathBuf,
        /// Where it went wrong (1-based).
        line: usize,
        /// The column (1-based).
        column: usize,
        /// What was wrong.
        detail: String,
    },
    /// A key on the way to the servers' table holds something else.
    #[error("{path}: {key} is not a table of servers (the file is left as it is)")]
    NotATable {
        /// The file.
        path: PathBuf,
        /// The key.
        key: String,
    },
    /// Reading or writing failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// Where cairn stands in one file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// Not there.
    Absent,
    /// There, as it would be written.
    Same,
    /// There, but otherwise.
    Differs,
}

impl State {
    /// In words.
    pub fn said(self) -> &'static str {
        match self {
            State::Absent => "not set up",
            State::Same => "set up",
            State::Differs => "set up differently",
        }
    }
}

/// One file's change: its path, what it holds now and would hold.
#[derive(Debug)]
pub struct FileChange {
    /// The file.
    pub path: PathBuf,
    /// Where cairn stands in it now.
    pub state: State,
    /// Its text now (`None`: no such file).
    pub before: Option<String>,
    /// Its text after.
    pub after: String,
}

/// Everything a setup of one client would change.
#[derive(Debug)]
pub struct Plan {
    /// cairn's entry, as the client's file holds it (as JSON).
    pub entry: Value,
    /// Its configuration file.
    pub config: FileChange,
    /// Its skill, where it reads skills.
    pub skill: Option<FileChange>,
}

/// What setting up `client` for `target` would change, with `skill` the
/// skill's text; nothing is written.
pub fn plan(client: &'static Client, target: &Target, skill: &str) -> Result<Plan, SetupError> {
    let entry = (client.entry)(target).map_err(SetupError::Unsupported)?;
    let path = (client.config)().ok_or(SetupError::NoHome)?;
    // A file that is a link (dotfiles) is written where it points, the link kept.
    let path = std::fs::canonicalize(&path).unwrap_or(path);
    let before = read(&path)?;
    let (state, after) = match client.format {
        Format::Json => merge_json(before.as_deref(), client.table, entry.clone(), &path)?,
        Format::Toml => merge_toml(before.as_deref(), client.table, entry.clone(), &path)?,
    };
    let config = FileChange {
        path,
        state,
        before,
        after,
    };
    let skill = match client.skill.map(|f| f()) {
        Some(Some(path)) => {
            let before = read(&path)?;
            let state = match before.as_deref() {
                None => State::Absent,
                Some(t) if t == skill => State::Same,
                Some(_) => State::Differs,
            };
            Some(FileChange {
                path,
                state,
                before,
                after: skill.to_owned(),
            })
        }
        Some(None) => return Err(SetupError::NoHome),
        None => None,
    };
    Ok(Plan {
        entry,
        config,
        skill,
    })
}

/// Writes what `plan` changes: the files written, in order (none when
/// everything was already so).
pub fn apply(plan: &Plan) -> Result<Vec<PathBuf>, SetupError> {
    let mut written = Vec::new();
    for change in std::iter::once(&plan.config).chain(&plan.skill) {
        if change.before.as_deref() == Some(change.after.as_str()) {
            continue;
        }
        write(change)?;
        written.push(change.path.clone());
    }
    Ok(written)
}

/// A file and where cairn stands in it.
#[derive(Debug)]
pub struct Place {
    /// The file.
    pub path: PathBuf,
    /// Where cairn stands in it.
    pub state: State,
}

/// Where cairn stands with `client` now: its file (the entry compared with
/// `target`'s when one is given, else only present or not), and its skill.
pub fn status(
    client: &'static Client,
    target: Option<&Target>,
    skill: &str,
) -> Result<(Place, Option<Place>), SetupError> {
    let path = (client.config)().ok_or(SetupError::NoHome)?;
    let state = match target {
        Some(t) if (client.entry)(t).is_ok() => plan(client, t, skill)?.config.state,
        _ => match read(&path)? {
            Some(text) if entry_present(client, &text) => State::Differs,
            _ => State::Absent,
        },
    };
    let skill_state = match client.skill.map(|f| f()) {
        Some(Some(p)) => {
            let state = match read(&p)? {
                None => State::Absent,
                Some(t) if t == skill => State::Same,
                Some(_) => State::Differs,
            };
            Some(Place { path: p, state })
        }
        _ => None,
    };
    Ok((Place { path, state }, skill_state))
}

/// Every client, for `--list`.
pub fn clients() -> &'static [Client] {
    &CLIENTS
}

/// Whether `text` (a client's file) has a `cairn` entry at all.
fn entry_present(client: &Client, text: &str) -> bool {
    match client.format {
        Format::Json => serde_json::from_str::<Value>(text).ok().is_some_and(|v| {
            client
                .table
                .iter()
                .try_fold(&v, |at, k| at.get(k))
                .is_some_and(|t| t.get(ENTRY).is_some())
        }),
        Format::Toml => text
            .parse::<toml_edit::DocumentMut>()
            .ok()
            .is_some_and(|d| {
                client
                    .table
                    .iter()
                    .try_fold(d.as_item(), |at, k| at.get(k))
                    .is_some_and(|t| t.get(ENTRY).is_some())
            }),
    }
}

/// The file's text, `None` when there is none.
fn read(path: &Path) -> Result<Option<String>, SetupError> {
    match std::fs::read_to_string(path) {
        Ok(t) => Ok(Some(t)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(SetupError::Io {
            path: path.to_owned(),
            source,
        }),
    }
}

/// `text` (JSON; none or blank: `{}`) with `entry` at `table`.cairn.
fn merge_json(
    text: Option<&str>,
    table: &[&str],
    entry: Value,
    path: &Path,
) -> Result<(State, String), SetupError> {
    let mut root: Value = match text.filter(|t| !t.trim().is_empty()) {
        Some(t) => serde_json::from_str(t).map_err(|e| SetupError::Parse {
            path: path.to_owned(),
            line: e.line(),
            column: e.column(),
            detail: e.to_string(),
        })?,
        None => Value::Object(Map::new()),
    };
    let not_a_table = |key: &str| SetupError::NotATable {
        path: path.to_owned(),
        key: key.to_owned(),
    };
    let mut at = &mut root;
    for key in table {
        at = at
            .as_object_mut()
            .ok_or_else(|| not_a_table(key))?
            .entry(*key)
            .or_insert_with(|| Value::Object(Map::new()));
    }
    let servers = at
        .as_object_mut()
        .ok_or_else(|| not_a_table(&table.join(".")))?;
    let state = match servers.get(ENTRY) {
        None => State::Absent,
        Some(v) if *v == entry => State::Same,
        Some(_) => State::Differs,
    };
    if state == State::Same {
        return Ok((state, text.unwrap_or_default().to_owned()));
    }
    servers.insert(ENTRY.to_owned(), entry);
    let mut out = serde_json::to_string_pretty(&root).unwrap_or_default();
    out.push('\n');
    Ok((state, out))
}

/// `text` (TOML; none: empty) with `entry` as the table `table`.cairn,
/// everything else in the file (comments, order) kept.
fn merge_toml(
    text: Option<&str>,
    table: &[&str],
    entry: Value,
    path: &Path,
) -> Result<(State, String), SetupError> {
    use toml_edit::{DocumentMut, Item, Table};
    let source = text.unwrap_or_default();
    let mut doc: DocumentMut = source.parse().map_err(|e: toml_edit::TomlError| {
        let at = e.span().map_or(0, |s| s.start);
        let (line, column) = line_column(source, at);
        SetupError::Parse {
            path: path.to_owned(),
            line,
            column,
            detail: e.message().to_owned(),
        }
    })?;
    let wanted = toml_table(&entry);
    let mut at: &mut Item = doc.as_item_mut();
    for key in table {
        let parent = at
            .as_table_like_mut()
            .ok_or_else(|| SetupError::NotATable {
                path: path.to_owned(),
                key: (*key).to_owned(),
            })?;
        if parent.get(key).is_none() {
            let mut t = Table::new();
            // `[mcp_servers.cairn]` alone, not an empty `[mcp_servers]` above it.
            t.set_implicit(true);
            parent.insert(key, Item::Table(t));
        }
        at = parent.get_mut(key).ok_or_else(|| SetupError::NotATable {
            path: path.to_owned(),
            key: (*key).to_owned(),
        })?;
    }
    let servers = at
        .as_table_like_mut()
        .ok_or_else(|| SetupError::NotATable {
            path: path.to_owned(),
            key: table.join("."),
        })?;
    let state = match servers.get(ENTRY) {
        None => State::Absent,
        Some(existing) if same_toml(existing, &wanted) => State::Same,
        Some(_) => State::Differs,
    };
    if state == State::Same {
        return Ok((state, source.to_owned()));
    }
    servers.insert(ENTRY, Item::Table(wanted));
    Ok((state, doc.to_string()))
}

/// A JSON object of strings, booleans and string arrays as a TOML table.
fn toml_table(v: &Value) -> toml_edit::Table {
    let mut t = toml_edit::Table::new();
    for (k, v) in v.as_object().into_iter().flatten() {
        let value: toml_edit::Value = match v {
            Value::String(s) => s.as_str().into(),
            Value::Bool(b) => (*b).into(),
            Value::Array(a) => a
                .iter()
                .filter_map(Value::as_str)
                .collect::<toml_edit::Array>()
                .into(),
            _ => continue,
        };
        t.insert(k, toml_edit::Item::Value(value));
    }
    t
}

/// Whether `existing` holds the same keys and values as `wanted` (however formatted).
fn same_toml(existing: &toml_edit::Item, wanted: &toml_edit::Table) -> bool {
    let Some(have) = existing.as_table_like() else {
        return false;
    };
    let plain = |v: &toml_edit::Item| {
        v.as_value()
            .map(|v| v.clone().decorated("", "").to_string())
    };
    have.len() == wanted.len()
        && wanted
            .iter()
            .all(|(k, v)| have.get(k).and_then(plain) == plain(v))
}

/// The 1-based line and column of byte `at` in `text`.
fn line_column(text: &str, at: usize) -> (usize, usize) {
    let before = &text[..at.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

/// Writes `change`: a backup of the file it replaces, then the new text by
/// a rename, with the old file's mode (a new file: the owner's only).
fn write(change: &FileChange) -> Result<(), SetupError> {
    let io = |source| SetupError::Io {
        path: change.path.clone(),
        source,
    };
    let dir = change.path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(io)?;
    let mode = std::fs::metadata(&change.path)
        .ok()
        .map(|m| m.permissions());
    if change.before.is_some() {
        // The first backup is the file before cairn: later ones get a number.
        let name = file_name(&change.path);
        let backup = (0..)
            .map(|n| match n {
                0 => change.path.with_file_name(format!("{name}.cairn-backup")),
                n => change
                    .path
                    .with_file_name(format!("{name}.cairn-backup.{n}")),
            })
            .find(|p| !p.exists())
            .unwrap_or_else(|| change.path.with_file_name(format!("{name}.cairn-backup")));
        std::fs::copy(&change.path, &backup).map_err(io)?;
    }
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(io)?;
    std::io::Write::write_all(&mut tmp, change.after.as_bytes()).map_err(io)?;
    match mode {
        Some(p) => std::fs::set_permissions(tmp.path(), p).map_err(io)?,
        None => owner_only(tmp.path()).map_err(io)?,
    }
    tmp.persist(&change.path).map_err(|e| io(e.error))?;
    Ok(())
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

#[cfg(unix)]
fn owner_only(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
}

#[cfg(not(unix))]
fn owner_only(_: &Path) -> std::io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_merges_keep_the_rest_and_say_where_a_bad_file_fails() {
        let path = Path::new("x.json");
        let before = r#"{"theme": "dark", "mcpServers": {"other": {"command": "o"}}}"#;
        let (state, after) =
            merge_json(Some(before), &["mcpServers"], json!({"command": "c"}), path)
                .expect("merge");
        assert_eq!(state, State::Absent);
        let v: Value = serde_json::from_str(&after).expect("json");
        assert_eq!(v["theme"], "dark");
        assert_eq!(v["mcpServers"]["other"]["command"], "o");
        assert_eq!(v["mcpServers"]["cairn"]["command"], "c");
        let (again, same) =
            merge_json(Some(&after), &["mcpServers"], json!({"command": "c"}), path)
                .expect("merge");
        assert_eq!((again, same.as_str()), (State::Same, after.as_str()));
        let bad = "{\n  // a comment\n  \"a\": 1\n}";
        match merge_json(Some(bad), &["mcpServers"], json!({}), path) {
            Err(SetupError::Parse { line, column, .. }) => assert_eq!((line, column), (2, 3)),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            merge_json(
                Some(r#"{"mcpServers": 3}"#),
                &["mcpServers"],
                json!({}),
                path
            ),
            Err(SetupError::NotATable { .. })
        ));
    }

    #[test]
    fn toml_merges_keep_comments_and_order() {
        let path = Path::new("config.toml");
        let before = "# mine\nmodel = \"o3\"\n\n[mcp_servers.other]\ncommand = \"o\"\n";
        let entry = json!({"command": "/bin/cairn", "args": ["mcp", "--index", "/i"]});
        let (state, after) =
            merge_toml(Some(before), &["mcp_servers"], entry.clone(), path).expect("merge");
        assert_eq!(state, State::Absent);
        assert!(after.starts_with("# mine\nmodel = \"o3\"\n"), "{after}");
        assert!(after.contains("[mcp_servers.cairn]\ncommand = \"/bin/cairn\"\nargs = [\"mcp\", \"--index\", \"/i\"]"), "{after}");
        let (again, same) = merge_toml(Some(&after), &["mcp_servers"], entry, path).expect("merge");
        assert_eq!((again, same.as_str()), (State::Same, after.as_str()));
        match merge_toml(Some("a = \n"), &["mcp_servers"], json!({}), path) {
            Err(SetupError::Parse { line, .. }) => assert_eq!(line, 1),
            other => panic!("{other:?}"),
        }
    }
}
