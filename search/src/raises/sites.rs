//! Every place the indexed code raises, throws, warns or stops, read once
//! when the engine opens: the statement's exact lines, the class it raises,
//! its message template and its enclosing function. Also the documents by
//! file name, for mapping a traceback's frames.

use super::template::{Piece, Syntax, Template};
use cairn_index::{Doctype, Language, LineSpan, Snapshot};
use std::collections::HashMap;

/// Lines a statement may span (a longer one is cut: its message starts early).
const MAX_STATEMENT_LINES: usize = 30;
/// How far above a `raise ValueError(msg)` its `msg = …` may be.
const MESSAGE_LOOKBACK: usize = 25;

/// One raising statement.
#[derive(Clone, Debug)]
pub struct Site {
    /// The document.
    pub doc: u32,
    /// The statement's lines.
    pub span: LineSpan,
    /// The class as written (`ValueError`, `std::runtime_error`, `RuntimeWarning`); empty for a Fortran stop.
    pub class: String,
    /// The message as written (several when branches build it differently; none when computed).
    pub templates: Vec<Template>,
    /// The enclosing function (`run_mcmc`), empty at module level.
    pub function: String,
    /// With its class, when it is a method (`EnsembleSampler.run_mcmc`).
    pub qualname: String,
}

/// The raise sites of one snapshot, and its documents by file name.
pub struct Sites {
    /// Every site, in document order.
    pub sites: Vec<Site>,
    /// Lowercased file name → documents with it.
    pub by_file_name: HashMap<String, Vec<u32>>,
}

impl Sites {
    /// Reads every code and example document of `snap`.
    pub fn new(snap: &Snapshot) -> Self {
        let mut sites = Vec::new();
        let mut by_file_name: HashMap<String, Vec<u32>> = HashMap::new();
        for (i, d) in snap.docs.iter().enumerate() {
            let doc = i as u32;
            let name = d.path.rsplit('/').next().unwrap_or(&d.path).to_lowercase();
            by_file_name.entry(name).or_default().push(doc);
            if !matches!(d.doctype, Doctype::Code | Doctype::Example) {
                continue;
            }
            let Some(syntax) = syntax_of(d.language) else {
                continue;
            };
            let Ok(text) = std::str::from_utf8(snap.doc_bytes(doc)) else {
                continue;
            };
            let lines: Vec<&str> = text.lines().collect();
            scan(doc, &lines, syntax, &mut sites);
        }
        Self {
            sites,
            by_file_name,
        }
    }
}

/// The literal syntax of a language that raises, if it is one: the search
/// library's one match on [`Language`].
pub fn syntax_of(language: Language) -> Option<Syntax> {
    match language {
        Language::Python => Some(Syntax::Python),
        Language::C | Language::Cpp | Language::Cuda => Some(Syntax::C),
        Language::Fortran => Some(Syntax::Fortran),
        _ => None,
    }
}

fn scan(doc: u32, lines: &[&str], syntax: Syntax, out: &mut Vec<Site>) {
    for (i, line) in lines.iter().enumerate() {
        let Some(class) = raising(line.trim_start(), syntax) else {
            continue;
        };
        let end = statement_end(lines, i, syntax);
        let stmt = lines[i..=end].join("\n");
        let template = Template::of_statement(message_part(&stmt, syntax), syntax);
        let templates = match template.is_empty() && syntax == Syntax::Python {
            true => variable_messages(lines, i, &stmt),
            false => vec![template],
        };
        let (function, qualname) = enclosing(lines, i, syntax);
        out.push(Site {
            doc,
            span: LineSpan {
                start: i as u32 + 1,
                end: end as u32 + 1,
            },
            class,
            templates,
            function,
            qualname,
        });
    }
}

/// The class a statement starting this line raises, if it raises.
fn raising(t: &str, syntax: Syntax) -> Option<String> {
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | ':'))
            .collect()
    };
    match syntax {
        Syntax::Python => {
            if let Some(rest) = t.strip_prefix("raise ") {
                let class = ident(rest.trim_start());
                return (!class.is_empty()).then_some(class);
            }
            if t.starts_with("warnings.warn(") || t.starts_with("warn(") {
                let class = t
                    .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
                    .rfind(|w| w.ends_with("Warning"))
                    .unwrap_or("UserWarning");
                return Some(class.rsplit('.').next().unwrap_or(class).to_owned());
            }
            t.starts_with("assert ")
                .then(|| "AssertionError".to_owned())
        }
        Syntax::C => {
            let rest = t.strip_prefix("throw ")?;
            let class = ident(rest.trim_start());
            (!class.is_empty()).then_some(class)
        }
        Syntax::Fortran => fortran_stop(t).map(|_| String::new()),
    }
}

/// Where a Fortran line's `error stop`/`stop '…'` keyword ends (a one-line `if` may hold it).
fn fortran_stop(t: &str) -> Option<usize> {
    let code = t.split('!').next().unwrap_or(t).to_ascii_lowercase();
    if let Some(at) = code.find("error stop") {
        return Some(at + "error stop".len());
    }
    let at = code.find("stop")?;
    let before_ok = at == 0 || !code.as_bytes()[at - 1].is_ascii_alphanumeric();
    let after = code[at + 4..].trim_start();
    (before_ok && (after.starts_with('\'') || after.starts_with('"'))).then_some(at + 4)
}

/// The part of a statement that holds the message (an assert's after its condition).
fn message_part(stmt: &str, syntax: Syntax) -> &str {
    match syntax {
        Syntax::Python if stmt.trim_start().starts_with("assert ") => {
            top_level_comma(stmt).map_or("", |at| &stmt[at + 1..])
        }
        Syntax::Fortran => fortran_stop(stmt).map_or("", |at| &stmt[at..]),
        _ => stmt,
    }
}

/// The first comma outside brackets and strings.
fn top_level_comma(s: &str) -> Option<usize> {
    let mut depth = 0i32;
    let mut quote: Option<char> = None;
    for (i, c) in s.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '(' | '[' | '{') => depth += 1,
            (None, ')' | ']' | '}') => depth -= 1,
            (None, ',') if depth == 0 => return Some(i),
            _ => {}
        }
    }
    None
}

/// The last line of the statement starting at `start`: brackets balanced,
/// no trailing backslash (Python, C) or `&` (Fortran).
fn statement_end(lines: &[&str], start: usize, syntax: Syntax) -> usize {
    let mut depth = 0i32;
    let mut triple: Option<&str> = None;
    for (k, line) in lines
        .iter()
        .enumerate()
        .skip(start)
        .take(MAX_STATEMENT_LINES)
    {
        let mut quote: Option<char> = None;
        let mut chars = line.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            if let Some(t) = triple {
                if line[i..].starts_with(t) {
                    triple = None;
                    chars.nth(1);
                }
                continue;
            }
            match (quote, c) {
                (Some(_), '\\') if syntax != Syntax::Fortran => {
                    chars.next();
                }
                (Some(q), c) if c == q => quote = None,
                (Some(_), _) => {}
                (None, '#') if syntax == Syntax::Python => break,
                (None, '!') if syntax == Syntax::Fortran => break,
                (None, '\'' | '"')
                    if syntax == Syntax::Python
                        && (line[i..].starts_with("'''") || line[i..].starts_with("\"\"\"")) =>
                {
                    triple = Some(&line[i..i + 3]);
                    chars.nth(1);
                }
                (None, '"') => quote = Some('"'),
                (None, '\'') if syntax != Syntax::C => quote = Some('\''),
                (None, '(' | '[' | '{') => depth += 1,
                (None, ')' | ']' | '}') => depth -= 1,
                _ => {}
            }
        }
        let t = line.trim_end();
        let continues = match syntax {
            Syntax::Fortran => t.ends_with('&'),
            Syntax::C => !t.ends_with(';') && !t.ends_with('}'),
            Syntax::Python => t.ends_with('\\'),
        };
        if depth <= 0 && triple.is_none() && !continues {
            return k;
        }
    }
    (start + MAX_STATEMENT_LINES - 1).min(lines.len().saturating_sub(1))
}

/// `raise ValueError(msg)` (or `msg.format(…)`, `msg % …`, `E(data, msg)`)
/// whose message was built a few lines above: each `msg = …` starts one
/// possible message (branches assign it differently), each `msg += …` extends
/// the latest. Only lines since the enclosing `def` count.
fn variable_messages(lines: &[&str], at: usize, stmt: &str) -> Vec<Template> {
    let args = stmt
        .split_once('(')
        .map(|(_, r)| r.trim_end().trim_end_matches(')'))
        .unwrap_or("");
    let names: Vec<&str> = args
        .split(',')
        .map(|a| a.trim().split(['.', '%', ' ']).next().unwrap_or(""))
        .filter(|n| !n.is_empty() && n.chars().all(|c| c.is_alphanumeric() || c == '_'))
        .collect();
    if names.is_empty() {
        return Vec::new();
    }
    let mut alternatives: Vec<Vec<Piece>> = Vec::new();
    for k in at.saturating_sub(MESSAGE_LOOKBACK)..at {
        let t = lines[k].trim_start();
        if t.starts_with("def ") || t.starts_with("async def ") {
            alternatives.clear();
        }
        let op = names.iter().find_map(|n| {
            let r = t.strip_prefix(n)?.trim_start();
            match () {
                _ if r.starts_with("+=") => Some(true),
                _ if r.starts_with('=') && !r.starts_with("==") => Some(false),
                _ => None,
            }
        });
        let Some(extends) = op else { continue };
        let end = statement_end(lines, k, Syntax::Python);
        let part = lines[k..=end].join("\n");
        let rhs = part.split_once('=').map_or("", |(_, r)| r);
        let pieces = Template::of_statement(rhs, Syntax::Python).0;
        match alternatives.last_mut() {
            Some(last) if extends => {
                last.push(Piece::Hole);
                last.extend(pieces);
            }
            _ => alternatives.push(pieces),
        }
    }
    alternatives
        .into_iter()
        .map(Template::from_pieces)
        .filter(|t| !t.is_empty())
        .collect()
}

/// The function (and `Class.function`) a line sits in.
fn enclosing(lines: &[&str], at: usize, syntax: Syntax) -> (String, String) {
    let indent = |l: &str| l.len() - l.trim_start().len();
    match syntax {
        Syntax::Python => {
            let mut limit = indent(lines[at]);
            let mut function = String::new();
            for l in lines[..at].iter().rev() {
                let t = l.trim_start();
                if t.is_empty() || indent(l) >= limit {
                    continue;
                }
                let name = |kw: &str| {
                    t.strip_prefix(kw).map(|r| {
                        r.chars()
                            .take_while(|c| c.is_alphanumeric() || *c == '_')
                            .collect::<String>()
                    })
                };
                if function.is_empty() {
                    if let Some(f) = name("def ").or_else(|| name("async def ")) {
                        function = f;
                        limit = indent(l);
                        continue;
                    }
                } else if let Some(class) = name("class ") {
                    let q = format!("{class}.{function}");
                    return (function, q);
                }
                limit = indent(l);
            }
            (function.clone(), function)
        }
        Syntax::C | Syntax::Fortran => {
            for l in lines[..at].iter().rev() {
                let t = l.trim();
                if syntax == Syntax::Fortran {
                    let lower = t.to_ascii_lowercase();
                    for kw in ["subroutine ", "function "] {
                        if let Some(at) = lower.find(kw).filter(|_| !lower.starts_with("end")) {
                            let name: String = t[at + kw.len()..]
                                .chars()
                                .take_while(|c| c.is_alphanumeric() || *c == '_')
                                .collect();
                            return (name.clone(), name);
                        }
                    }
                    continue;
                }
                // A C/C++ definition starts at column 0 and has a parameter list.
                let col0 = !l.starts_with([' ', '\t', '{', '}', '#', '/', '*']);
                if col0 && t.contains('(') && !t.ends_with(';') {
                    let head = t.split('(').next().unwrap_or("");
                    let q = head
                        .split_whitespace()
                        .last()
                        .unwrap_or("")
                        .trim_start_matches(['*', '&']);
                    let f = q.rsplit("::").next().unwrap_or(q);
                    return (f.to_owned(), q.replace("::", "."));
                }
            }
            (String::new(), String::new())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sites(src: &str, syntax: Syntax) -> Vec<Site> {
        let lines: Vec<&str> = src.lines().collect();
        let mut out = Vec::new();
        scan(0, &lines, syntax, &mut out);
        out
    }

    #[test]
    fn python_raises_warns_and_asserts_with_their_functions() {
        let src = "class EnsembleSampler:\n    def run_mcmc(self, n):\n        if n < 0:\n            raise ValueError(\n                \"n must be \"\n                f\"positive, got {n}\"\n            )\n        msg = \"too few walkers: \"\n        msg += \"{0}\".format(n)\n        raise RuntimeError(msg)\n        fmt = \"{:} cannot be negative: {:}\"\n        raise ValueError(fmt.format(a, b))\n\ndef f(x):\n    warnings.warn(\"x is large\", RuntimeWarning)\n    assert x > 0, \"x must be > 0\"\n";
        let s = sites(src, Syntax::Python);
        assert_eq!(s.len(), 5);
        assert_eq!((s[0].span.start, s[0].span.end), (4, 7));
        assert_eq!(s[0].class, "ValueError");
        assert_eq!(s[0].templates[0].display(), "n must be positive, got {}");
        assert_eq!(s[0].qualname, "EnsembleSampler.run_mcmc");
        assert_eq!(s[1].templates[0].display(), "too few walkers: {}");
        assert_eq!(s[2].templates[0].display(), "{} cannot be negative: {}");
        assert_eq!(
            (s[3].class.as_str(), s[3].function.as_str()),
            ("RuntimeWarning", "f")
        );
        assert_eq!(s[4].templates[0].display(), "x must be > 0");
    }

    #[test]
    fn cpp_throws_and_fortran_stops() {
        let s = sites(
            "double VBM::Mag(double s) {\n  if (s < 0)\n    throw std::invalid_argument(\"s < 0: \"\n      + std::to_string(s));\n}\n",
            Syntax::C,
        );
        assert_eq!(
            (
                s[0].class.as_str(),
                s[0].function.as_str(),
                s[0].qualname.as_str()
            ),
            ("std::invalid_argument", "Mag", "VBM.Mag")
        );
        assert_eq!(s[0].span.end, 4);
        let s = sites(
            "subroutine solve(n)\n  if (n < 1) error stop 'n must be positive' ! checked\n  stop\nend subroutine\n",
            Syntax::Fortran,
        );
        assert_eq!(s.len(), 1, "a bare stop carries no message");
        assert_eq!(
            (s[0].function.as_str(), s[0].templates[0].display().as_str()),
            ("solve", "n must be positive")
        );
    }
}
