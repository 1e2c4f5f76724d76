//! The headings of prose and papers: reST titles, LaTeX sections, BibTeX
//! entries and a PDF's numbered headings, each with its line.

use crate::chunk::caps::{MAX_HEADING_CHARS, capped, join_capped, join_path};

pub(in crate::chunk) fn is_rst_underline(l: &str) -> Option<char> {
    let t = l.trim_end();
    let c = t.chars().next()?;
    (t.len() >= 3 && "=-~^\"'`#*+:.".contains(c) && t.chars().all(|x| x == c)).then_some(c)
}

pub(in crate::chunk) fn rst_headings(lines: &[&str]) -> Vec<(u32, String)> {
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
pub(in crate::chunk) fn latex_sections(lines: &[&str]) -> Vec<(u32, String)> {
    pub(super) const LEVELS: [&str; 5] = [
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
pub(in crate::chunk) fn braced(s: &str) -> Option<String> {
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
pub(in crate::chunk) fn bibtex_entries(lines: &[&str]) -> Vec<(u32, String)> {
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
pub(in crate::chunk) fn pdf_headings(lines: &[&str]) -> Vec<(u32, String)> {
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

pub(in crate::chunk) fn pdf_heading(t: &str) -> Option<(usize, String)> {
    pub(super) const NAMED: [&str; 9] = [
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

/// Markdown's `#` headings outside code fences, each with its line and
/// heading path.
pub(in crate::chunk) fn markdown_headings(lines: &[&str]) -> Vec<(u32, String)> {
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
