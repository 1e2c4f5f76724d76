//! Each language's structure: where its sections start (headings,
//! definitions, blocks, units), where a window may be cut, and the symbols a
//! chunk defines.

pub(super) mod headings;
mod units;

use headings::{bibtex_entries, latex_sections, markdown_headings, pdf_headings, rst_headings};
pub(super) use units::def_name;
use units::{brace_blocks, fortran_units, python_defs};

use super::definitions::{self, Found};
use super::drafts::Section;
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
