//! What a document defines, by language (the grammar's `defines`): Python
//! classes, functions and methods with their scope and module constants;
//! C/C++ macros, classes and functions; Fortran units; headings of
//! markdown, reST and LaTeX as sections. Each with its line span.

use super::caps::{MAX_NAME_CHARS, join_capped};
use super::languages::headings::{markdown_headings, rst_headings};
use cairn_index::{DefKind, DefinitionRecord, LineSpan};

/// One definition in a document's lines (1-based lines).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Found {
    pub(super) name: String,
    pub(super) kind: DefKind,
    pub(super) scope: String,
    pub(super) start: u32,
    pub(super) end: u32,
}

/// A definition a document's lines hold, found while the document is
/// chunked (before it has its row in docs.json; [`Definition::record`]
/// gives it one). Shard parts carry them, so a merge never reads a
/// document's lines again.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Definition {
    /// The name it defines.
    pub name: String,
    /// What it is.
    pub kind: DefKind,
    /// The enclosing definitions, dotted; a section's parent headings.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub scope: String,
    /// Its lines.
    pub span: LineSpan,
}

impl Definition {
    /// Its record in `definitions.json`, for the document at row `doc`.
    pub fn record(&self, doc: u32) -> DefinitionRecord {
        DefinitionRecord {
            doc,
            name: self.name.clone(),
            kind: self.kind,
            scope: self.scope.clone(),
            span: self.span,
        }
    }
}

/// Every definition in a document's raw lines, by `defines` (its grammar's).
pub(super) fn of_lines(defines: fn(&[&str]) -> Vec<Found>, lines: &[&str]) -> Vec<Definition> {
    defines(lines)
        .into_iter()
        .map(|f| Definition {
            name: f.name,
            kind: f.kind,
            scope: f.scope,
            span: LineSpan {
                start: f.start,
                end: f.end.max(f.start),
            },
        })
        .collect()
}

/// The last non-blank line in `lines[from..to]` (1-based result), or `from + 1`.
fn last_content(lines: &[&str], from: usize, to: usize) -> u32 {
    (from..to)
        .rev()
        .find(|&i| !lines[i].trim().is_empty())
        .map_or(from as u32 + 1, |i| i as u32 + 1)
}

/// The identifier `s` starts with, cut to [`MAX_NAME_CHARS`].
fn identifier(s: &str) -> String {
    s.chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .take(MAX_NAME_CHARS)
        .collect()
}

/// Python: `class`, `def` and `async def` at any depth (scope: the enclosing
/// ones, dotted), and module-level `NAME = …` in capitals. A definition ends
/// at the last line before the next line indented no deeper.
pub(super) fn python(lines: &[&str]) -> Vec<Found> {
    let mut out: Vec<Found> = Vec::new();
    // Open definitions: (indent, index into out).
    let mut open: Vec<(usize, usize)> = Vec::new();
    let mut in_string: Option<&str> = None;
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim_start();
        // Lines inside a triple-quoted string are text, not code.
        if let Some(q) = in_string {
            if t.matches(q).count() % 2 == 1 {
                in_string = None;
            }
            continue;
        }
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let indent = line.len() - t.len();
        while let Some(&(ind, k)) = open.last() {
            if indent > ind {
                break;
            }
            out[k].end = last_content(lines, out[k].start as usize - 1, i);
            open.pop();
        }
        for q in ["\"\"\"", "'''"] {
            if t.matches(q).count() % 2 == 1 {
                in_string = Some(q);
            }
        }
        let scope = join_capped(
            &open
                .iter()
                .map(|&(_, k)| out[k].name.as_str())
                .collect::<Vec<_>>(),
            ".",
        );
        let def = t
            .strip_prefix("async def ")
            .or_else(|| t.strip_prefix("def "))
            .map(|r| (DefKind::Function, r))
            .or_else(|| t.strip_prefix("class ").map(|r| (DefKind::Class, r)));
        if let Some((kind, rest)) = def {
            let name = identifier(rest);
            if !name.is_empty() {
                open.push((indent, out.len()));
                out.push(Found {
                    name,
                    kind,
                    scope,
                    start: i as u32 + 1,
                    end: i as u32 + 1,
                });
            }
            continue;
        }
        if indent == 0 {
            let name = identifier(t);
            let rest = t[name.len()..].trim_start();
            let assigns = rest.starts_with('=') && !rest.starts_with("==")
                || rest.starts_with(':') && rest.contains('=');
            if name.len() > 1
                && name
                    .chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
                && name.chars().next().is_some_and(|c| c.is_ascii_uppercase())
                && assigns
            {
                out.push(Found {
                    name,
                    kind: DefKind::Constant,
                    scope: String::new(),
                    start: i as u32 + 1,
                    end: i as u32 + 1,
                });
            }
        }
    }
    for (_, k) in open {
        out[k].end = last_content(lines, out[k].start as usize - 1, lines.len());
    }
    out
}

/// C and C++ (and the other brace languages): `#define NAME`, `class`/`struct
/// NAME` at the top level, and top-level functions (a line at column 0 whose
/// name is followed by `(`, not ending in `;`), each to the brace that closes it.
pub(super) fn brace(lines: &[&str]) -> Vec<Found> {
    let mut out = Vec::new();
    let mut depth: i64 = 0;
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim_start();
        if let Some(rest) = t.strip_prefix("#define ") {
            let name = identifier(rest.trim_start());
            if !name.is_empty() {
                out.push(Found {
                    name,
                    kind: DefKind::Macro,
                    scope: String::new(),
                    start: i as u32 + 1,
                    end: i as u32 + 1,
                });
            }
        } else if depth == 0 && !line.starts_with(char::is_whitespace) && !t.starts_with("//") {
            let kind_name = ["class ", "struct "]
                .iter()
                .find_map(|k| t.strip_prefix(k))
                .map(|r| (DefKind::Class, identifier(r.trim_start())))
                .filter(|(_, n)| !n.is_empty() && !t.trim_end().ends_with(';'))
                .or_else(|| {
                    let (head, _) = t.split_once('(')?;
                    let name = head
                        .rsplit(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                        .next()?
                        .rsplit("::")
                        .next()?
                        .chars()
                        .take(MAX_NAME_CHARS)
                        .collect::<String>();
                    let keyword = ["if", "for", "while", "switch", "return", "sizeof"]
                        .contains(&name.as_str());
                    (!name.is_empty()
                        && !keyword
                        && !t.trim_end().ends_with(';')
                        && head.contains(' '))
                    .then_some((DefKind::Function, name))
                });
            if let Some((kind, name)) = kind_name {
                out.push(Found {
                    name,
                    kind,
                    scope: String::new(),
                    start: i as u32 + 1,
                    end: closing_brace(lines, i),
                });
            }
        }
        depth += line.matches('{').count() as i64 - line.matches('}').count() as i64;
        depth = depth.max(0);
    }
    out
}

/// The line (1-based) of the brace closing the block opened at or after `from`.
fn closing_brace(lines: &[&str], from: usize) -> u32 {
    let mut depth: i64 = 0;
    let mut opened = false;
    for (i, l) in lines.iter().enumerate().skip(from).take(5000) {
        for c in l.chars() {
            match c {
                '{' => {
                    depth += 1;
                    opened = true;
                }
                '}' => depth -= 1,
                _ => {}
            }
        }
        if opened && depth <= 0 {
            return i as u32 + 1;
        }
        if !opened && l.trim_end().ends_with(';') {
            return i as u32 + 1;
        }
    }
    from as u32 + 1
}

/// Fortran: `subroutine`, `function` and `module` units, each to its `end`.
pub(super) fn fortran(lines: &[&str]) -> Vec<Found> {
    let mut out: Vec<Found> = Vec::new();
    let mut open: Vec<usize> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim().to_ascii_lowercase();
        if t.starts_with('!') {
            continue;
        }
        if t == "end"
            || t.starts_with("end ") && !t.starts_with("end if") && !t.starts_with("end do")
        {
            if let Some(k) = open.pop() {
                out[k].end = i as u32 + 1;
            }
            continue;
        }
        let unit = ["subroutine ", "module ", "function "]
            .iter()
            .find_map(|k| t.find(k).map(|at| (k, at)))
            .filter(|(k, at)| *at == 0 || **k == "function " && !t[..*at].contains('='));
        if let Some((k, at)) = unit
            && !t.starts_with("module procedure")
        {
            let original = line.trim();
            let name = identifier(original[at + k.len()..].trim_start());
            if name.is_empty() {
                continue;
            }
            let scope = join_capped(
                &open
                    .iter()
                    .map(|&j| out[j].name.as_str())
                    .collect::<Vec<_>>(),
                ".",
            );
            open.push(out.len());
            out.push(Found {
                name,
                kind: if *k == "module " {
                    DefKind::Class
                } else {
                    DefKind::Function
                },
                scope,
                start: i as u32 + 1,
                end: i as u32 + 1,
            });
        }
    }
    out
}

/// Headings as sections: the heading text is the name, its parents the scope.
fn sections(starts: Vec<(u32, String)>, n: usize) -> Vec<Found> {
    let mut out = Vec::with_capacity(starts.len());
    for (i, (line, path)) in starts.iter().enumerate() {
        let (scope, name) = match path.rsplit_once(" > ") {
            Some((s, n)) => (s.to_owned(), n.to_owned()),
            None => (String::new(), path.clone()),
        };
        if name.is_empty() {
            continue;
        }
        let end = starts.get(i + 1).map_or(n as u32, |(next, _)| next - 1);
        out.push(Found {
            name,
            kind: DefKind::Section,
            scope,
            start: *line,
            end,
        });
    }
    out
}

/// Markdown headings as sections.
pub(super) fn markdown(lines: &[&str]) -> Vec<Found> {
    sections(markdown_headings(lines), lines.len())
}

/// reST headings as sections.
pub(super) fn rst(lines: &[&str]) -> Vec<Found> {
    sections(rst_headings(lines), lines.len())
}

/// Nothing (languages without definitions cairn reads).
pub(super) fn none(_: &[&str]) -> Vec<Found> {
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_definitions_with_scopes_spans_and_constants() {
        let src = [
            "\"\"\"Module.",
            "def not_code():",
            "\"\"\"",
            "MAX_ITER = 10",
            "",
            "class Sampler:",
            "    \"\"\"Samples.\"\"\"",
            "",
            "    def run_mcmc(self, n):",
            "        def inner():",
            "            pass",
            "        return inner",
            "",
            "    async def fetch(self):",
            "        pass",
            "",
            "def top(x):",
            "    return x",
        ];
        let found: Vec<(String, DefKind, String, u32, u32)> = python(&src)
            .into_iter()
            .map(|f| (f.name, f.kind, f.scope, f.start, f.end))
            .collect();
        let want = [
            ("MAX_ITER", DefKind::Constant, "", 4, 4),
            ("Sampler", DefKind::Class, "", 6, 15),
            ("run_mcmc", DefKind::Function, "Sampler", 9, 12),
            ("inner", DefKind::Function, "Sampler.run_mcmc", 10, 11),
            ("fetch", DefKind::Function, "Sampler", 14, 15),
            ("top", DefKind::Function, "", 17, 18),
        ];
        let want: Vec<_> = want
            .iter()
            .map(|(n, k, s, a, b)| (n.to_string(), *k, s.to_string(), *a, *b))
            .collect();
        assert_eq!(found, want);
    }

    #[test]
    fn c_fortran_and_markdown_definitions() {
        let c = [
            "#define MAX_N 100",
            "// Binary lens magnification.",
            "double BinaryMag(double s, double q) {",
            "    return s * q;",
            "}",
            "",
            "class Lens {",
            "  int n;",
            "};",
            "int proto(int x);",
        ];
        let got: Vec<(String, u32, u32)> = brace(&c)
            .into_iter()
            .map(|f| (f.name, f.start, f.end))
            .collect();
        assert_eq!(
            got,
            [
                ("MAX_N".into(), 1, 1),
                ("BinaryMag".into(), 3, 5),
                ("Lens".into(), 7, 9)
            ]
        );
        let f = [
            "module lens",
            "contains",
            "  subroutine mag(x)",
            "    x = 1",
            "  end subroutine mag",
            "end module lens",
        ];
        let got: Vec<(String, String, u32, u32)> = fortran(&f)
            .into_iter()
            .map(|f| (f.name, f.scope, f.start, f.end))
            .collect();
        assert_eq!(
            got,
            [
                ("lens".into(), String::new(), 1, 6),
                ("mag".into(), "lens".into(), 3, 5)
            ]
        );
        let md = ["# Guide", "text", "## Install", "pip"];
        let got: Vec<(String, String, u32, u32)> = markdown(&md)
            .into_iter()
            .map(|f| (f.name, f.scope, f.start, f.end))
            .collect();
        assert_eq!(
            got,
            [
                ("Guide".into(), String::new(), 1, 2),
                ("Install".into(), "Guide".into(), 3, 4)
            ]
        );
    }
}
