//! Listing a commit's tree: every file with its path, iteratively (one path
//! buffer, one open tree per level), so no tree's shape can overflow the
//! stack or cost memory with the square of its depth; what cannot be a
//! document (a name that is not UTF-8, a path no doc id can hold, a folder
//! too deep) is recorded as [`Skipped`] with its reason. Used by `documents`.

use crate::config::RepoConfig;
use cairn_index::DocId;
use cairn_index::manifest::SkipReason;
use git2::{ObjectType, Oid, Repository};

/// A file that was not indexed.
#[derive(Clone, Debug)]
pub struct Skipped {
    /// Path inside the repository.
    pub path: String,
    /// Size in bytes.
    pub size: u64,
    /// Why.
    pub reason: SkipReason,
}

/// A file of the commit's tree, before it is read.
pub(super) struct Entry {
    /// Path inside the repository.
    pub(super) path: String,
    /// None for a submodule.
    pub(super) oid: Option<Oid>,
    /// Its git file mode.
    pub(super) mode: i32,
}

/// Folder levels the walk descends: git allows far more, no project
/// needs them, and each level holds one tree object while it is open.
pub const MAX_TREE_DEPTH: usize = 128;

/// One folder being listed: its tree, the next entry to read, and where
/// its name ends in the walk's path buffer.
struct Frame<'r> {
    tree: git2::Tree<'r>,
    next: usize,
    base: usize,
}

/// Lists the files under `root`, iteratively with one path buffer, so a
/// tree nested 30,000 deep costs neither stack nor a path per level. A name
/// that is not UTF-8 cannot be a doc_id: the file, or the whole folder, is
/// skipped as `non-utf8-path`. A path no doc id under `cfg` can hold
/// (over 1,024 bytes with its category and repository, or with a character
/// ids refuse) is skipped as `invalid-path`, a folder past
/// [`MAX_TREE_DEPTH`] as `too-deep`, each with its whole subtree unread;
/// the walk goes on.
pub(super) fn walk(
    repo: &Repository,
    root: &git2::Tree<'_>,
    cfg: &RepoConfig,
    entries: &mut Vec<Entry>,
    skipped: &mut Vec<Skipped>,
) -> Result<(), git2::Error> {
    let mut path = String::new();
    let mut stack = vec![Frame {
        tree: root.clone(),
        next: 0,
        base: 0,
    }];
    let skip = |path: &str, reason| Skipped {
        path: cut_path(path),
        size: 0,
        reason,
    };
    while let Some(frame) = stack.last_mut() {
        // The entry borrows its folder's tree: read what is needed of it,
        // its name into `path`, and let it go before the stack changes.
        let (kind, oid, mode, utf8) = {
            let Some(entry) = frame.tree.get(frame.next) else {
                stack.pop();
                continue;
            };
            frame.next += 1;
            path.truncate(frame.base);
            let utf8 = match std::str::from_utf8(entry.name_bytes()) {
                Ok(name) => {
                    path.push_str(name);
                    true
                }
                Err(_) => {
                    path.push_str(&String::from_utf8_lossy(entry.name_bytes()));
                    false
                }
            };
            (entry.kind(), entry.id(), entry.filemode(), utf8)
        };
        if !utf8 {
            skipped.push(skip(&path, SkipReason::NonUtf8Path));
            continue;
        }
        if DocId::new(&cfg.category, &cfg.name, &path).is_err() {
            skipped.push(skip(&path, SkipReason::InvalidPath));
            continue;
        }
        match kind {
            Some(ObjectType::Tree) if stack.len() >= MAX_TREE_DEPTH => {
                skipped.push(skip(&path, SkipReason::TooDeep));
            }
            Some(ObjectType::Tree) => {
                let tree = repo.find_tree(oid)?;
                path.push('/');
                stack.push(Frame {
                    tree,
                    next: 0,
                    base: path.len(),
                });
            }
            Some(ObjectType::Blob) => entries.push(Entry {
                path: path.clone(),
                oid: Some(oid),
                mode,
            }),
            Some(ObjectType::Commit) => entries.push(Entry {
                path: path.clone(),
                oid: None,
                mode,
            }),
            _ => {}
        }
    }
    Ok(())
}

/// A skipped path as the manifest records it: at most a doc id's length.
fn cut_path(path: &str) -> String {
    const MAX: usize = 1024;
    match path.len() <= MAX {
        true => path.to_owned(),
        false => format!("{}…", &path[..floor_char_boundary(path, MAX)]),
    }
}

/// The largest char boundary of `s` at or below `i`.
pub(super) fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    if i >= s.len() {
        return s.len();
    }
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}
