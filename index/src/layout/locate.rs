//! Where an index root is when a command is not told: `--index` or
//! `CAIRN_INDEX` as given; else `./.cairn/index` when it holds an index;
//! else the user's data folder (`$XDG_DATA_HOME/cairn/index` or
//! `~/.local/share/cairn/index`, `~/Library/Application Support/cairn/index`
//! on macOS, `%APPDATA%\cairn\index` on Windows). So `cairn mcp`, started by
//! a desktop client in a folder of its own choosing, finds the index a user
//! built outside a project. Writers (`build`, `pull`) default to the
//! project's `./.cairn/index` inside a project and to the data folder outside one.

use super::DEFAULT_ROOT;
use std::path::{Path, PathBuf};

/// No index was named and none was found where one is looked for.
#[derive(Debug, thiserror::Error)]
#[error(
    "no index found: looked in {}; build one with `cairn build` (or `cairn pull latest`), or name one with --index or CAIRN_INDEX",
    looked.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
)]
pub struct NoIndex {
    /// Every place looked, in order.
    pub looked: Vec<PathBuf>,
}

/// The user's data folder's index root (`None` where the platform has no data folder).
pub fn user_root() -> Option<PathBuf> {
    dirs::data_dir().map(|d| d.join("cairn").join("index"))
}

/// Where an index is looked for when none is named, in order.
pub fn default_roots() -> Vec<PathBuf> {
    std::iter::once(PathBuf::from(DEFAULT_ROOT))
        .chain(user_root())
        .collect()
}

/// Whether `root` holds an index (a `CURRENT` naming its live version).
pub fn holds_index(root: &Path) -> bool {
    root.join("CURRENT").is_file()
}

/// The index root to read: `given` as it is (its absence is the opener's
/// to report), else the first of [`default_roots`] that holds an index.
pub fn find_root(given: Option<&Path>) -> Result<PathBuf, NoIndex> {
    if let Some(root) = given {
        return Ok(root.to_owned());
    }
    let looked = default_roots();
    looked
        .iter()
        .find(|r| holds_index(r))
        .cloned()
        .ok_or(NoIndex { looked })
}

/// Whether `dir` is a project's folder: it has a `repositories.yml` or a `.cairn` folder.
pub fn is_project(dir: &Path) -> bool {
    dir.join("repositories.yml").is_file() || dir.join(".cairn").is_dir()
}

/// The index root a writer uses: `given`, else `./.cairn/index` inside a
/// project (or where no data folder exists), else the user's data folder.
/// The flag says whether the data folder was chosen (so the writer can say where).
pub fn write_root(given: Option<&Path>) -> (PathBuf, bool) {
    if let Some(root) = given {
        return (root.to_owned(), false);
    }
    match (is_project(Path::new(".")), user_root()) {
        (false, Some(user)) => (user, true),
        _ => (PathBuf::from(DEFAULT_ROOT), false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_named_root_is_taken_as_given_and_the_defaults_are_tried_in_order() {
        let given = Path::new("/nowhere/index");
        assert_eq!(find_root(Some(given)).expect("given"), given);
        let roots = default_roots();
        assert_eq!(roots[0], Path::new(DEFAULT_ROOT));
        let empty = tempfile::tempdir().expect("dir");
        assert!(!holds_index(empty.path()));
        std::fs::write(empty.path().join("CURRENT"), "v1\n").expect("write");
        assert!(holds_index(empty.path()));
        let e = NoIndex {
            looked: vec![
                PathBuf::from(".cairn/index"),
                PathBuf::from("/home/u/.local/share/cairn/index"),
            ],
        };
        assert!(
            e.to_string().starts_with(
                "no index found: looked in .cairn/index, /home/u/.local/share/cairn/index;"
            ),
            "{e}"
        );
    }
}
