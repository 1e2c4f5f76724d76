//! An answer as Slack shows it: Block Kit, at most [`MAX_HITS`] hits, each
//! its `doc_id:a-b` linked to the commit permalink, its focus lines as a
//! code block (at most [`MAX_LINES`]), its repository and commit; "not
//! enough evidence" said in words; a link to the web page for more. All
//! text escaped for Slack's mrkdwn, whose only special characters are
//! `&`, `<` and `>` (and ``` inside a code block).

use cairn_search::{Hit, SearchResponse};
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// Hits shown.
pub const MAX_HITS: usize = 5;
/// Lines of each hit's code block.
pub const MAX_LINES: usize = 15;
/// Characters of one code line shown (Slack caps a section's text at 3,000).
const MAX_LINE_CHARS: usize = 150;

/// Text as Slack's mrkdwn shows it literally.
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The message answering `resp`; `focus` gives each hit's focus lines as
/// read (its snippet where they could not be), `commits` each repository's
/// indexed commit, `more` the web page's URL for the same question.
pub fn answer(
    resp: &SearchResponse,
    focus: &[Option<String>],
    commits: &BTreeMap<String, String>,
    more: Option<&str>,
) -> Value {
    let hits: Vec<&Hit> = resp.hits.iter().take(MAX_HITS).collect();
    let question = escape(&resp.query);
    let (headline, text) = match (resp.insufficient_evidence, hits.len()) {
        (_, 0) => (
            format!("No passage in the index answers “{question}” (insufficient evidence)."),
            "No passage answers this (insufficient evidence).".to_owned(),
        ),
        (true, n) => (
            format!(
                "Insufficient evidence: no passage answers “{question}” well. The {n} closest, as related reading only:"
            ),
            "Insufficient evidence; related passages follow.".to_owned(),
        ),
        (false, n) => (
            format!(
                "*{n} cited passage{}* for “{question}”:",
                if n == 1 { "" } else { "s" }
            ),
            format!("{n} cited passages for “{question}”"),
        ),
    };
    let mut blocks = vec![section(&headline)];
    for (i, hit) in hits.into_iter().enumerate() {
        let lines = focus.get(i).and_then(Option::as_deref);
        blocks.push(section(&hit_text(hit, lines)));
        let commit = commits.get(&hit.repo).map(String::as_str).unwrap_or("");
        let short = commit.get(..12).unwrap_or(commit);
        blocks.push(json!({
            "type": "context",
            "elements": [{"type": "mrkdwn", "text": format!("{} at commit `{short}` · <{}|on the default branch>", escape(&hit.repo), escape(&hit.github_url))}]
        }));
    }
    if let Some(url) = more {
        blocks.push(json!({
            "type": "context",
            "elements": [{"type": "mrkdwn", "text": format!("<{}|More on the web page>", escape(url))}]
        }));
    }
    json!({"text": text, "blocks": blocks})
}

/// A message saying something went wrong, in words.
pub fn trouble(what: &str) -> Value {
    json!({"text": escape(what), "blocks": [section(&escape(what))]})
}

fn section(mrkdwn: &str) -> Value {
    json!({"type": "section", "text": {"type": "mrkdwn", "text": mrkdwn}})
}

/// One hit: its cited span linked to the permalink, then its focus lines
/// (`lines`; the snippet, without its term marks, when they are missing).
fn hit_text(hit: &Hit, lines: Option<&str>) -> String {
    let (a, b) = match (hit.focus_start, hit.focus_end) {
        (Some(a), Some(b)) => (a, b),
        _ => (hit.start_line, hit.end_line),
    };
    let title = match hit.title.trim() {
        "" => String::new(),
        t => format!(" — {}", escape(t)),
    };
    let text = match lines {
        Some(l) => l.to_owned(),
        None => hit.snippet.replace("**", ""),
    };
    let code: Vec<String> = text
        .lines()
        .take(MAX_LINES)
        .map(|l| {
            let l: String = l.chars().take(MAX_LINE_CHARS).collect();
            // A ``` inside the block would end it: break it with zero-width spaces.
            escape(&l).replace("```", "`\u{200b}`\u{200b}`")
        })
        .collect();
    format!(
        "*<{}|{}:{a}-{b}>*{title}\n```{}```",
        escape(&hit.permalink),
        escape(&hit.doc_id),
        code.join("\n")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mrkdwn_specials_and_code_fences_are_escaped() {
        assert_eq!(escape("a < b && c > d"), "a &lt; b &amp;&amp; c &gt; d");
        assert_eq!(escape("<!channel>"), "&lt;!channel&gt;");
    }
}
