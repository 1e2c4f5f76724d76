//! Who may see what: the [`Caller`] every connector hands the library, and
//! the one set of rules that decides which documents and chunks a caller's
//! groups reach. Every call that reads documents goes through these, so a
//! document hidden from a caller answers exactly like a missing one.

use crate::filters::Filters;
use cairn_index::{DocRecord, Snapshot};

/// Someone calling the library: a token holder, a JWT subject, the local user.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Caller {
    /// Token name or JWT subject.
    pub name: String,
    /// Access groups; `None` is a trusted caller that sees every document (no-auth mode).
    pub groups: Option<Vec<String>>,
    /// May set runtime weights.
    pub admin: bool,
}

impl Caller {
    /// The local user (the CLI, MCP over stdio, a server without credentials on loopback).
    pub fn local() -> Self {
        Self {
            name: "local".to_owned(),
            groups: None,
            admin: true,
        }
    }

    /// Someone who presented no credentials: sees public documents only.
    pub fn anonymous() -> Self {
        Self {
            name: "anonymous".to_owned(),
            groups: Some(Vec::new()),
            admin: false,
        }
    }

    /// The groups, as the library's calls take them.
    pub fn groups(&self) -> Option<&[String]> {
        self.groups.as_deref()
    }
}

/// Whether a caller with `groups` may see `doc` (`None`: a trusted caller).
pub fn visible(doc: &DocRecord, groups: Option<&[String]>) -> bool {
    visible_groups(&doc.groups, groups)
}

/// Whether a caller with `groups` may see what is restricted to `required` (empty: public).
pub fn visible_groups(required: &[String], groups: Option<&[String]>) -> bool {
    required.is_empty() || groups.is_none_or(|g| required.iter().any(|d| g.contains(d)))
}

/// Which chunks a caller with `groups` may see (filters aside): the scope of
/// every statistic a query's scores depend on.
pub fn visible_chunks(snap: &Snapshot, groups: Option<&[String]>) -> Vec<bool> {
    let doc_ok: Vec<bool> = snap.docs.iter().map(|d| visible(d, groups)).collect();
    snap.chunks.iter().map(|c| doc_ok[c.doc as usize]).collect()
}

/// The ref a repository entry holds, and whether it is another ref than the
/// repository's default (its name is `<repo>@<ref>`).
pub fn repo_ref(r: &cairn_index::manifest::RepoRecord) -> (&str, bool) {
    match r.name.split_once('@') {
        Some((_, rf)) => (rf, true),
        None => (
            r.pin
                .as_deref()
                .or(r.default_branch.as_deref())
                .unwrap_or(""),
            false,
        ),
    }
}

/// Most known values an error about an unknown filter value lists.
const KNOWN_LISTED: usize = 30;

/// `filters` as a caller with `groups` may use them on `snap`: within
/// their bounds (`Filters::validate`), and each toolkit, repository,
/// category and ref one of the caller's own repositories has, else an
/// `invalid_argument` naming the field and listing the values it may use.
/// A filter nothing matches would answer nothing, silently; a value the
/// caller may not see is refused exactly like one that does not exist.
pub fn check_filters(
    snap: &Snapshot,
    filters: &Filters,
    groups: Option<&[String]>,
) -> Result<(), crate::error::SearchError> {
    filters.validate()?;
    let repos: Vec<&cairn_index::manifest::RepoRecord> = snap
        .manifest
        .repos
        .iter()
        .filter(|r| visible_groups(&r.groups, groups))
        .collect();
    let known = |of: fn(&cairn_index::manifest::RepoRecord) -> &str| {
        let mut v: Vec<&str> = repos
            .iter()
            .map(|r| of(r))
            .filter(|v| !v.is_empty())
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    let checks: [(&'static str, &Vec<String>, Vec<&str>); 4] = [
        (
            Filters::TOOLKIT,
            &filters.toolkit,
            known(|r| r.toolkit.as_str()),
        ),
        (Filters::REPO, &filters.repo, known(|r| r.name.as_str())),
        (
            Filters::CATEGORY,
            &filters.category,
            known(|r| r.category.as_str()),
        ),
        (Filters::REF, &filters.refs, known(|r| repo_ref(r).0)),
    ];
    for (field, given, known) in checks {
        if let Some(v) = given.iter().find(|v| !known.contains(&v.as_str())) {
            let mut listed = known
                .iter()
                .take(KNOWN_LISTED)
                .copied()
                .collect::<Vec<_>>()
                .join(", ");
            if known.len() > KNOWN_LISTED {
                listed.push_str(", …");
            }
            let value: String = v.chars().take(100).collect();
            return Err(crate::error::invalid(
                field,
                match known.is_empty() {
                    true => format!("{value:?} names nothing in this index"),
                    false => format!("{value:?} is not one of {listed}"),
                },
            ));
        }
    }
    if let Some(p) = filters.path_prefix.iter().find(|p| {
        !snap
            .docs
            .iter()
            .any(|d| visible(d, groups) && d.doc_id.as_str().starts_with(p.as_str()))
    }) {
        let value: String = p.chars().take(200).collect();
        return Err(crate::error::invalid(
            Filters::PATH_PREFIX,
            format!(
                "{value:?} starts no doc_id in this index (a prefix is `category/repo/folder/`)"
            ),
        ));
    }
    Ok(())
}

/// Which chunks pass the filters and the caller's groups: applied before ranking, on both paths.
pub fn allowed_chunks(snap: &Snapshot, filters: &Filters, groups: Option<&[String]>) -> Vec<bool> {
    let doc_ok = allowed_docs(snap, filters, groups);
    snap.chunks.iter().map(|c| doc_ok[c.doc as usize]).collect()
}

/// Which documents pass the filters and the caller's groups (what a grep reads).
pub fn allowed_docs(snap: &Snapshot, filters: &Filters, groups: Option<&[String]>) -> Vec<bool> {
    let any = |list: &[String], v: &str| list.is_empty() || list.iter().any(|x| x == v);
    let refs: std::collections::HashMap<&str, (&str, bool)> = snap
        .manifest
        .repos
        .iter()
        .map(|r| (r.name.as_str(), repo_ref(r)))
        .collect();
    // Another ref is searched only when asked for: by ref, or by naming it.
    let names_other_ref = filters
        .repo
        .iter()
        .chain(&filters.path_prefix)
        .any(|v| v.contains('@'));
    // Without other refs indexed or asked for, every document passes: skip
    // a lookup per document (75,800 of them at 100x the corpus).
    let refs_matter = !filters.refs.is_empty() || refs.values().any(|(_, extra)| *extra);
    let ref_ok = |repo: &str| {
        let (r, extra) = refs.get(repo).copied().unwrap_or(("", false));
        match filters.refs.is_empty() {
            true => !extra || names_other_ref,
            false => filters.refs.iter().any(|x| x == r),
        }
    };
    snap.docs
        .iter()
        .map(|d| {
            visible(d, groups)
                && (!refs_matter || ref_ok(&d.repo))
                && any(&filters.repo, &d.repo)
                && any(&filters.category, &d.category)
                && any(&filters.toolkit, &d.toolkit)
                && any(&filters.doctype, d.doctype.as_str())
                && (filters.path_prefix.is_empty()
                    || filters
                        .path_prefix
                        .iter()
                        .any(|p| d.doc_id.as_str().starts_with(p.as_str())))
        })
        .collect()
}
