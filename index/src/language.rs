//! The language of a document, decided once from its path when it is
//! indexed and recorded in `docs.json` by its lowercase name. Each crate
//! that behaves differently by language matches on it in one place (the
//! pipeline's chunking grammar, the library's raise-site syntax).

use serde::{Deserialize, Serialize};
use std::fmt;

/// A document's language, by extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    /// `.py .pyi .pyx .pxd`
    Python,
    /// `.c .h`
    C,
    /// `.cc .cpp .cxx .hpp .hh .hxx`
    Cpp,
    /// `.cu .cuh`
    Cuda,
    /// `.f .for .f77 .f90 .f95 .f03`
    Fortran,
    /// `.rs`
    Rust,
    /// `.js .mjs .jsx`
    Javascript,
    /// `.ts .tsx`
    Typescript,
    /// `.java`
    Java,
    /// `.jl`
    Julia,
    /// `.r`
    R,
    /// `.m`
    Matlab,
    /// `.go`
    Go,
    /// `.sh .bash .zsh`
    Shell,
    /// `.md .markdown`
    Markdown,
    /// `.rst`
    Rst,
    /// `.tex`
    Latex,
    /// `.bib`
    Bibtex,
    /// `.pdf`: read as the text extracted from its pages.
    Pdf,
    /// `.ipynb`: read as its cells.
    Notebook,
    /// `.yml .yaml`
    Yaml,
    /// `.toml`
    Toml,
    /// `.json`
    Json,
    /// `.html .htm`
    Html,
    /// `.cfg .ini .conf`
    Ini,
    /// Anything else.
    #[serde(other)]
    Text,
}

/// The extension of `path`'s file name, lower-cased; empty for a name
/// without one or a dotfile (`.bashrc`).
pub fn extension(path: &str) -> String {
    let name = path.rsplit('/').next().unwrap_or(path);
    match name.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => ext.to_ascii_lowercase(),
        _ => String::new(),
    }
}

impl Language {
    /// The language of `path`, by its extension (case-insensitive): the one
    /// table of extensions the builder, the engine and the web page read.
    pub fn of_path(path: &str) -> Self {
        match extension(path).as_str() {
            "py" | "pyi" | "pyx" | "pxd" => Self::Python,
            "c" | "h" => Self::C,
            "cc" | "cpp" | "cxx" | "hpp" | "hh" | "hxx" => Self::Cpp,
            "cu" | "cuh" => Self::Cuda,
            "f" | "for" | "f77" | "f90" | "f95" | "f03" => Self::Fortran,
            "rs" => Self::Rust,
            "js" | "mjs" | "jsx" => Self::Javascript,
            "ts" | "tsx" => Self::Typescript,
            "java" => Self::Java,
            "jl" => Self::Julia,
            "r" => Self::R,
            "m" => Self::Matlab,
            "go" => Self::Go,
            "sh" | "bash" | "zsh" => Self::Shell,
            "md" | "markdown" => Self::Markdown,
            "rst" => Self::Rst,
            "tex" => Self::Latex,
            "bib" => Self::Bibtex,
            "pdf" => Self::Pdf,
            "ipynb" => Self::Notebook,
            "yml" | "yaml" => Self::Yaml,
            "toml" => Self::Toml,
            "json" => Self::Json,
            "html" | "htm" => Self::Html,
            "cfg" | "ini" | "conf" => Self::Ini,
            _ => Self::Text,
        }
    }

    /// Source code in a programming language.
    pub fn is_code(self) -> bool {
        matches!(
            self,
            Self::Python
                | Self::C
                | Self::Cpp
                | Self::Cuda
                | Self::Fortran
                | Self::Rust
                | Self::Javascript
                | Self::Typescript
                | Self::Java
                | Self::Julia
                | Self::R
                | Self::Matlab
                | Self::Go
                | Self::Shell
        )
    }

    /// A configuration or data format (YAML, TOML, JSON, INI).
    pub fn is_config(self) -> bool {
        matches!(self, Self::Yaml | Self::Toml | Self::Json | Self::Ini)
    }

    /// Its name in `docs.json`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Python => "python",
            Self::C => "c",
            Self::Cpp => "cpp",
            Self::Cuda => "cuda",
            Self::Fortran => "fortran",
            Self::Rust => "rust",
            Self::Javascript => "javascript",
            Self::Typescript => "typescript",
            Self::Java => "java",
            Self::Julia => "julia",
            Self::R => "r",
            Self::Matlab => "matlab",
            Self::Go => "go",
            Self::Shell => "shell",
            Self::Markdown => "markdown",
            Self::Rst => "rst",
            Self::Latex => "latex",
            Self::Bibtex => "bibtex",
            Self::Pdf => "pdf",
            Self::Notebook => "notebook",
            Self::Yaml => "yaml",
            Self::Toml => "toml",
            Self::Json => "json",
            Self::Html => "html",
            Self::Ini => "ini",
            Self::Text => "text",
        }
    }
}

impl fmt::Display for Language {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_through_docs_json() {
        for path in [
            "a/b.PY", "x.cu", "n.ipynb", "README", ".bashrc", "t.txt", "m.F90",
        ] {
            let l = Language::of_path(path);
            let json = serde_json::to_string(&l).expect("json");
            assert_eq!(json, format!("\"{}\"", l.as_str()));
            assert_eq!(serde_json::from_str::<Language>(&json).expect("back"), l);
        }
        assert_eq!(Language::of_path("a/b.PY"), Language::Python);
        assert_eq!(Language::of_path("README"), Language::Text);
        assert_eq!(Language::of_path(".bashrc"), Language::Text);
        assert_eq!(
            serde_json::from_str::<Language>("\"cobol\"").expect("other"),
            Language::Text
        );
    }
}
