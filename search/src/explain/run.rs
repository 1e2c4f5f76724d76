//! How an explanation runs: the pasted text parsed, its message matched
//! against every raise site's template, its frames mapped onto indexed
//! documents, and the passages that explain it searched for.

mod scope;

use super::parse::parse;
use super::{
    Cited, DEFAULT_EXPLAIN_LIMIT, ExplainRequest, ExplainResponse, Frame, History, Located,
    MAX_EXPLAIN_LIMIT, MAX_FRAMES, MAX_MESSAGE_CHARS, MAX_SITES, MAX_TEXT_BYTES, MIN_LITERAL,
    MappedFrame, ParsedError, RaiseSite,
};
use crate::access;
use crate::engine::Engine;
use crate::error::{SearchError, invalid};
use crate::filters::{Filters, Mode};
use crate::passages::{SearchRequest, SearchResponse};
use crate::raises::{Match, Template};
use crate::raises::{Message, Site};
use cairn_index::LineSpan;
use std::collections::HashSet;

/// Where a mapped frame landed, as the engine knows it (document index, line).
#[derive(Clone, Copy)]
struct FrameAt {
    doc: u32,
    line: u32,
    located: Located,
}

impl Engine {
    /// Explains pasted error text: its raise sites, its frames, the passages about it.
    pub fn explain(&self, req: &ExplainRequest) -> Result<ExplainResponse, SearchError> {
        let text = validate(req)?;
        let groups = req.groups.as_deref();
        self.check_toolkit(req.toolkit.as_deref(), groups)?;
        let parsed = parse(text);
        let message = message_of(&parsed)?;
        let repos = self.repos_for(req.version.as_deref());
        let in_scope = |doc: u32| {
            let d = &self.snapshot().docs[doc as usize];
            access::visible(d, groups)
                && req.toolkit.as_ref().is_none_or(|t| &d.toolkit == t)
                && repos.contains(d.repo.as_str())
        };
        // A pasted recursion can print hundreds of frames; the innermost tell where it was raised.
        let skipped = parsed.frames.len().saturating_sub(MAX_FRAMES);
        let (frames, landed): (Vec<MappedFrame>, Vec<Option<FrameAt>>) = parsed.frames[skipped..]
            .iter()
            .map(|f| self.map_frame(f, &in_scope))
            .unzip();
        req.deadline.check()?;
        let (raise_sites, top_doc) = self.raise_sites(&parsed, &message, &landed, &in_scope);
        req.deadline.check()?;

        let toolkit = req.toolkit.clone().or_else(|| {
            let doc = top_doc.or_else(|| landed.iter().rev().flatten().next().map(|f| f.doc))?;
            Some(self.snapshot().docs[doc as usize].toolkit.clone())
        });
        let query = explain_query(&parsed, &message, raise_sites.first());
        let search = self.search(&explain_search(req, query.clone(), toolkit, &repos))?;
        Ok(self.answer(
            req,
            Findings {
                parsed,
                frames,
                raise_sites,
                query,
                search,
                skipped,
            },
        ))
    }

    /// The response from what an explanation found, with its notices.
    fn answer(&self, req: &ExplainRequest, found: Findings) -> ExplainResponse {
        let frames = found.frames;
        let mut notices = self.notices(req, &frames);
        if found.skipped > 0 {
            notices.push(format!(
                "the traceback has {} frames; the innermost {MAX_FRAMES} were read",
                found.parsed.frames.len()
            ));
        }
        let mapped = frames.iter().any(|f| f.at.is_some());
        // A traceback none of whose files is indexed comes from a package this
        // index does not hold: passages that merely look alike are no answer.
        let foreign = !frames.is_empty() && !mapped && found.raise_sites.is_empty();
        if foreign {
            let files: Vec<&str> = frames
                .iter()
                .rev()
                .take(2)
                .map(|f| f.frame.file.as_str())
                .collect();
            notices.push(format!(
                "none of the traceback's files is indexed ({}): the error comes from code this index does not hold",
                files.join(", ")
            ));
        }
        let history = History::of(&found.raise_sites);
        ExplainResponse {
            insufficient_evidence: foreign
                || (found.raise_sites.is_empty() && !mapped && found.search.insufficient_evidence),
            parsed: found.parsed,
            raise_sites: found.raise_sites,
            frames,
            explains: found.search.hits,
            query: found.query,
            history,
            notices,
            index_version: self.snapshot().version.to_string(),
        }
    }

    /// The document a printed path names (the longest path suffix shared, at
    /// least the file and its folder), and the line it stands for.
    fn map_frame(
        &self,
        f: &Frame,
        in_scope: &dyn Fn(u32) -> bool,
    ) -> (MappedFrame, Option<FrameAt>) {
        let parts: Vec<&str> = f
            .file
            .split(['/', '\\'])
            .filter(|p| !p.is_empty())
            .collect();
        let unmapped = MappedFrame {
            frame: f.clone(),
            at: None,
            located: None,
        };
        let Some(name) = parts.last().map(|n| n.to_lowercase()) else {
            return (unmapped, None);
        };
        let shared = |doc: u32| {
            let path = &self.snapshot().docs[doc as usize].path;
            path.split('/')
                .rev()
                .zip(parts.iter().rev())
                .take_while(|(a, b)| a == *b)
                .count()
        };
        let best = self
            .sites()
            .by_file_name
            .get(&name)
            .into_iter()
            .flatten()
            .copied()
            .filter(|&d| in_scope(d))
            .map(|d| (shared(d), d))
            .filter(|&(n, _)| n >= 2)
            .max_by_key(|&(n, d)| (n, std::cmp::Reverse(d)));
        let Some((_, doc)) = best else {
            return (unmapped, None);
        };
        let (line, located) = self.locate(doc, f);
        let span = LineSpan {
            start: line,
            end: line,
        };
        let mapped = MappedFrame {
            frame: f.clone(),
            at: Some(self.cited(doc, span)),
            located: Some(located),
        };
        (mapped, Some(FrameAt { doc, line, located }))
    }

    /// The line of `doc` a frame stands for, and how it was found.
    fn locate(&self, doc: u32, f: &Frame) -> (u32, Located) {
        let text = String::from_utf8_lossy(self.snapshot().doc_bytes(doc));
        let lines: Vec<&str> = text.lines().collect();
        let last = lines.len().max(1) as u32;
        let at = |n: u32| lines.get(n as usize - 1).map(|l| l.trim());
        let Some(src) = f.source.as_deref().filter(|s| !s.is_empty()) else {
            return match f.line {
                n if (1..=last).contains(&n) => (n, Located::LineUnchecked),
                _ => (1, Located::File),
            };
        };
        if f.line >= 1 && at(f.line) == Some(src) {
            return (f.line, Located::Line);
        }
        let nearest = (1..=last)
            .filter(|&n| at(n) == Some(src))
            .min_by_key(|&n| n.abs_diff(f.line));
        if let Some(n) = nearest {
            return (n, Located::Moved);
        }
        let function = f.function.rsplit('.').next().unwrap_or(&f.function);
        let def = (!function.is_empty() && function != "<module>")
            .then(|| {
                (1..=last).find(|&n| {
                    at(n).is_some_and(|l| {
                        l.strip_prefix("def ")
                            .or_else(|| l.strip_prefix("async def "))
                            .is_some_and(|r| {
                                r.starts_with(function) && r[function.len()..].starts_with('(')
                            })
                    })
                })
            })
            .flatten();
        match def {
            Some(n) => (n, Located::Function),
            None => (1, Located::File),
        }
    }

    /// The statements whose message template and class fit the error, best first.
    fn raise_sites(
        &self,
        parsed: &ParsedError,
        message: &str,
        frames: &[Option<FrameAt>],
        in_scope: &dyn Fn(u32) -> bool,
    ) -> (Vec<RaiseSite>, Option<u32>) {
        let class = parsed.class_name();
        // Where the traceback says the error left the indexed code: its innermost mapped frame.
        // A line whose printed source text was found is the raise itself, whatever the message.
        let raised_at = frames.iter().rev().flatten().next().map(|f| {
            (
                f.doc,
                f.line,
                matches!(f.located, Located::Line | Located::Moved),
            )
        });
        let framed: Vec<u32> = frames.iter().flatten().map(|f| f.doc).collect();
        let innermost = parsed
            .frames
            .last()
            .map(|f| f.function.rsplit('.').next().unwrap_or(&f.function))
            .filter(|f| !f.is_empty());
        let message = Message::new(message);
        let mut scored: Vec<(f32, &Site, Option<&Template>, Match, bool)> = self
            .sites()
            .sites
            .iter()
            .filter(|s| in_scope(s.doc))
            .filter_map(|s| {
                let (template, m) = s
                    .templates
                    .iter()
                    .map(|t| (t, t.match_message(&message)))
                    .max_by(|a, b| {
                        (a.1.complete, a.1.explained)
                            .partial_cmp(&(b.1.complete, b.1.explained))
                            .unwrap_or(std::cmp::Ordering::Equal)
                    })
                    .map_or((None, Match::default()), |(t, m)| (Some(t), m));
                let said = m.complete && m.longest >= MIN_LITERAL;
                let at_frame = raised_at.filter(|&(doc, line, _)| {
                    doc == s.doc && (s.span.start..=s.span.end).contains(&line)
                });
                if !said && at_frame.is_none() {
                    return None;
                }
                let mut score = if said { m.explained } else { 0.0 };
                match class.map(|c| same_class(c, &s.class)) {
                    Some(true) => score += 0.5,
                    Some(false) => score -= 0.25,
                    None => {}
                }
                match at_frame {
                    Some((_, _, true)) => score += 2.0,
                    Some((_, _, false)) => score += 1.0,
                    // The frame's line moved (another version), but its function is this one.
                    None if framed.contains(&s.doc) && innermost == Some(s.function.as_str()) => {
                        score += 0.5
                    }
                    None if framed.contains(&s.doc) => score += 0.2,
                    None => {}
                }
                Some((score, s, template, m, at_frame.is_some()))
            })
            .collect();
        scored.sort_by(|a, b| {
            b.0.total_cmp(&a.0)
                .then(a.1.doc.cmp(&b.1.doc))
                .then(a.1.span.start.cmp(&b.1.span.start))
        });
        let top = scored.first().map(|t| t.1.doc);
        let sites = scored
            .into_iter()
            .take(MAX_SITES)
            .map(|(_, s, template, m, at_frame)| RaiseSite {
                at: self.cited(s.doc, s.span),
                exception: s.class.clone(),
                function: s.qualname.clone(),
                template: template.map_or_else(String::new, Template::display),
                explained: (m.explained * 1000.0).round() / 1000.0,
                at_frame,
                source: self
                    .snapshot()
                    .span_bytes(s.doc, s.span)
                    .map(|(b, _)| String::from_utf8_lossy(b).into_owned())
                    .unwrap_or_default(),
                last_changed: self.last_changed(s.doc, s.span),
            })
            .collect();
        (sites, top)
    }

    /// What the caller should know about versions and moved lines.
    fn notices(&self, req: &ExplainRequest, frames: &[MappedFrame]) -> Vec<String> {
        let mut notices = Vec::new();
        let moved = frames.iter().any(|f| {
            matches!(
                f.located,
                Some(Located::Moved | Located::Function | Located::File)
            )
        });
        let repos: Vec<&cairn_index::manifest::RepoRecord> = frames
            .iter()
            .filter_map(|f| f.at.as_ref())
            .filter_map(|c| c.doc_id.split('/').nth(1))
            .filter_map(|r| self.snapshot().manifest.repos.iter().find(|x| x.name == r))
            .collect();
        let held = |r: &cairn_index::manifest::RepoRecord| {
            format!(
                "{} at commit {} ({})",
                r.name,
                r.commit
                    .as_deref()
                    .map_or_else(|| "?".to_owned(), |c| c.chars().take(12).collect()),
                r.default_branch.as_deref().unwrap_or("HEAD")
            )
        };
        if let Some(v) = &req.version {
            let names: Vec<String> = repos.iter().map(|r| held(r)).collect();
            notices.push(format!(
                "you have version {v}; the index holds {}: frames are located by their printed source and function, not by line numbers alone",
                if names.is_empty() { "the repositories /version lists".to_owned() } else { names.join(", ") }
            ));
        }
        if moved {
            notices.push(
                "some frames' lines differ from the indexed commit (the installed version is not the indexed one); they were located by their source text or function name"
                    .to_owned(),
            );
        }
        notices.dedup();
        notices
    }

    fn cited(&self, doc: u32, span: LineSpan) -> Cited {
        let (github_url, permalink) = self.links(doc, span);
        Cited {
            doc_id: self.snapshot().docs[doc as usize].doc_id.to_string(),
            start_line: span.start,
            end_line: span.end,
            github_url,
            permalink,
        }
    }
}

fn validate(req: &ExplainRequest) -> Result<&str, SearchError> {
    let text = req.text.trim();
    if text.is_empty() {
        return Err(invalid("text", "must not be empty"));
    }
    if req.text.len() > MAX_TEXT_BYTES {
        return Err(invalid(
            "text",
            format!("must be at most {MAX_TEXT_BYTES} bytes (paste the traceback's last part)"),
        ));
    }
    if req.limit > MAX_EXPLAIN_LIMIT {
        return Err(invalid(
            "limit",
            format!("must be 1 to {MAX_EXPLAIN_LIMIT}"),
        ));
    }
    if req
        .version
        .as_ref()
        .is_some_and(|v| v.len() > 64 || v.trim().is_empty())
    {
        return Err(invalid("version", "must be 1 to 64 characters"));
    }
    Ok(text)
}

/// What an explanation found, for the response to report.
struct Findings {
    parsed: ParsedError,
    frames: Vec<MappedFrame>,
    raise_sites: Vec<RaiseSite>,
    query: String,
    search: SearchResponse,
    /// Outer frames left unread.
    skipped: usize,
}

/// The part of the message the matcher reads, or why the text gives nothing to go by.
fn message_of(parsed: &ParsedError) -> Result<String, SearchError> {
    let message: String = parsed.message.chars().take(MAX_MESSAGE_CHARS).collect();
    let has_words = |s: &str| {
        s.split(|c: char| !c.is_alphanumeric())
            .any(|w| w.chars().count() >= 2)
    };
    if !has_words(&message) && parsed.exception.is_none() && parsed.frames.is_empty() {
        return Err(invalid(
            "text",
            "holds no words: paste the error message or the traceback as text",
        ));
    }
    Ok(message)
}

/// The search for passages that explain the error, within `toolkit` and `repos`.
fn explain_search(
    req: &ExplainRequest,
    query: String,
    toolkit: Option<String>,
    repos: &HashSet<&str>,
) -> SearchRequest {
    SearchRequest {
        query,
        queries: Vec::new(),
        limit: if req.limit == 0 {
            DEFAULT_EXPLAIN_LIMIT
        } else {
            req.limit
        },
        filters: Filters {
            toolkit: toolkit.into_iter().collect(),
            // The installed version's ref, when one was chosen over the default.
            repo: match repos.iter().any(|r| r.contains('@'))
                && repos.len() <= crate::MAX_FILTER_VALUES
            {
                true => repos.iter().map(|r| (*r).to_owned()).collect(),
                false => Vec::new(),
            },
            ..Filters::default()
        },
        threshold: None,
        mode: Mode::Hybrid,
        groups: req.groups.clone(),
        deadline: req.deadline.clone(),
    }
}

/// The search seeded with the parsed parts: the class, the raising function, the message.
fn explain_query(parsed: &ParsedError, message: &str, top: Option<&RaiseSite>) -> String {
    let mut parts: Vec<&str> = Vec::new();
    if let Some(c) = parsed.class_name() {
        parts.push(c);
    }
    if let Some(s) = top.filter(|s| !s.function.is_empty()) {
        parts.push(&s.function);
    }
    let first_line = message.lines().next().unwrap_or("");
    parts.push(first_line);
    let q: String = parts
        .join(" ")
        .chars()
        .take(crate::MAX_QUERY_CHARS / 2)
        .collect();
    match q.trim() {
        "" => parsed
            .frames
            .last()
            .map_or_else(|| "error".to_owned(), |f| f.function.clone()),
        t => t.to_owned(),
    }
}

/// Whether a printed class and a source's class name the same error (a C++
/// exception reaches Python under pybind11's name for it).
pub(super) fn same_class(printed: &str, source: &str) -> bool {
    let norm = |s: &str| {
        let last = s
            .rsplit(['.', ':'])
            .next()
            .unwrap_or(s)
            .to_ascii_lowercase()
            .replace('_', "");
        match last.as_str() {
            "invalidargument" | "domainerror" | "lengtherror" => "valueerror".to_owned(),
            "outofrange" => "indexerror".to_owned(),
            "badalloc" => "memoryerror".to_owned(),
            "exception" | "logicerror" => "runtimeerror".to_owned(),
            _ => last,
        }
    };
    norm(printed) == norm(source)
}
