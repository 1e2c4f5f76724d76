//! A repository indexed at several refs (`refs:` in repositories.yml): for
//! each document at each ref, which of its lines are unchanged at every
//! other indexed ref, from the documents' text (equal text, else a line
//! diff), so `history` can say whether a cited span reads the same in
//! another release. Runs when a build's documents are assembled (before
//! the version id, which the history is part of), where every ref's
//! documents are at hand, whether synced here or merged from shards.

use cairn_index::history::History;
use std::collections::{BTreeMap, HashMap};

/// One indexed ref of a repository, as the comparison reads it.
pub struct IndexedRef<'a> {
    /// Its repository name (`name@ref` for all but the first ref).
    pub name: &'a str,
    /// The repository's own name, shared by all its refs.
    pub base: &'a str,
    /// Its documents: path and text.
    pub docs: Vec<(&'a str, &'a str)>,
}

/// Records in `history`, for each repository indexed at several refs,
/// every recorded document's unchanged lines at each other ref.
pub fn compare(history: &mut History, refs: &[IndexedRef<'_>]) {
    let mut by_base: BTreeMap<&str, Vec<&IndexedRef<'_>>> = BTreeMap::new();
    for r in refs {
        by_base.entry(r.base).or_default().push(r);
    }
    for group in by_base.values().filter(|g| g.len() > 1) {
        let texts: Vec<HashMap<&str, &str>> = group
            .iter()
            .map(|r| r.docs.iter().copied().collect())
            .collect();
        for (i, here) in group.iter().enumerate() {
            let Some(h) = history.repos.get_mut(here.name) else {
                continue;
            };
            h.other_refs = group
                .iter()
                .filter(|o| o.name != here.name)
                .map(|o| o.name.to_owned())
                .collect();
            for (path, doc) in h.docs.iter_mut() {
                let Some(text) = texts[i].get(path.as_str()) else {
                    continue;
                };
                for (j, there) in group.iter().enumerate() {
                    if j == i {
                        continue;
                    }
                    if let Some(other) = texts[j].get(path.as_str()) {
                        doc.at_refs
                            .insert(there.name.to_owned(), unchanged_runs(text, other));
                    }
                }
            }
        }
    }
}

/// The runs of `a`'s lines found unchanged in `b`: `[first line in a,
/// lines, first line in b]`, 1-based, in order.
pub fn unchanged_runs(a: &str, b: &str) -> Vec<[u32; 3]> {
    let (na, nb) = (a.lines().count() as u32, b.lines().count() as u32);
    if a == b {
        return if na == 0 {
            Vec::new()
        } else {
            vec![[1, na, 1]]
        };
    }
    let mut opts = git2::DiffOptions::new();
    opts.context_lines(0);
    let Ok(patch) =
        git2::Patch::from_buffers(a.as_bytes(), None, b.as_bytes(), None, Some(&mut opts))
    else {
        return Vec::new();
    };
    // Text libgit2 takes for binary has no hunks: nothing is known alike.
    if patch.num_hunks() == 0 {
        return Vec::new();
    }
    let mut runs = Vec::new();
    // The next line of each side not yet accounted for.
    let (mut next_a, mut next_b) = (1u32, 1u32);
    let mut keep = |upto_a: u32, from_b: u32, next_a: u32| {
        if upto_a > next_a {
            runs.push([next_a, upto_a - next_a, from_b]);
        }
    };
    for i in 0..patch.num_hunks() {
        let Ok((hunk, _)) = patch.hunk(i) else {
            return Vec::new();
        };
        // With no lines on a side, git numbers the line *before* the hunk.
        let start_a = hunk.old_start() + u32::from(hunk.old_lines() == 0);
        let start_b = hunk.new_start() + u32::from(hunk.new_lines() == 0);
        keep(start_a, next_b, next_a);
        next_a = start_a + hunk.old_lines();
        next_b = start_b + hunk.new_lines();
    }
    // After the last hunk both sides end alike.
    let tail = (na + 1)
        .saturating_sub(next_a)
        .min((nb + 1).saturating_sub(next_b));
    keep(next_a + tail, next_b, next_a);
    runs
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every run must pair equal lines, and every line outside the runs
    /// must differ from git's point of view; checked line by line.
    fn check(a: &str, b: &str, want: &[[u32; 3]]) {
        let runs = unchanged_runs(a, b);
        assert_eq!(runs, want, "{a:?} vs {b:?}");
        let (la, lb): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
        for [first, n, there] in runs {
            for k in 0..n {
                assert_eq!(
                    la[(first + k - 1) as usize],
                    lb[(there + k - 1) as usize],
                    "line {} here, {} there",
                    first + k,
                    there + k
                );
            }
        }
    }

    #[test]
    fn equal_text_is_one_run() {
        check("a\nb\nc\n", "a\nb\nc\n", &[[1, 3, 1]]);
        check("", "", &[]);
    }

    #[test]
    fn a_changed_line_splits_the_run() {
        check("a\nb\nc\nd\n", "a\nB\nc\nd\n", &[[1, 1, 1], [3, 2, 3]]);
    }

    #[test]
    fn inserted_and_deleted_lines_shift_the_other_side() {
        // Two lines inserted after line 1 of a.
        check("a\nb\nc\n", "a\nx\ny\nb\nc\n", &[[1, 1, 1], [2, 2, 4]]);
        // Line 2 of a deleted.
        check("a\nb\nc\nd\n", "a\nc\nd\n", &[[1, 1, 1], [3, 2, 2]]);
        // Lines added at the very start and at the end.
        check("a\nb\n", "z\na\nb\nq\n", &[[1, 2, 2]]);
        // Everything replaced.
        check("a\nb\n", "c\nd\n", &[]);
    }
}
