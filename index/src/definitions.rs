//! `definitions.json`: what each document defines (functions, classes,
//! constants, macros, Fortran units, document sections), by name, kind,
//! enclosing scope and line span, as the pipeline's chunking grammar finds
//! them. The library answers `definitions` from it.

use crate::ids::LineSpan;
use serde::{Deserialize, Serialize};

/// What a definition is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DefKind {
    /// A class, struct or (Fortran) module.
    Class,
    /// A function or method (a Fortran function or subroutine).
    Function,
    /// A module-level constant (`NAME = …` in capitals).
    Constant,
    /// A C/C++ macro (`#define NAME`).
    Macro,
    /// A heading of a document (markdown, reST, LaTeX).
    Section,
}

impl DefKind {
    /// Its name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            DefKind::Class => "class",
            DefKind::Function => "function",
            DefKind::Constant => "constant",
            DefKind::Macro => "macro",
            DefKind::Section => "section",
        }
    }
}

/// One definition in one document.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DefinitionRecord {
    /// Its document (row of docs.json).
    pub doc: u32,
    /// The name it defines (a section's heading text).
    pub name: String,
    /// What it is.
    pub kind: DefKind,
    /// The enclosing definitions, dotted (`EnsembleSampler` for a method; a
    /// section's parent headings joined by ` > `); empty at the top.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub scope: String,
    /// Its lines, from the defining line to its last.
    pub span: LineSpan,
}
