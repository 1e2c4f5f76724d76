//! Syntax highlighting on the server (syntect's bundled grammars, no
//! external assets): each line becomes HTML with `s-<scope>` classes that the
//! page's stylesheet colours, light or dark.

use super::html::esc;
use cairn_index::Language;
use std::sync::OnceLock;
use std::time::{Duration, Instant};
use syntect::html::{ClassStyle, line_tokens_to_classed_spans};
use syntect::parsing::{ParseState, ScopeStack, SyntaxReference, SyntaxSet};

/// Class names carry this prefix, so page styles and scopes cannot collide.
const STYLE: ClassStyle = ClassStyle::SpacedPrefixed { prefix: "s-" };
/// Lines longer than this (minified files, data, long generated names) are
/// shown plain and not parsed: the grammars' regexes backtrack on them (a
/// file of 2,000-character identifier lines took seconds a page), and colour
/// would not help.
const MAX_LINE: usize = 300;
/// The time one page's colouring may take; the lines after are plain.
const PAGE_BUDGET: Duration = Duration::from_millis(200);

fn syntaxes() -> &'static SyntaxSet {
    static SET: OnceLock<SyntaxSet> = OnceLock::new();
    SET.get_or_init(SyntaxSet::load_defaults_newlines)
}

/// The grammar for a file, by its extension (notebook cells read as Markdown).
fn syntax_for(path: &str) -> Option<&'static SyntaxReference> {
    let set = syntaxes();
    // cairn's languages by their grammar in syntect's set (which has none
    // for Fortran); any other file by its own extension.
    let name = path.rsplit('/').next().unwrap_or(path);
    let own = match cairn_index::language::extension(path) {
        // A dotfile (`.bashrc`) is named by what follows its dot.
        e if e.is_empty() => name.trim_start_matches('.').to_owned(),
        e => e,
    };
    let ext = match Language::of_path(path) {
        Language::Notebook => "md",
        Language::Python => "py",
        Language::Cpp | Language::Cuda => "cpp",
        Language::Fortran => return None,
        _ => own.as_str(),
    };
    set.find_syntax_by_extension(ext)
        .or_else(|| set.find_syntax_by_extension(name))
}

/// Each line of `lines` as HTML, highlighted for `path`'s language within
/// [`PAGE_BUDGET`] (escaped plain text where there is no grammar, for a line
/// over [`MAX_LINE`], and for every line once the budget is spent).
pub fn lines(path: &str, lines: &[&str]) -> Vec<String> {
    colour(path, lines, Instant::now() + PAGE_BUDGET)
}

fn colour(path: &str, lines: &[&str], until: Instant) -> Vec<String> {
    let mut out = Vec::with_capacity(lines.len());
    let plain_from =
        |i: usize, out: &mut Vec<String>| out.extend(lines[i..].iter().map(|l| esc(l)));
    let Some(syntax) = syntax_for(path) else {
        plain_from(0, &mut out);
        return out;
    };
    let set = syntaxes();
    let mut state = ParseState::new(syntax);
    let mut stack = ScopeStack::new();
    for (i, line) in lines.iter().enumerate() {
        if Instant::now() >= until {
            plain_from(i, &mut out);
            break;
        }
        // Not parsed either: the grammar goes on from the line before.
        if line.len() > MAX_LINE {
            out.push(esc(line));
            continue;
        }
        let with_newline = format!("{line}\n");
        let Ok(ops) = state.parse_line(&with_newline, set) else {
            plain_from(i, &mut out);
            break;
        };
        // Spans still open from the line before are reopened, so every line
        // is balanced HTML on its own.
        let mut html: String = stack
            .as_slice()
            .iter()
            .map(|scope| format!("<span class=\"{}\">", class_of(scope)))
            .collect();
        let Ok((body, _)) = line_tokens_to_classed_spans(&with_newline, &ops, STYLE, &mut stack)
        else {
            plain_from(i, &mut out);
            break;
        };
        // The newline the grammar needed may sit inside a span: the line has no other.
        html.push_str(&body.replace('\n', ""));
        html.push_str(&"</span>".repeat(stack.len()));
        out.push(html);
    }
    out
}

/// The class attribute syntect writes for one scope.
fn class_of(scope: &syntect::parsing::Scope) -> String {
    scope
        .build_string()
        .split('.')
        .map(|atom| format!("s-{atom}"))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod link_tests {
    use super::*;

    #[test]
    fn identifiers_that_name_definitions_become_links() {
        let names: std::collections::HashSet<&str> =
            ["fit_model", "lt", "Model"].into_iter().collect();
        let html = "<span class=\"s-k\">def</span> fit_model(data) &lt; Model2 Model x2fit_model 0x2fit_model";
        let linked = link_identifiers(html, &names);
        assert_eq!(
            linked,
            "<span class=\"s-k\">def</span> <a class=\"ident\" href=\"/def/fit_model\">fit_model</a>(data) &lt; Model2 <a class=\"ident\" href=\"/def/Model\">Model</a> x2fit_model 0x2fit_model"
        );
    }
}

#[cfg(test)]
mod tests {

    /// Each language cairn knows is coloured by the grammar it was before the
    /// extension table became `Language::of_path` (an upper-case extension
    /// now too); other files by their own extension or name.
    #[test]
    fn grammars_by_language() {
        let name = |p: &str| syntax_for(p).map(|s| s.name.as_str());
        for (path, grammar) in [
            ("a/b.py", Some("Python")),
            ("a/b.pyx", Some("Python")),
            ("a/B.PY", Some("Python")),
            ("a/b.ipynb", Some("Markdown")),
            ("a/b.cu", Some("C++")),
            ("a/b.hpp", Some("C++")),
            ("a/b.c", Some("C")),
            ("a/b.rs", Some("Rust")),
            ("a/b.f90", None),
            ("a/Makefile", Some("Makefile")),
            ("a/.bashrc", Some("Bourne Again Shell (bash)")),
            ("a/b.xml", Some("XML")),
        ] {
            assert_eq!(name(path), grammar, "{path}");
        }
    }
    use super::*;

    #[test]
    fn python_is_coloured_and_balanced_line_by_line() {
        let src = [
            "def f(x):",
            "    \"\"\"Doc <b>",
            "    more\"\"\"",
            "    return x  # done",
        ];
        let out = lines("a/b.py", &src);
        assert_eq!(out.len(), 4);
        assert!(
            out[0].contains("s-keyword") || out[0].contains("s-storage"),
            "{}",
            out[0]
        );
        assert!(out[1].contains("&lt;b&gt;"), "escaped: {}", out[1]);
        // The docstring is still a docstring on its last line (state carried across lines).
        assert!(out[2].contains("s-documentation"), "{}", out[2]);
        for l in &out {
            assert_eq!(
                l.matches("<span").count(),
                l.matches("</span>").count(),
                "{l}"
            );
        }
        assert!(out[3].contains("s-comment"), "{}", out[3]);
        assert!(out.iter().all(|l| !l.contains('\n')));
        // A blank line is empty text, whatever spans carry it.
        let blank = lines("a/b.cpp", &["#include <cmath>", "", "int x;"]);
        assert_eq!(
            blank[1]
                .replace("<span class=\"s-source s-c++\">", "")
                .replace("</span>", ""),
            ""
        );
    }

    #[test]
    fn unknown_languages_and_long_lines_are_plain_escaped_text() {
        assert_eq!(lines("a/b.unknownext", &["<x>"]), ["&lt;x&gt;"]);
        let long = "x".repeat(MAX_LINE + 1);
        let out = lines("a/b.py", &[long.as_str(), "def f(): pass"]);
        assert_eq!(out[0], long);
        assert!(
            out[1].contains("s-"),
            "the short line is still coloured: {}",
            out[1]
        );
    }

    /// Third review, finding 1: a file of long identifier-like lines (the
    /// grammar's regexes backtrack on them) renders within the page's
    /// budget, every line present and escaped; past the budget lines are plain.
    #[test]
    fn hostile_lines_render_within_the_budget() {
        let word = |i: usize| format!("a_{i}_b{}", "c".repeat(i % 17));
        let long: String = (0..400).map(word).collect::<Vec<_>>().join("_");
        let near: String = long.chars().take(MAX_LINE).collect();
        let mut src: Vec<String> = Vec::new();
        for i in 0..200 {
            src.push(if i % 2 == 0 {
                long.clone()
            } else {
                format!("{near}<")
            });
        }
        let refs: Vec<&str> = src.iter().map(String::as_str).collect();
        let started = Instant::now();
        let out = lines("a/hostile.py", &refs);
        let took = started.elapsed();
        assert_eq!(out.len(), 200);
        assert!(took < PAGE_BUDGET + Duration::from_millis(800), "{took:?}");
        assert!(
            out.iter()
                .all(|l| !l.contains('<') || l.contains("<span") || l.contains("&lt;"))
        );
        assert!(out.iter().skip(1).step_by(2).all(|l| l.contains("&lt;")));
        // With no time left, every line is plain.
        let none = colour("a/b.py", &["def f(): pass"], Instant::now());
        assert_eq!(none, ["def f(): pass"]);
    }
}

/// `html` (a highlighted line) with every identifier in its text that names
/// a definition in `names` made a link to that name's definitions page.
/// Tags and character references are left as they are.
pub fn link_identifiers(html: &str, names: &std::collections::HashSet<&str>) -> String {
    let mut out = String::with_capacity(html.len());
    let mut rest = html;
    while !rest.is_empty() {
        // Copy a tag or a character reference whole.
        let skip_to = match rest.as_bytes()[0] {
            b'<' => rest.find('>').map(|i| i + 1),
            b'&' => rest.find(';').map(|i| i + 1),
            _ => None,
        };
        if let Some(n) = skip_to {
            out.push_str(&rest[..n]);
            rest = &rest[n..];
            continue;
        }
        let word_len = rest
            .char_indices()
            .take_while(|(i, c)| {
                c.is_ascii_alphabetic() || *c == '_' || (*i > 0 && c.is_ascii_digit())
            })
            .map(|(i, c)| i + c.len_utf8())
            .last()
            .unwrap_or(0);
        if word_len > 0 {
            let word = &rest[..word_len];
            if word.len() > 2 && names.contains(word) {
                out.push_str(&format!(
                    "<a class=\"ident\" href=\"/def/{}\">{word}</a>",
                    super::html::path(word)
                ));
            } else {
                out.push_str(word);
            }
            rest = &rest[word_len..];
            continue;
        }
        // Any other character (a digit run too, so `x2` inside `0x2f` is not a word).
        let n = rest
            .char_indices()
            .skip(1)
            .find(|(_, c)| !c.is_ascii_alphanumeric() && *c != '_')
            .map_or(rest.len(), |(i, _)| i);
        let n = if rest.as_bytes()[0].is_ascii_digit() {
            n
        } else {
            rest.chars().next().map_or(1, char::len_utf8)
        };
        out.push_str(&rest[..n]);
        rest = &rest[n..];
    }
    out
}
