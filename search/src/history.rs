//! `history`: when and why a span's lines changed, from what the builder
//! recorded (index::history): each distinct commit that last changed any of
//! its lines, with the lines it owns and links to the commit and to
//! GitHub's blame of the span, then the file's recent log. Access as for
//! retrieve: a document the caller may not read is not found.

use crate::engine::Engine;
use crate::error::{SearchError, invalid};
use crate::retrieve::SpanRequest;
use cairn_index::LineSpan;
use cairn_index::history::{CommitInfo, DocHistory, RepoHistory};
use serde::Serialize;
use std::fmt;
use utoipa::ToSchema;

/// One commit, as a history answer names it.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema, schemars::JsonSchema)]
pub struct HistoryCommit {
    /// Full sha.
    pub sha: String,
    /// Author's name.
    pub author: String,
    /// When it was authored (RFC 3339).
    pub date: String,
    /// Its summary line.
    pub summary: String,
    /// The commit on the repository's web host.
    pub url: String,
    /// The lines of the span it last changed, as `[first, last]` runs (blame only).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub lines: Vec<[u32; 2]>,
}

/// When and why a span's lines changed.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema, schemars::JsonSchema)]
pub struct HistoryResponse {
    /// The document.
    pub doc_id: String,
    /// First line of the span.
    pub start_line: u32,
    /// Last line, inclusive.
    pub end_line: u32,
    /// The indexed commit the history is of.
    pub commit: String,
    /// Each commit that last changed a line of the span, newest first.
    pub blame: Vec<HistoryCommit>,
    /// The file's most recent commits, newest first.
    pub log: Vec<HistoryCommit>,
    /// Where the repository is indexed at other refs: whether the span's
    /// lines read the same there.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub at_refs: Vec<SpanAtRef>,
    /// GitHub's blame view of the span at the indexed commit.
    pub blame_url: String,
    /// Why no history is known, when none is (a version built before
    /// history was recorded, a document past the time budget).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub missing: Option<String>,
    /// Where the repository's recorded history is cut (a shallow mirror):
    /// a line credited to this commit may be older.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub boundary: Option<String>,
    /// The version answering.
    pub index_version: String,
}

impl fmt::Display for HistoryResponse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{}:{}-{} at {}",
            self.doc_id,
            self.start_line,
            self.end_line,
            self.commit.get(..12).unwrap_or(&self.commit)
        )?;
        if let Some(m) = &self.missing {
            return writeln!(f, "no history: {m}");
        }
        for c in &self.blame {
            let runs: Vec<String> = c.lines.iter().map(|[a, b]| format!("{a}-{b}")).collect();
            writeln!(
                f,
                "lines {}: {} {} {}: {}",
                runs.join(","),
                c.sha.get(..12).unwrap_or(&c.sha),
                c.date,
                c.author,
                c.summary
            )?;
        }
        for at in &self.at_refs {
            match (at.status, at.start_line, at.end_line) {
                (RefStatus::Unchanged, Some(a), Some(b)) => {
                    writeln!(f, "at {}: unchanged, lines {a}-{b}", at.git_ref)?
                }
                (RefStatus::Absent, ..) => writeln!(f, "at {}: the file is absent", at.git_ref)?,
                _ => {
                    let runs: Vec<String> = at
                        .same_lines
                        .iter()
                        .map(|[a, b]| format!("{a}-{b}"))
                        .collect();
                    let same = if runs.is_empty() {
                        "none".to_owned()
                    } else {
                        runs.join(",")
                    };
                    writeln!(
                        f,
                        "at {}: changed (lines unchanged there: {same})",
                        at.git_ref
                    )?
                }
            }
        }
        writeln!(f, "recent commits of the file:")?;
        for c in &self.log {
            writeln!(
                f,
                "  {} {} {}: {}",
                c.sha.get(..12).unwrap_or(&c.sha),
                c.date,
                c.author,
                c.summary
            )?;
        }
        Ok(())
    }
}

/// Whether a span's lines read the same at another indexed ref.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, ToSchema, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RefStatus {
    /// Every line of the span is there, unchanged and together.
    Unchanged,
    /// Some line of the span differs there (or the lines are apart).
    Changed,
    /// The document is not at that ref.
    Absent,
}

/// A span at another indexed ref of the same repository.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema, schemars::JsonSchema)]
pub struct SpanAtRef {
    /// The ref (tag or branch).
    #[serde(rename = "ref")]
    pub git_ref: String,
    /// The document at that ref.
    pub doc_id: String,
    /// Whether the span reads the same there.
    pub status: RefStatus,
    /// Where the span's lines are there, when unchanged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_line: Option<u32>,
    /// Last of them, inclusive.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_line: Option<u32>,
    /// The span's lines (numbered here) found unchanged there, as `[first,
    /// last]` runs, when changed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub same_lines: Vec<[u32; 2]>,
    /// The lines there at that ref's commit (a permalink), when unchanged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

/// When a span's lines last changed: the newest of the commits that last
/// changed any of them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, ToSchema, schemars::JsonSchema)]
pub struct LastChanged {
    /// When (RFC 3339).
    pub date: String,
    /// The commit's short sha (12 hex digits).
    pub sha: String,
    /// Its summary line.
    pub summary: String,
}

impl Engine {
    /// When `span` of document `doc` last changed, if the version records it.
    pub(crate) fn last_changed(&self, doc: u32, span: LineSpan) -> Option<LastChanged> {
        let d = &self.snap.docs[doc as usize];
        let repo = self.snap.history.as_ref()?.repos.get(&d.repo)?;
        let h = repo.docs.get(&d.path)?;
        h.blame
            .iter()
            .filter(|[first, n, _]| {
                *n > 0 && *first <= span.end && first.saturating_add(*n) > span.start
            })
            .filter_map(|r| repo.commits.get(r[2] as usize))
            .max_by(|a, b| a.date.cmp(&b.date))
            .map(|c| LastChanged {
                date: c.date.clone(),
                sha: c.sha.get(..12).unwrap_or(&c.sha).to_owned(),
                summary: c.summary.clone(),
            })
    }

    /// The history of `req`'s lines (default: the whole file, up to the span limit).
    pub fn history(
        &self,
        req: &SpanRequest,
        groups: Option<&[String]>,
    ) -> Result<HistoryResponse, SearchError> {
        let doc = self.visible_doc(&req.doc_id, groups)?;
        let d = &self.snap.docs[doc as usize];
        let span = self.history_span(doc, req)?;
        let repo = self.snap.manifest.repos.iter().find(|r| r.name == d.repo);
        let web = repo
            .map_or("", |r| r.web_url.as_str())
            .trim_end_matches('/');
        let commit = repo.and_then(|r| r.commit.clone()).unwrap_or_default();
        let mut answer = self.bare_history(d, span, web, commit);
        let recorded = self
            .snap
            .history
            .as_ref()
            .and_then(|h| h.repos.get(&d.repo));
        let Some(repo_history) = recorded else {
            answer.missing = Some(
                "this index version records no line history (built before format 7, or merged from shards that did not carry it yet)".to_owned(),
            );
            return Ok(answer);
        };
        answer.boundary = repo_history.boundary.clone();
        let Some(doc_history) = repo_history.docs.get(&d.path) else {
            answer.missing = Some(
                repo_history
                    .skipped
                    .get(&d.path)
                    .cloned()
                    .unwrap_or_else(|| "not recorded for this document".to_owned()),
            );
            return Ok(answer);
        };
        let commits = Commits {
            history: repo_history,
            web,
        };
        answer.blame = commits.blame(doc_history, span);
        answer.log = doc_history
            .log
            .iter()
            .map(|&c| commits.commit(c, Vec::new()))
            .collect();
        answer.at_refs = repo_history
            .other_refs
            .iter()
            .filter_map(|other| self.span_at_ref(other, d, doc_history, span, groups))
            .collect();
        Ok(answer)
    }

    /// The lines `req` asks of `doc`, within the file.
    fn history_span(&self, doc: u32, req: &SpanRequest) -> Result<LineSpan, SearchError> {
        let total = self.snap.line_index(doc).line_count().max(1);
        let (start, end) = req.span();
        let asked = LineSpan::new(start, end)
            .map_err(|e| invalid(if start < 1 { "start" } else { "end" }, e.to_string()))?;
        Ok(LineSpan {
            start: asked.start.min(total),
            end: asked.end.min(total),
        })
    }

    /// The answer for `span` of `d` before any history is read.
    fn bare_history(
        &self,
        d: &cairn_index::DocRecord,
        span: LineSpan,
        web: &str,
        commit: String,
    ) -> HistoryResponse {
        HistoryResponse {
            doc_id: d.doc_id.to_string(),
            start_line: span.start,
            end_line: span.end,
            blame_url: format!(
                "{web}/blame/{commit}/{}#L{}-L{}",
                crate::links::encode_path(&d.path),
                span.start,
                span.end
            ),
            commit,
            blame: Vec::new(),
            log: Vec::new(),
            at_refs: Vec::new(),
            missing: None,
            boundary: None,
            index_version: self.snap.version.to_string(),
        }
    }

    /// `span` of document `d` at the indexed ref `other` of its repository;
    /// `None` when that ref is not in this version (or not for this caller).
    fn span_at_ref(
        &self,
        other: &str,
        d: &cairn_index::DocRecord,
        history: &cairn_index::history::DocHistory,
        span: LineSpan,
        groups: Option<&[String]>,
    ) -> Option<SpanAtRef> {
        let record = self.snap.manifest.repos.iter().find(|r| r.name == other)?;
        if !crate::access::visible_groups(&record.groups, groups) {
            return None;
        }
        let doc_id = cairn_index::DocId::new(&d.category, other, &d.path).ok()?;
        let mut at = SpanAtRef {
            git_ref: crate::access::repo_ref(record).0.to_owned(),
            doc_id: doc_id.to_string(),
            status: RefStatus::Absent,
            start_line: None,
            end_line: None,
            same_lines: Vec::new(),
            url: None,
        };
        let Some(runs) = history.at_refs.get(other) else {
            return Some(at);
        };
        let whole = runs
            .iter()
            .find(|[first, n, _]| *first <= span.start && span.end < first.saturating_add(*n));
        if let Some(&[first, _, there]) = whole {
            let start = there.saturating_add(span.start - first);
            let end = start.saturating_add(span.end - span.start);
            at.status = RefStatus::Unchanged;
            at.start_line = Some(start);
            at.end_line = Some(end);
            at.url = record.commit.as_deref().map(|commit| {
                crate::links::blob_link(&record.web_url, commit, &d.path, LineSpan { start, end })
            });
            return Some(at);
        }
        at.status = RefStatus::Changed;
        at.same_lines = runs
            .iter()
            .filter_map(|&[first, n, _]| {
                let (a, b) = (
                    first.max(span.start),
                    first.saturating_add(n).saturating_sub(1).min(span.end),
                );
                (n > 0 && a <= b).then_some([a, b])
            })
            .collect();
        Some(at)
    }
}

/// A repository's recorded commits, named with links to its web host.
struct Commits<'a> {
    history: &'a RepoHistory,
    /// The repository's web address, without a trailing slash.
    web: &'a str,
}

impl Commits<'_> {
    /// Commit `i` of the record, owning `lines` of a span (blank if not recorded).
    fn commit(&self, i: u32, lines: Vec<[u32; 2]>) -> HistoryCommit {
        let c = self
            .history
            .commits
            .get(i as usize)
            .cloned()
            .unwrap_or(CommitInfo::default());
        HistoryCommit {
            url: format!("{}/commit/{}", self.web, c.sha),
            sha: c.sha,
            author: c.author,
            date: c.date,
            summary: c.summary,
            lines,
        }
    }

    /// Each commit that last changed a line of `span`, with the lines it owns, newest first.
    fn blame(&self, doc: &DocHistory, span: LineSpan) -> Vec<HistoryCommit> {
        // Each blame run cut to the span, its lines credited to its commit.
        let mut owned: Vec<(u32, Vec<[u32; 2]>)> = Vec::new();
        for &[first, n, c] in &doc.blame {
            let (a, b) = (
                first.max(span.start),
                first.saturating_add(n).saturating_sub(1).min(span.end),
            );
            if n == 0 || a > b {
                continue;
            }
            match owned.iter_mut().find(|(i, _)| *i == c) {
                Some((_, runs)) => runs.push([a, b]),
                None => owned.push((c, vec![[a, b]])),
            }
        }
        let mut blame: Vec<HistoryCommit> = owned
            .into_iter()
            .map(|(c, runs)| self.commit(c, runs))
            .collect();
        blame.sort_by(|x, y| y.date.cmp(&x.date).then_with(|| x.sha.cmp(&y.sha)));
        blame
    }
}
