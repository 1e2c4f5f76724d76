//! An answer as Slack shows it: a configured model's answer in words with
//! its checked citations ([`asked`]), or else Block Kit of at most [`MAX_HITS`] hits, each
//! its `doc_id:a-b` linked to the commit permalink, its focus lines as a
//! code block (at most [`MAX_LINES`]), its repository and commit; "not
//! enough evidence" said in words; a link to the web page for more. All
//! text escaped for Slack's mrkdwn, whose only special characters are
//! `&`, `<` and `>` (and ``` inside a code block).

use crate::ops::ask::{AskResponse, Step};
use cairn_search::{Hit, SearchResponse};
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// Hits shown.
pub const MAX_HITS: usize = 5;
/// Lines of each hit's code block.
pub const MAX_LINES: usize = 15;
/// Characters of one code line shown.
const MAX_LINE_CHARS: usize = 150;
/// Characters of one text object, as Slack counts them after escaping
/// (a section's text over 3,000 makes Slack refuse the whole message).
pub const MAX_TEXT_CHARS: usize = 3000;
/// Characters of a label (a doc id, a title, the question) shown.
const MAX_LABEL_CHARS: usize = 300;
/// Characters of a link's address: a longer one (a long non-ASCII path,
/// percent-encoded) is left out and the web page links instead.
const MAX_URL_CHARS: usize = 1500;

/// Text as Slack's mrkdwn shows it literally.
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// `text` escaped, cut so that the escaped form has at most `max`
/// characters (`…` marking a cut).
pub fn escape_within(text: &str, max: usize) -> String {
    let mut out = String::new();
    let mut chars = 0;
    for c in text.chars() {
        let e = match c {
            '&' => "&amp;",
            '<' => "&lt;",
            '>' => "&gt;",
            _ => "",
        };
        let n = if e.is_empty() { 1 } else { e.len() };
        if chars + n > max.saturating_sub(1) {
            out.push('…');
            return out;
        }
        match e.is_empty() {
            true => out.push(c),
            false => out.push_str(e),
        }
        chars += n;
    }
    out
}

/// A long doc id with its middle left out, so that its repository and its
/// file's name both show.
fn middle_cut(id: &str) -> String {
    let n = id.chars().count();
    if n <= MAX_LABEL_CHARS {
        return id.to_owned();
    }
    let (head, tail) = (MAX_LABEL_CHARS / 3, MAX_LABEL_CHARS / 2);
    let start: String = id.chars().take(head).collect();
    let end: String = id.chars().skip(n - tail).collect();
    format!("{start}…{end}")
}

/// The message answering `resp`; `focus` gives each hit's focus lines as
/// read (its snippet where they could not be), `commits` each repository's
/// indexed commit, `more` the web page's URL for the same question. Every
/// text object fits Slack's limits after escaping, whatever the paths.
pub fn answer(
    resp: &SearchResponse,
    focus: &[Option<String>],
    commits: &BTreeMap<String, String>,
    more: Option<&str>,
) -> Value {
    let hits: Vec<&Hit> = resp.hits.iter().take(MAX_HITS).collect();
    let question = escape_within(&resp.query, MAX_LABEL_CHARS);
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
    let more = more.filter(|u| u.chars().count() <= MAX_URL_CHARS);
    let mut blocks = vec![section(&headline, false)];
    for (i, hit) in hits.into_iter().enumerate() {
        let lines = focus.get(i).and_then(Option::as_deref);
        blocks.push(section(&hit_text(hit, &resp.query, lines, more), true));
        let commit = commits.get(&hit.repo).map(String::as_str).unwrap_or("");
        let short = commit.get(..12).unwrap_or(commit);
        let repo = escape_within(&hit.repo, MAX_LABEL_CHARS);
        let branch = match hit.github_url.chars().count() <= MAX_URL_CHARS {
            true => format!(" · <{}|on the default branch>", escape(&hit.github_url)),
            false => String::new(),
        };
        blocks.push(json!({
            "type": "context",
            "elements": [{"type": "mrkdwn", "text": format!("{repo} at commit `{short}`{branch}")}]
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

/// The message answering with `asked`, a configured model's answer whose
/// citations held: the answer in words, then each citation linked to its
/// permalink, what did not hold, and the web page for more.
pub fn asked(asked: &AskResponse, more: Option<&str>) -> Value {
    let mut blocks = vec![section(
        &escape_within(&asked.answer, MAX_TEXT_CHARS),
        false,
    )];
    let cites: Vec<String> = asked
        .citations
        .iter()
        .map(|c| {
            let label = escape(&format!(
                "{}:{}-{}",
                middle_cut(&c.doc_id),
                c.start_line,
                c.end_line
            ));
            match c.permalink.chars().count() <= MAX_URL_CHARS {
                true => format!("*[{}]* <{}|{label}>", c.n, escape(&c.permalink)),
                false => format!("*[{}]* {label}", c.n),
            }
        })
        .collect();
    // Slack allows at most 10 elements in a context block.
    for group in cites.chunks(10) {
        let elements: Vec<Value> = group
            .iter()
            .map(|t| json!({"type": "mrkdwn", "text": t}))
            .collect();
        blocks.push(json!({"type": "context", "elements": elements}));
    }
    if !asked.unverified.is_empty() {
        let said: Vec<String> = asked.unverified.iter().map(|u| u.to_string()).collect();
        let text = format!("Not verified: {}", said.join("; "));
        blocks.push(json!({
            "type": "context",
            "elements": [{"type": "mrkdwn", "text": escape_within(&text, MAX_TEXT_CHARS)}]
        }));
    }
    if let Some(url) = more.filter(|u| u.chars().count() <= MAX_URL_CHARS) {
        blocks.push(json!({
            "type": "context",
            "elements": [{"type": "mrkdwn", "text": format!("<{}|More on the web page>", escape(url))}]
        }));
    }
    let n = asked.citations.len();
    let text = format!(
        "An answer citing {n} passage{}",
        if n == 1 { "" } else { "s" }
    );
    json!({"text": text, "blocks": blocks})
}

/// The message shown while the model works on `question`: the tools it
/// has called so far (`steps`), newest last.
pub fn working(question: &str, steps: &[Step]) -> Value {
    let head = format!(
        "Reading the index for: _{}_ …",
        escape_within(question, MAX_TEXT_CHARS / 2)
    );
    let mut blocks = vec![section(&head, false)];
    let lines: Vec<String> = steps
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let result = match (&s.error, s.returned.len()) {
                (Some(_), _) => "failed".to_owned(),
                (None, n) => format!("{n} passage{}", if n == 1 { "" } else { "s" }),
            };
            format!(
                "{}. `{}` {} → {result}",
                i + 1,
                escape(&middle_cut(&s.tool)),
                escape(&middle_cut(&s.arguments))
            )
        })
        .collect();
    // Slack allows at most 10 elements in a context block: the latest ten.
    let latest = &lines[lines.len().saturating_sub(10)..];
    if !latest.is_empty() {
        let elements: Vec<Value> = latest
            .iter()
            .map(|t| json!({"type": "mrkdwn", "text": t}))
            .collect();
        blocks.push(json!({"type": "context", "elements": elements}));
    }
    json!({"text": "cairn is reading the index…", "blocks": blocks})
}

/// A message saying something went wrong, in words.
pub fn trouble(what: &str) -> Value {
    let said = escape_within(what, MAX_TEXT_CHARS);
    json!({"text": said, "blocks": [section(&said, false)]})
}

/// A section of mrkdwn; `verbatim` for text Slack must not turn into links
/// or mentions of its own (quoted code).
fn section(mrkdwn: &str, verbatim: bool) -> Value {
    let mut text = json!({"type": "mrkdwn", "text": mrkdwn});
    if verbatim {
        text["verbatim"] = true.into();
    }
    json!({"type": "section", "text": text})
}

/// One hit: its cited span linked to the permalink (to the web page, or
/// not linked, when the permalink is too long to send), then its focus
/// lines (`lines`; the snippet, without its term marks, when they are
/// missing), as many as fit [`MAX_TEXT_CHARS`] once escaped.
fn hit_text(hit: &Hit, query: &str, lines: Option<&str>, more: Option<&str>) -> String {
    let (a, b) = match (hit.focus_start, hit.focus_end) {
        (Some(a), Some(b)) => (a, b),
        _ => (hit.start_line, hit.end_line),
    };
    let title = match hit.title.trim() {
        "" => String::new(),
        t => format!(" — {}", escape_within(t, MAX_LABEL_CHARS)),
    };
    let label = format!(
        "{}:{a}-{b}",
        escape_within(&middle_cut(&hit.doc_id), MAX_LABEL_CHARS)
    );
    let link = [hit.permalink.as_str()]
        .into_iter()
        .chain(more)
        .find(|u| u.chars().count() <= MAX_URL_CHARS);
    let head = match link {
        Some(url) => format!("*<{}|{label}>*{title}\n", escape(url)),
        None => format!("*{label}*{title}\n"),
    };
    let text = match lines {
        Some(l) => l.to_owned(),
        None => cairn_search::rank::unmark(&hit.snippet, query),
    };
    // The fences and the head count too; whole lines only.
    let mut room = MAX_TEXT_CHARS.saturating_sub(head.chars().count() + 6);
    let mut code: Vec<String> = Vec::new();
    for l in text.lines().take(MAX_LINES) {
        let l: String = l.chars().take(MAX_LINE_CHARS).collect();
        // A ``` inside the block would end it: break it with zero-width spaces.
        let l = escape(&l).replace("```", "`\u{200b}`\u{200b}`");
        let n = l.chars().count() + 1;
        if n > room {
            break;
        }
        room -= n;
        code.push(l);
    }
    format!("{head}```{}```", code.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mrkdwn_specials_and_code_fences_are_escaped() {
        assert_eq!(escape("a < b && c > d"), "a &lt; b &amp;&amp; c &gt; d");
        assert_eq!(escape("<!channel>"), "&lt;!channel&gt;");
        assert_eq!(escape_within("a < b", 100), "a &lt; b");
        // Cut by what Slack counts: the escaped characters.
        let cut = escape_within(&"<".repeat(1000), 20);
        assert_eq!(cut.chars().count(), 17);
        assert!(cut.ends_with("&lt;…"));
        assert!(escape_within(&"é".repeat(5000), 300).chars().count() <= 300);
        let id = format!("tools/beta/{}/file.cpp", "é".repeat(1000));
        let label = middle_cut(&id);
        assert!(label.starts_with("tools/beta/") && label.ends_with("/file.cpp"));
        assert!(label.chars().count() <= MAX_LABEL_CHARS);
    }
}
