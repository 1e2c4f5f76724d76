//! The `retrieve` call: its request ([`SpanRequest`], also how the CLI, the
//! pages and MCP resources write a span), its answer and text form, and the
//! exact lines of a document, alone or in a batch, within the
//! span and byte limits.

use crate::engine::{Engine, MAX_SPAN_LINES, MAX_TEXT_BYTES, PageCitation, TextFormat};
use crate::error::{SearchError, invalid};
use cairn_index::{IndexVersion, LineSpan};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::sync::Arc;
use utoipa::ToSchema;

/// How a live engine finds the earlier version a cited span names.
pub type Earlier<'a> = &'a dyn Fn(&IndexVersion) -> Result<Arc<Engine>, SearchError>;

impl Engine {
    /// Lines `start..=end` of a document, clamped to its end, to
    /// [`MAX_SPAN_LINES`] lines and to [`MAX_TEXT_BYTES`] bytes of text (whole
    /// lines): the exact bytes, or a notebook's cells unless `raw` is asked.
    /// A span naming another `index_version` is read from it, opened from
    /// this engine's root ([`Engine::retrieve_cited`] takes open ones).
    pub fn retrieve(
        &self,
        req: &SpanRequest,
        groups: Option<&[String]>,
    ) -> Result<RetrieveResponse, SearchError> {
        self.retrieve_cited(req, groups, &|v| self.open_version(v).map(Arc::new))
    }

    /// [`Engine::retrieve`], finding earlier versions with `earlier`. Their
    /// lines are read only while the caller may read the document in this
    /// (the live) version: a document whose groups were tightened, or that
    /// was removed, is not read from an older version either.
    pub fn retrieve_cited(
        &self,
        req: &SpanRequest,
        groups: Option<&[String]>,
        earlier: Earlier<'_>,
    ) -> Result<RetrieveResponse, SearchError> {
        match self.cited_engine(req, groups, earlier)? {
            Some(e) => e.retrieve_within(req, groups, MAX_TEXT_BYTES),
            None => self.retrieve_within(req, groups, MAX_TEXT_BYTES),
        }
    }

    /// The earlier engine `req` names, after checking the caller may read
    /// the document now; `None` when it names this version or none.
    fn cited_engine(
        &self,
        req: &SpanRequest,
        groups: Option<&[String]>,
        earlier: Earlier<'_>,
    ) -> Result<Option<Arc<Engine>>, SearchError> {
        match &req.index_version {
            Some(v) if *v != self.snap.version => {
                self.visible_doc(&req.doc_id, groups)?;
                Ok(Some(earlier(v)?))
            }
            _ => Ok(None),
        }
    }

    /// [`Engine::retrieve`] with at most `budget` bytes of text.
    fn retrieve_within(
        &self,
        req: &SpanRequest,
        groups: Option<&[String]>,
        budget: usize,
    ) -> Result<RetrieveResponse, SearchError> {
        if let Some(v) = &req.index_version
            && *v != self.snap.version
        {
            // The connector opens the cited version; answering from another
            // would cite lines the caller never saw.
            return Err(invalid(
                "index_version",
                format!("this engine reads version {}, not {v}", self.snap.version),
            ));
        }
        let doc = self.visible_doc(&req.doc_id, groups)?;
        let (start, end) = req.span();
        let asked = LineSpan::new(start, end)
            .map_err(|e| invalid(if start < 1 { "start" } else { "end" }, e.to_string()))?;
        let total = self.snap.line_index(doc).line_count();
        if asked.start > total {
            return Err(invalid(
                "start",
                format!(
                    "start line {} is past the end of the file ({total} lines)",
                    asked.start
                ),
            ));
        }
        let mut span = LineSpan {
            start: asked.start,
            end: asked
                .end
                .min(total)
                .min(asked.start.saturating_add(MAX_SPAN_LINES - 1)),
        };
        // Whole lines within the budget. Rendering a shorter span of a notebook
        // can add a closing fence, so shrink until it fits; the span shrinks
        // every round.
        let mut text = self.span_text(doc, span, req.raw);
        while text.text.len() > budget && span.end > span.start {
            span.end = text.last_line_within(span, budget).min(span.end - 1);
            text = self.span_text(doc, span, req.raw);
        }
        // A single line longer than the budget is cut.
        let cut = text.text.len() > budget;
        if cut {
            let mut end = budget;
            while !text.text.is_char_boundary(end) {
                end -= 1;
            }
            text.text.truncate(end);
            text.raw_lines.truncate(text.text.lines().count());
        }
        let d = &self.snap.docs[doc as usize];
        let (github_url, permalink) = self.links(doc, span);
        Ok(RetrieveResponse {
            doc_id: d.doc_id.to_string(),
            start_line: span.start,
            end_line: span.end,
            text: text.text,
            text_format: text.format,
            raw_lines: text.raw_lines,
            total_lines: total,
            clamped: span != asked || cut,
            page: self.page_of(doc, span),
            github_url,
            permalink,
            content_sha256: d.sha256.clone(),
            index_version: self.snap.version.to_string(),
        })
    }

    /// Several retrieves; each item succeeds or fails on its own. Together they
    /// return at most [`MAX_TEXT_BYTES`] bytes of text: later items are clamped
    /// to what is left, and once nothing is left they fail with `invalid_argument`.
    pub fn retrieve_batch(
        &self,
        items: &[SpanRequest],
        groups: Option<&[String]>,
    ) -> Result<Vec<Result<RetrieveResponse, SearchError>>, SearchError> {
        self.retrieve_batch_cited(
            items,
            groups,
            &|v| self.open_version(v).map(Arc::new),
            &crate::Deadline::none(),
        )
    }

    /// [`Engine::retrieve_batch`], finding earlier versions with `earlier`
    /// (as [`Engine::retrieve_cited`] does, within the batch's one budget):
    /// at most [`MAX_BATCH_VERSIONS`] of them, each found once, and the
    /// deadline looked at before each item.
    pub fn retrieve_batch_cited(
        &self,
        items: &[SpanRequest],
        groups: Option<&[String]>,
        earlier: Earlier<'_>,
        deadline: &crate::Deadline,
    ) -> Result<Vec<Result<RetrieveResponse, SearchError>>, SearchError> {
        if items.is_empty() || items.len() > MAX_BATCH {
            return Err(invalid(
                "items",
                format!("must hold 1 to {MAX_BATCH} items"),
            ));
        }
        let cited: std::collections::BTreeSet<&IndexVersion> = items
            .iter()
            .filter_map(|i| i.index_version.as_ref())
            .filter(|v| **v != self.snap.version)
            .collect();
        if cited.len() > MAX_BATCH_VERSIONS {
            return Err(invalid(
                "items",
                format!(
                    "cite at most {MAX_BATCH_VERSIONS} earlier index versions in one batch (these cite {})",
                    cited.len()
                ),
            ));
        }
        // Each earlier version found once for the whole batch.
        let opened: std::cell::RefCell<Vec<(IndexVersion, Arc<Engine>)>> = Default::default();
        let once = |v: &IndexVersion| -> Result<Arc<Engine>, SearchError> {
            if let Some((_, e)) = opened.borrow().iter().find(|(k, _)| k == v) {
                return Ok(Arc::clone(e));
            }
            let e = earlier(v)?;
            opened.borrow_mut().push((v.clone(), Arc::clone(&e)));
            Ok(e)
        };
        let mut left = MAX_TEXT_BYTES;
        let mut out = Vec::with_capacity(items.len());
        for item in items {
            deadline.check()?;
            if left == 0 {
                out.push(Err(invalid(
                    "items",
                    format!("the batch's {MAX_TEXT_BYTES} bytes of text are used up; ask for fewer or shorter spans"),
                )));
                continue;
            }
            let r = match self.cited_engine(item, groups, &once) {
                Ok(Some(e)) => e.retrieve_within(item, groups, left),
                Ok(None) => self.retrieve_within(item, groups, left),
                Err(e) => Err(e),
            };
            if let Ok(r) = &r {
                left = left.saturating_sub(r.text.len());
            }
            out.push(r);
        }
        Ok(out)
    }
}

/// Most items in one retrieve_batch.
pub const MAX_BATCH: usize = 50;

/// Most earlier index versions one batch may cite: each is opened (and
/// verified) the first time, and a batch rotating over more was a way to make
/// the server reopen versions for every item.
pub const MAX_BATCH_VERSIONS: usize = 2;

/// Lines of one document, as every connector asks for them (the HTTP body,
/// the MCP arguments, and one item of a batch).
#[derive(Clone, Debug, Deserialize, ToSchema, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SpanRequest {
    /// `<category>/<repo>/<path>`, as search hits give it.
    pub doc_id: String,
    /// First line, 1-based (default 1).
    #[serde(default)]
    pub start: Option<i64>,
    /// Last line, inclusive (default: start + 399). At most 400 lines are returned.
    #[serde(default)]
    pub end: Option<i64>,
    /// The exact bytes of the lines even for a notebook (default false: a
    /// notebook span comes as its cells, `text_format: notebook-cells`).
    #[serde(default)]
    pub raw: bool,
    /// The index version the lines were cited from (a search result's
    /// `index_version`): the lines come from that version while it is kept,
    /// and a version no longer kept is refused (`version_gone`) rather than
    /// answered with other lines. Default: the version serving now.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    #[schemars(with = "Option<String>")]
    pub index_version: Option<IndexVersion>,
}

impl SpanRequest {
    /// The same lines as exact bytes (`raw`) or in the reader's form.
    pub fn raw(self, raw: bool) -> Self {
        Self { raw, ..self }
    }

    /// Lines `start..=end` of `doc_id`, in the reader's form.
    pub fn lines(doc_id: impl Into<String>, start: i64, end: i64) -> Self {
        Self {
            doc_id: doc_id.into(),
            start: Some(start),
            end: Some(end),
            raw: false,
            index_version: None,
        }
    }

    /// `start..=end` with the defaults filled in: from line 1, [`MAX_SPAN_LINES`] lines long.
    pub fn span(&self) -> (i64, i64) {
        let start = self.start.unwrap_or(1);
        let end = self
            .end
            .unwrap_or_else(|| start.saturating_add(i64::from(MAX_SPAN_LINES) - 1));
        (start, end)
    }
}

/// On the command line a span is `DOC_ID --lines START:END [--raw]`: one
/// flag for both ends reads better than two, so this is written by hand
/// rather than derived.
impl clap::Args for SpanRequest {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        use clap::{Arg, ArgAction};
        cmd.arg(
            Arg::new("doc_id")
                .required(true)
                .value_name("DOC_ID")
                .help("`<category>/<repo>/<path>`, as search hits give it"),
        )
        .arg(
            Arg::new("lines")
                .long("lines")
                .value_name("START:END")
                .default_value("1:400")
                .help("The lines, 1-based and inclusive (at most 400)"),
        )
        .arg(Arg::new("raw").long("raw").action(ArgAction::SetTrue).help(
            "The file's exact bytes even for a notebook (by default a notebook shows its cells)",
        ))
        .arg(
            Arg::new("index_version")
                .long("index-version")
                .value_name("VERSION")
                .value_parser(|s: &str| IndexVersion::parse(s).map_err(|e| e.to_string()))
                .help("Read the lines as at this kept index version (a hit's index_version)"),
        )
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_args(cmd)
    }
}

impl clap::FromArgMatches for SpanRequest {
    fn from_arg_matches(m: &clap::ArgMatches) -> Result<Self, clap::Error> {
        let doc_id = m.get_one::<String>("doc_id").cloned().unwrap_or_default();
        let lines = m.get_one::<String>("lines").map_or("1:400", String::as_str);
        let (start, end) = parse_line_range(lines).ok_or_else(|| {
            clap::Error::raw(
                clap::error::ErrorKind::ValueValidation,
                format!("--lines must be START:END with 1 <= START <= END, not {lines:?}\n"),
            )
        })?;
        Ok(Self {
            index_version: m.get_one::<IndexVersion>("index_version").cloned(),
            ..Self::lines(doc_id, start.into(), end.into()).raw(m.get_flag("raw"))
        })
    }

    fn update_from_arg_matches(&mut self, m: &clap::ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

/// `START:END`, `START-END` or one line, 1-based and inclusive, `START <= END`:
/// how the CLI, the pages' URLs and MCP resource URIs write a span.
pub fn parse_line_range(s: &str) -> Option<(u32, u32)> {
    let (a, b) = s.split_once([':', '-']).unwrap_or((s, s));
    let (a, b): (u32, u32) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
    (a >= 1 && a <= b).then_some((a, b))
}

/// Exact lines of one document.
#[derive(Clone, Debug, Serialize, ToSchema, schemars::JsonSchema)]
pub struct RetrieveResponse {
    /// The document.
    pub doc_id: String,
    /// First line returned.
    pub start_line: u32,
    /// Last line returned.
    pub end_line: u32,
    /// The lines, byte for byte with line endings kept (`text_format: raw`),
    /// or for a notebook the cells they hold (`notebook-cells`; ask `raw` for the bytes).
    pub text: String,
    /// The form `text` is in.
    pub text_format: TextFormat,
    /// For `notebook-cells`: the raw line of the file each line of `text` stands for.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub raw_lines: Vec<u32>,
    /// Lines in the whole file.
    pub total_lines: u32,
    /// The span asked for ran past the end or over the cap and was cut.
    pub clamped: bool,
    /// For a PDF: the page the lines are on and their lines within it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page: Option<PageCitation>,
    /// On the default branch.
    pub github_url: String,
    /// On the exact commit.
    pub permalink: String,
    /// sha256 of the whole file.
    pub content_sha256: String,
    /// The version answering.
    pub index_version: String,
}

impl RetrieveResponse {
    /// The raw line of the file that line `i` (0-based) of `text` stands for.
    pub fn line_number(&self, i: usize) -> u32 {
        self.text_format
            .line_number(&self.raw_lines, self.start_line, i)
    }
}

impl fmt::Display for RetrieveResponse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{}:{}-{} of {} lines{}{}",
            self.doc_id,
            self.start_line,
            self.end_line,
            self.total_lines,
            if self.clamped { " (clamped)" } else { "" },
            match self.text_format {
                TextFormat::Raw => "",
                TextFormat::NotebookCells => " (as notebook cells; --raw for the exact lines)",
            }
        )?;
        writeln!(f, "{}", self.permalink)?;
        for (i, line) in self.text.lines().enumerate() {
            writeln!(f, "{:6}  {line}", self.line_number(i))?;
        }
        Ok(())
    }
}
