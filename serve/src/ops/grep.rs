//! `grep`: every line matching a literal or a regular expression, cited.

use super::{Call, Meta, Method, Op, Route, Toolset};
use crate::problem::ApiError;
use cairn_search::{Filters, GrepRequest, GrepResponse};
use schemars::JsonSchema;
use serde::Deserialize;

/// The part of the time left that a grep scans for before it answers with
/// what it found.
const GREP_SHARE: f64 = 0.8;

/// A grep.
#[derive(Debug, Deserialize, JsonSchema, clap::Args)]
#[schemars(deny_unknown_fields)]
pub struct GrepArgs {
    /// What to find: a literal string, or with regex=true a regular expression (RE2 syntax: no backreferences or lookaround), matched within one line; up to 1,000 bytes.
    pub pattern: String,
    /// The pattern is a regular expression (default false: a literal).
    #[serde(default)]
    #[arg(long, short = 'E')]
    pub regex: bool,
    /// Letters match either case (default false: case matters, as in git grep).
    #[serde(default)]
    #[arg(long, short = 'i')]
    pub ignore_case: bool,
    /// Only where the pattern stands as a whole word.
    #[serde(default)]
    #[arg(long, short = 'w')]
    pub word: bool,
    /// The filters.
    #[serde(flatten)]
    #[command(flatten)]
    pub filters: Filters,
    /// Only paths inside their repository matching this glob, e.g. `*.py` or `src/**/*.cpp`.
    #[serde(default)]
    #[arg(long, value_name = "GLOB")]
    pub path: Option<String>,
    /// Lines of context around each match, 0 to 5 (default 0).
    #[serde(default)]
    #[arg(long, short = 'C')]
    pub context: Option<u32>,
    /// Matches wanted, 1 to 1,000 (default 100).
    #[serde(default)]
    #[arg(long)]
    pub limit: Option<usize>,
    /// The previous page's next_cursor, to go on from where it stopped.
    #[serde(default)]
    #[arg(long)]
    pub cursor: Option<String>,
}

impl GrepArgs {
    /// The library request for `call`.
    pub fn into_request(self, call: &Call) -> GrepRequest {
        self.into_request_until(&call.deadline, call.groups())
    }

    /// The library request for a caller of `groups` waiting until `deadline`.
    fn into_request_until(
        self,
        deadline: &cairn_search::Deadline,
        groups: Option<Vec<String>>,
    ) -> GrepRequest {
        GrepRequest {
            pattern: self.pattern,
            regex: self.regex,
            case_sensitive: !self.ignore_case,
            word: self.word,
            filters: self.filters,
            path: self.path,
            context: self.context.unwrap_or(0),
            limit: self.limit.unwrap_or(0),
            cursor: self.cursor,
            groups,
            // Sooner than the call's own, so a slow scan answers with its
            // partial page and next_cursor while the caller still waits.
            deadline: deadline.sooner(GREP_SHARE),
        }
    }
}

/// The operation.
pub struct Grep;

impl Op for Grep {
    type Args = GrepArgs;
    type Output = GrepResponse;
    const META: Meta = Meta {
        title: "Grep",
        tool: Some("grep"),
        routes: &[Route {
            method: Method::Get,
            path: "/grep",
            operation_id: "grepLines",
            summary: "Every line matching a string or regular expression, like git grep.",
        }],
        tag: "browse",
        description: "Exact search like git grep over the indexed commits: every line matching a literal (or regex=true: RE2), grouped by document, each a cited span with GitHub links. Use it for an exact string, option or message; paged: pass next_cursor back as cursor.",
        answers: "Matching lines by document, each with its span and links",
        on_cpu: true,
        cli: Some("grep"),
        toolset: Toolset::Code,
        ..Meta::READ
    };

    fn run(a: GrepArgs, call: &Call) -> Result<GrepResponse, ApiError> {
        Ok(call.engine.grep(&a.into_request(call))?)
    }

    fn text(r: &GrepResponse) -> String {
        r.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    /// Third review, finding 5: the scan's deadline comes before the call's
    /// (the pool's), so a slow grep answers its partial page with a cursor
    /// while its caller still waits, instead of the pool's 503.
    #[test]
    fn the_scan_stops_before_the_call_does() {
        let args = GrepArgs {
            pattern: "x".into(),
            regex: false,
            ignore_case: false,
            word: false,
            filters: Filters::default(),
            path: None,
            context: None,
            limit: None,
            cursor: None,
        };
        let until = Instant::now() + Duration::from_secs(10);
        let scan = args.into_request_until(&cairn_search::Deadline::at(until), None);
        let stops = scan.deadline.instant().expect("a deadline");
        let left = stops.saturating_duration_since(Instant::now());
        assert!(left <= Duration::from_secs(8), "{left:?}");
        assert!(left >= Duration::from_secs(7), "{left:?}");
    }
}
