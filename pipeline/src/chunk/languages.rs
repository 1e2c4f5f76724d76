//! Each language's structure: where its sections start (headings,
//! definitions, blocks, units), where a window may be cut, and the symbols a
//! chunk defines.

use super::Section;
use super::definitions::{self, Found};
use cairn_index::Language;

/// What chunking knows of a language: where its sections start, and whether
/// it defines things the Python way (`def`, decorators, parameters as
/// symbols) or holds notebook cells. Decided here, by the one match on
/// [`Language`] in the pipeline.
#[derive(Clone, Copy)]
pub(super) struct Grammar {
    /// Section starts (line, title) of a file's lines.
    sections: fn(&[&str]) -> Vec<(u32, String)>,
    /// What a file's lines define.
    pub(super) defines: fn(&[&str]) -> Vec<Found>,
    /// `def`/`class`/decorators start definitions (Python, and notebooks' code).
    pub(super) python_defs: bool,
    /// Read as cells: only cell sources count, a titled cell starts a chunk.
    pub(super) cells: bool,
}

impl Grammar {
    /// The grammar of `language`.
    pub(super) fn of(language: Language) -> Self {
        let plain = Grammar {
            sections: |_| Vec::new(),
            defines: definitions::none,
            python_defs: false,
            cells: false,
        };
        match language {
            Language::Markdown => Grammar {
                sections: markdown_headings,
                defines: definitions::markdown,
                ..plain
            },
            Language::Rst => Grammar {
                sections: rst_headings,
                defines: definitions::rst,
                ..plain
            },
            Language::Latex => Grammar {
                sections: latex_sections,
                ..plain
            },
            Language::Python => Grammar {
                sections: python_defs,
                defines: definitions::python,
                python_defs: true,
                ..plain
            },
            Language::C
            | Language::Cpp
            | Language::Cuda
            | Language::Rust
            | Language::Javascript
            | Language::Typescript
            | Language::Java
            | Language::Go => Grammar {
                sections: brace_blocks,
                defines: definitions::brace,
                ..plain
            },
            Language::Fortran => Grammar {
                sections: fortran_units,
                defines: definitions::fortran,
                ..plain
            },
            // Cells are sectioned from the notebook's JSON, not its lines.
            Language::Notebook => Grammar {
                python_defs: true,
                cells: true,
                ..plain
            },
            Language::Julia
            | Language::R
            | Language::Matlab
            | Language::Shell
            | Language::Yaml
            | Language::Toml
            | Language::Json
            | Language::Html
            | Language::Ini
            | Language::Text => plain,
            Language::Bibtex => Grammar {
                sections: bibtex_entries,
                ..plain
            },
            // Pages and headings come from the extracted text (`chunk_document`).
            Language::Pdf => Grammar {
                sections: pdf_headings,
                ..plain
            },
        }
    }
}

/// Turns boundary lines (1-based, sorted) into sections covering lines 1..=n.
pub(super) fn from_boundaries(n: u32, mut starts: Vec<(u32, String)>) -> Vec<Section> {
    starts.retain(|(l, _)| *l >= 1 && *l <= n);
    starts.dedup_by_key(|(l, _)| *l);
    if starts.first().is_none_or(|(l, _)| *l != 1) {
        starts.insert(0, (1, String::new()));
    }
    let mut out = Vec::with_capacity(starts.len());
    for (i, (start, title)) in starts.iter().enumerate() {
        let end = starts.get(i + 1).map_or(n, |(next, _)| next - 1);
        out.push(Section {
            start: *start,
            end,
            title: title.clone(),
            own: None,
        });
    }
    out
}

/// The sections of a file's lines in `grammar`.
pub(super) fn sections_for(grammar: Grammar, lines: &[&str]) -> Vec<Section> {
    from_boundaries(lines.len() as u32, (grammar.sections)(lines))
}

pub(super) fn markdown_headings(lines: &[&str]) -> Vec<(u32, String)> {
    let mut out = Vec::new();
    let mut fence = false;
    let mut path: Vec<(usize, String)> = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let t = l.trim_start();
        if t.starts_with("```") || t.starts_with("~~~") {
            fence = !fence;
            continue;
        }
        if fence || !l.starts_with('#') {
            continue;
        }
        let level = l.chars().take_while(|&c| c == '#').count();
        let rest = &l[level..];
        if level > 6 || !(rest.is_empty() || rest.starts_with(' ')) {
            continue;
        }
        let title = capped(rest.trim().trim_end_matches('#').trim(), MAX_HEADING_CHARS);
        path.retain(|(lv, _)| *lv < level);
        path.push((level, title));
        out.push((i as u32 + 1, join_path(&path)));
    }
    out
}

/// Most characters of one heading in a title, a heading path or a scope:
/// API references' headings spell whole signatures, well over 80 characters,
/// and keep them.
pub(super) const MAX_HEADING_CHARS: usize = 200;
/// Most characters of a name (an identifier) a definition keeps.
pub(super) const MAX_NAME_CHARS: usize = 200;
/// Most characters of a joined heading path, scope or chunk title: a file
/// of thousands of headings under one huge one must not copy it into each.
/// The first part and the last always fit (2 × 200 and the `…` between).
pub(super) const MAX_PATH_CHARS: usize = 512;

/// `s` cut to `max` characters, `…` standing for the rest.
pub(super) fn capped(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        None => s.to_owned(),
        Some(_) => {
            let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
            out.push('…');
            out
        }
    }
}

/// `parts` joined by `sep` within [`MAX_PATH_CHARS`]: where they do not fit,
/// the first and as many of the innermost as fit, `…` between (`Guide > … >
/// Install > Linux`). Callers cap each part (a heading at
/// [`MAX_HEADING_CHARS`], a name at [`MAX_NAME_CHARS`]), so the first and
/// the last always fit.
pub(super) fn join_capped(parts: &[&str], sep: &str) -> String {
    let len = |p: &str| p.chars().count();
    let sep_len = sep.chars().count();
    let whole: usize =
        parts.iter().map(|p| len(p)).sum::<usize>() + sep_len * parts.len().saturating_sub(1);
    let Some((first, rest)) = parts.split_first() else {
        return String::new();
    };
    if whole <= MAX_PATH_CHARS {
        return parts.join(sep);
    }
    let mut used = len(first) + 2 * sep_len + 1;
    let mut inner: Vec<&str> = Vec::new();
    for p in rest.iter().rev() {
        if used + len(p) + sep_len > MAX_PATH_CHARS && !inner.is_empty() {
            break;
        }
        used += len(p) + sep_len;
        inner.push(p);
    }
    inner.push("…");
    inner.push(first);
    inner.reverse();
    capped(&inner.join(sep), MAX_PATH_CHARS)
}

pub(super) fn join_path(path: &[(usize, String)]) -> String {
    join_capped(
        &path.iter().map(|(_, t)| t.as_str()).collect::<Vec<_>>(),
        " > ",
    )
}

pub(super) fn is_rst_underline(l: &str) -> Option<char> {
    let t = l.trim_end();
    let c = t.chars().next()?;
    (t.len() >= 3 && "=-~^\"'`#*+:.".contains(c) && t.chars().all(|x| x == c)).then_some(c)
}

pub(super) fn rst_headings(lines: &[&str]) -> Vec<(u32, String)> {
    let mut out = Vec::new();
    let mut levels: Vec<char> = Vec::new();
    let mut path: Vec<(usize, String)> = Vec::new();
    for i in 0..lines.len().saturating_sub(1) {
        let title = lines[i].trim();
        if title.is_empty() || is_rst_underline(lines[i]).is_some() || lines[i].starts_with(' ') {
            continue;
        }
        let Some(c) = is_rst_underline(lines[i + 1]) else {
            continue;
        };
        if lines[i + 1].trim_end().len() < title.chars().count().min(3) {
            continue;
        }
        let overline = i > 0 && is_rst_underline(lines[i - 1]) == Some(c);
        let level = levels.iter().position(|&x| x == c).unwrap_or_else(|| {
            levels.push(c);
            levels.len() - 1
        });
        path.retain(|(lv, _)| *lv < level);
        path.push((level, capped(title, MAX_HEADING_CHARS)));
        let start = if overline { i } else { i + 1 };
        out.push((start as u32, join_path(&path)));
    }
    out
}

/// LaTeX sectioning commands (with `*` or not) and environments that start
/// a unit, titled by their heading path under the document's `\title`
/// (`emcee: The MCMC Hammer > Method > Sampling`).
pub(super) fn latex_sections(lines: &[&str]) -> Vec<(u32, String)> {
    const LEVELS: [&str; 5] = [
        "chapter",
        "section",
        "subsection",
        "subsubsection",
        "paragraph",
    ];
    let root = lines.iter().find_map(|l| {
        let rest = l.trim_start().strip_prefix("\\title")?;
        // `\title[short]{long}`: the long form.
        let rest = match rest.trim_start().strip_prefix('[') {
            Some(r) => r.split_once(']').map_or(r, |(_, after)| after),
            None => rest,
        };
        braced(rest).filter(|t| !t.is_empty())
    });
    let mut out = Vec::new();
    let mut path: Vec<(usize, String)> = Vec::new();
    let rooted = |path: &[(usize, String)]| {
        let mut parts: Vec<&str> = root.iter().map(String::as_str).collect();
        parts.extend(path.iter().map(|(_, t)| t.as_str()));
        join_capped(&parts, " > ")
    };
    if root.is_some() {
        out.push((1, rooted(&[])));
    }
    for (i, l) in lines.iter().enumerate() {
        let t = l.trim_start();
        if t.starts_with('%') {
            continue;
        }
        let Some(cmd) = t.strip_prefix('\\') else {
            continue;
        };
        let name: String = cmd.chars().take_while(char::is_ascii_alphabetic).collect();
        let rest = cmd[name.len()..].trim_start_matches('*');
        if let Some(level) = LEVELS.iter().position(|l| *l == name) {
            let title = braced(rest).unwrap_or_default();
            path.retain(|(lv, _)| *lv < level);
            path.push((level, title));
            out.push((i as u32 + 1, rooted(&path)));
        } else if name == "begin" {
            let env = braced(rest).unwrap_or_default();
            let env = env.trim_end_matches('*');
            if matches!(env, "abstract" | "table" | "thebibliography") {
                let mut titled = path.clone();
                titled.push((usize::MAX, env.to_owned()));
                out.push((i as u32 + 1, rooted(&titled)));
            }
        }
    }
    out
}

/// The text of the `{…}` group `s` starts with (nested groups and commands
/// inside kept as their words), cut to 80 characters.
fn braced(s: &str) -> Option<String> {
    let s = s.trim_start();
    let inner = s.strip_prefix('{')?;
    let mut depth = 1usize;
    let mut out = String::new();
    for c in inner.chars() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            '\\' | '~' => out.push(' '),
            _ => out.push(c),
        }
    }
    Some(
        out.split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .chars()
            .take(80)
            .collect(),
    )
}

/// A `.bib` file's entries, each titled `key: title`.
pub(super) fn bibtex_entries(lines: &[&str]) -> Vec<(u32, String)> {
    let text = lines.join("\n");
    crate::bibtex::entries(&text)
        .into_iter()
        .map(|e| {
            let title = match e.field("title") {
                Some(t) => format!("{}: {}", e.key, t.chars().take(80).collect::<String>()),
                None => e.key,
            };
            (e.line, title)
        })
        .collect()
}

/// Headings found in a PDF's extracted text: numbered ones (`2.1 Point
/// lenses`) nested by their numbers, and the usual unnumbered ones
/// (Abstract, Introduction, References …) at the top level, all under the
/// paper's title (its first line, when that reads as a title).
pub(super) fn pdf_headings(lines: &[&str]) -> Vec<(u32, String)> {
    let first = lines.iter().map(|l| l.trim()).find(|l| !l.is_empty());
    let root = first.filter(|t| {
        let words = t.split_whitespace().count();
        pdf_heading(t).is_none()
            && (2..=20).contains(&words)
            && t.chars().count() <= 150
            && t.chars().filter(|c| c.is_alphabetic()).count() * 2 >= t.chars().count()
    });
    let mut out = Vec::new();
    if let Some(r) = root {
        out.push((1, r.to_owned()));
    }
    let mut path: Vec<(usize, String)> = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let Some((level, title)) = pdf_heading(l.trim()) else {
            continue;
        };
        path.retain(|(lv, _)| *lv < level);
        path.push((level, title));
        let mut parts: Vec<&str> = root.into_iter().collect();
        parts.extend(path.iter().map(|(_, t)| t.as_str()));
        out.push((i as u32 + 1, join_capped(&parts, " > ")));
    }
    out
}

fn pdf_heading(t: &str) -> Option<(usize, String)> {
    const NAMED: [&str; 9] = [
        "abstract",
        "introduction",
        "conclusions",
        "conclusion",
        "summary",
        "references",
        "acknowledgements",
        "acknowledgments",
        "appendix",
    ];
    if t.is_empty() || t.len() > 80 {
        return None;
    }
    if NAMED.contains(&t.to_lowercase().as_str()) {
        return Some((0, t.to_owned()));
    }
    let (number, title) = t.split_once(char::is_whitespace)?;
    let number = number.strip_suffix('.').unwrap_or(number);
    let parts: Vec<&str> = number.split('.').collect();
    let numbered = parts.len() <= 4
        && parts
            .iter()
            .all(|p| (1..=2).contains(&p.len()) && p.bytes().all(|b| b.is_ascii_digit()));
    let title = title.trim();
    let words = title.split_whitespace().count();
    let letters = title.chars().filter(|c| c.is_alphabetic()).count();
    let heading_like = title.chars().next().is_some_and(char::is_uppercase)
        && (1..=10).contains(&words)
        && letters * 10 >= title.chars().count() * 7
        && !title.ends_with(['.', ',', ';', ':']);
    (numbered && heading_like).then(|| (parts.len() - 1, format!("{number} {title}")))
}

/// `def name` / `class name` of a trimmed line.
pub(super) fn def_name(t: &str) -> Option<String> {
    let rest = t
        .strip_prefix("async def ")
        .or_else(|| t.strip_prefix("def "))
        .map(|r| ("def", r))
        .or_else(|| t.strip_prefix("class ").map(|r| ("class", r)))?;
    let name: String = rest
        .1
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .take(MAX_NAME_CHARS)
        .collect();
    (!name.is_empty()).then(|| format!("{} {name}", rest.0))
}

pub(super) fn python_defs(lines: &[&str]) -> Vec<(u32, String)> {
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let Some(name) = def_name(l) else { continue };
        // Decorators and comments directly above belong to the definition.
        let mut start = i;
        while start > 0 {
            let p = lines[start - 1];
            if p.starts_with('@') || p.starts_with('#') {
                start -= 1;
            } else {
                break;
            }
        }
        out.push((start as u32 + 1, name));
    }
    out
}

pub(super) fn brace_blocks(lines: &[&str]) -> Vec<(u32, String)> {
    let mut out = Vec::new();
    let mut depth: i64 = 0;
    for (i, l) in lines.iter().enumerate() {
        let starts_block = depth == 0
            && l.chars()
                .next()
                .is_some_and(|c| !c.is_whitespace() && c != '}' && c != '{' && c != ')')
            && (i == 0 || lines[i - 1].trim().is_empty() || lines[i - 1].starts_with('}'));
        if starts_block {
            let title = lines[i..]
                .iter()
                .take(6)
                .map(|x| x.trim())
                .find(|x| {
                    !x.starts_with("//")
                        && !x.starts_with("/*")
                        && !x.starts_with('*')
                        && !x.is_empty()
                })
                .unwrap_or("")
                .chars()
                .take(100)
                .collect();
            out.push((i as u32 + 1, title));
        }
        depth += l.matches('{').count() as i64 - l.matches('}').count() as i64;
        depth = depth.max(0);
    }
    out
}

pub(super) fn fortran_units(lines: &[&str]) -> Vec<(u32, String)> {
    lines
        .iter()
        .enumerate()
        .filter_map(|(i, l)| {
            let t = l.trim().to_ascii_lowercase();
            let unit = !t.starts_with("end")
                && (t.starts_with("subroutine ")
                    || t.starts_with("module ")
                    || t.starts_with("program ")
                    || t.contains("function ") && !t.starts_with('!'));
            unit.then(|| (i as u32 + 1, l.trim().chars().take(80).collect()))
        })
        .collect()
}

/// `soft[l]`: line `l` (1-based) is a good place to end a window (the next line starts something).
pub(super) fn soft_boundaries(grammar: Grammar, lines: &[&str]) -> Vec<bool> {
    let n = lines.len();
    let mut soft = vec![false; n + 1];
    for l in 1..n {
        let next = lines[l];
        let blank_here = lines[l - 1].trim().is_empty();
        let next_t = next.trim_start();
        let inner_def = grammar.python_defs
            && !grammar.cells
            && (next_t.starts_with("def ")
                || next_t.starts_with("async def ")
                || next_t.starts_with('@'));
        soft[l] = blank_here || inner_def;
    }
    soft[n] = true;
    soft
}

/// Definition and parameter names in Python lines, function names in brace languages.
pub(super) fn symbols(grammar: Grammar, lines: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    for l in lines {
        let t = l.trim_start();
        if grammar.python_defs {
            if let Some(name) = def_name(t) {
                out.push(
                    name.split_once(' ')
                        .map_or(name.clone(), |(_, n)| n.to_owned()),
                );
                if let Some(params) = t.split_once('(').map(|(_, p)| p) {
                    for p in params.split([',', ')']) {
                        let p = p.trim().trim_start_matches('*');
                        let name: String = p
                            .chars()
                            .take_while(|c| c.is_alphanumeric() || *c == '_')
                            .collect();
                        if name.len() > 1 && name != "self" && name != "cls" {
                            out.push(name);
                        }
                    }
                }
            }
        } else if !l.starts_with(char::is_whitespace)
            && !t.ends_with(';')
            && let Some((head, _)) = t.split_once('(')
        {
            let name: String = head
                .rsplit(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .next()
                .unwrap_or("")
                .to_owned();
            if name.len() > 1
                && !["if", "for", "while", "switch", "return"].contains(&name.as_str())
            {
                out.push(name);
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latex_sections_nest_under_the_title() {
        let lines = [
            "\\documentclass{article}",
            "\\title[emcee]{emcee: The {MCMC} Hammer}",
            "\\begin{document}",
            "\\begin{abstract}",
            "% \\section{commented out}",
            "\\section{The Algorithm}",
            "\\subsection*{The stretch move}",
            "\\section{Tests}",
        ];
        let got = latex_sections(&lines);
        let want: Vec<(u32, String)> = [
            (1, "emcee: The MCMC Hammer"),
            (4, "emcee: The MCMC Hammer > abstract"),
            (6, "emcee: The MCMC Hammer > The Algorithm"),
            (
                7,
                "emcee: The MCMC Hammer > The Algorithm > The stretch move",
            ),
            (8, "emcee: The MCMC Hammer > Tests"),
        ]
        .iter()
        .map(|(l, t)| (*l, (*t).to_owned()))
        .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn pdf_headings_are_numbered_or_named_lines_under_the_first() {
        let lines = [
            "Methods to calculate magnification",
            "Radek Poleski",
            "1 Introduction",
            "Models are fitted to 12 events.",
            "2.1 Point lenses",
            "3 4 5",
            "10 The sampler is run until it converges.",
            "References",
        ];
        let titles: Vec<String> = pdf_headings(&lines).into_iter().map(|(_, t)| t).collect();
        assert_eq!(
            titles,
            [
                "Methods to calculate magnification",
                "Methods to calculate magnification > 1 Introduction",
                "Methods to calculate magnification > 1 Introduction > 2.1 Point lenses",
                "Methods to calculate magnification > References",
            ]
        );
    }

    #[test]
    fn bibtex_entries_are_titled_by_key_and_title() {
        let lines = [
            "@article{fm13,",
            "  title = {emcee: The MCMC Hammer},",
            "}",
            "@book{hogg}",
        ];
        assert_eq!(
            bibtex_entries(&lines),
            [
                (1, "fm13: emcee: The MCMC Hammer".to_owned()),
                (4, "hogg".to_owned())
            ]
        );
    }
}
