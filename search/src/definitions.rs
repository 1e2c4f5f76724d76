//! Go to definition: where a name is defined (a function, class, constant,
//! macro, Fortran unit or document section), from the definitions each
//! version records. Exact names first, then any case, then a dotted name
//! (`EnsembleSampler.run_mcmc`) by its last part within its scope.

use crate::error::{SearchError, invalid};
use crate::filters::Filters;
use serde::Serialize;
use utoipa::ToSchema;

/// Definitions returned when a request names no limit.
pub const DEFAULT_DEFINITIONS: usize = 20;
/// Most definitions one answer holds.
pub const MAX_DEFINITIONS: usize = 200;

/// Where is a name defined.
#[derive(Clone, Debug, Default)]
pub struct DefinitionsRequest {
    /// The name, or a dotted one (`Class.method`).
    pub name: String,
    /// Filters, as a search takes them.
    pub filters: Filters,
    /// Definitions wanted (1 to 200).
    pub limit: usize,
    /// The caller's access groups (None: sees everything).
    pub groups: Option<Vec<String>>,
}

/// One definition, cited.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema, schemars::JsonSchema)]
pub struct Definition {
    /// `<category>/<repo>/<path>`.
    pub doc_id: String,
    /// The name defined.
    pub name: String,
    /// class, function, constant, macro or section.
    pub kind: String,
    /// The enclosing definitions, dotted (a method's class); a section's parent headings.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub scope: String,
    /// The defining line's text (cut at 300 characters).
    pub signature: String,
    /// First line of the definition.
    pub start_line: u32,
    /// Its last line.
    pub end_line: u32,
    /// Toolkit.
    pub toolkit: String,
    /// Doctype.
    #[schema(value_type = String)]
    #[schemars(with = "String")]
    pub doctype: cairn_index::Doctype,
    /// The span on GitHub, on the default branch.
    pub github_url: String,
    /// The span on GitHub, at the indexed commit.
    pub permalink: String,
}

/// A name a hit's lines define.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema, schemars::JsonSchema)]
pub struct Defined {
    /// The name.
    pub name: String,
    /// class, function, constant or macro.
    pub kind: String,
    /// The enclosing definitions, dotted.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub scope: String,
    /// The defining line.
    pub line: u32,
}

/// Most names listed for one hit.
const MAX_DEFINED_PER_HIT: usize = 10;

/// How the name was matched.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, ToSchema, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum NameMatch {
    /// Exactly.
    Exact,
    /// In another case.
    AnyCase,
    /// A dotted name, by its last part within the scope its first parts name.
    Dotted,
    /// Nowhere.
    None,
}

/// The definitions of a name.
#[derive(Clone, Debug, Serialize, ToSchema, schemars::JsonSchema)]
pub struct DefinitionsResponse {
    /// The name asked for.
    pub name: String,
    /// How it matched.
    pub matched: NameMatch,
    /// Code first (classes, functions, constants, macros), then sections; by doc_id and line.
    pub definitions: Vec<Definition>,
    /// More definitions matched than `limit`.
    pub truncated: bool,
    /// The version answering.
    pub index_version: String,
}

impl std::fmt::Display for DefinitionsResponse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.definitions.is_empty() {
            writeln!(f, "no definition of {} in the index", self.name)?;
        }
        for d in &self.definitions {
            let scope = match d.scope.as_str() {
                "" => String::new(),
                s => format!(" in {s}"),
            };
            writeln!(
                f,
                "{}:{}-{}  {} {}{scope}\n    {}\n    {}",
                d.doc_id, d.start_line, d.end_line, d.kind, d.name, d.signature, d.permalink
            )?;
        }
        Ok(())
    }
}

/// Whether a recorded definition answers the name asked.
type Matcher<'a> = dyn Fn(&cairn_index::DefinitionRecord) -> bool + 'a;

impl crate::Engine {
    /// The names of the code definitions a caller with `groups` may see (what
    /// a page may link to its definitions: a hidden document's names stay unlinked).
    pub fn defined_names(&self, groups: Option<&[String]>) -> std::collections::HashSet<&str> {
        let snap = self.snapshot();
        let visible: Vec<bool> = snap
            .docs
            .iter()
            .map(|d| crate::access::visible(d, groups))
            .collect();
        snap.definitions
            .iter()
            .filter(|d| d.kind != cairn_index::DefKind::Section && visible[d.doc as usize])
            .map(|d| d.name.as_str())
            .collect()
    }

    /// The code definitions (not sections) that start within `span` of `doc`.
    pub(crate) fn defined_in(&self, doc: u32, span: cairn_index::LineSpan) -> Vec<Defined> {
        let defs = &self.snapshot().definitions;
        let from = defs.partition_point(|d| d.doc < doc);
        defs[from..]
            .iter()
            .take_while(|d| d.doc == doc)
            .filter(|d| {
                d.kind != cairn_index::DefKind::Section
                    && (span.start..=span.end).contains(&d.span.start)
            })
            .take(MAX_DEFINED_PER_HIT)
            .map(|d| Defined {
                name: d.name.clone(),
                kind: d.kind.as_str().to_owned(),
                scope: d.scope.clone(),
                line: d.span.start,
            })
            .collect()
    }

    /// Where `req.name` is defined, in the documents the caller may see.
    pub fn definitions(
        &self,
        req: &DefinitionsRequest,
    ) -> Result<DefinitionsResponse, SearchError> {
        let name = req.name.trim();
        if name.is_empty() || name.len() > 200 {
            return Err(invalid("name", "must be 1 to 200 characters"));
        }
        crate::access::check_filters(&self.snap, &req.filters, req.groups.as_deref())?;
        let limit = match req.limit {
            0 => DEFAULT_DEFINITIONS,
            n if n > MAX_DEFINITIONS => {
                return Err(invalid("limit", format!("at most {MAX_DEFINITIONS}")));
            }
            n => n,
        };
        let snap = self.snapshot();
        let allowed = crate::access::allowed_docs(snap, &req.filters, req.groups.as_deref());
        let visible: Vec<&cairn_index::DefinitionRecord> = snap
            .definitions
            .iter()
            .filter(|d| allowed.get(d.doc as usize).copied().unwrap_or(false))
            .collect();
        let (matched, mut found) = match_name(&visible, name);
        found.sort_by(|a, b| {
            let section =
                |d: &cairn_index::DefinitionRecord| d.kind == cairn_index::DefKind::Section;
            section(a)
                .cmp(&section(b))
                .then_with(|| {
                    snap.docs[a.doc as usize]
                        .doc_id
                        .as_str()
                        .cmp(snap.docs[b.doc as usize].doc_id.as_str())
                })
                .then(a.span.start.cmp(&b.span.start))
        });
        let truncated = found.len() > limit;
        let definitions = found
            .into_iter()
            .take(limit)
            .map(|d| self.definition(d))
            .collect();
        Ok(DefinitionsResponse {
            name: name.to_owned(),
            matched,
            definitions,
            truncated,
            index_version: snap.version.to_string(),
        })
    }

    /// A recorded definition, cited: its defining line and links to its span.
    fn definition(&self, d: &cairn_index::DefinitionRecord) -> Definition {
        let snap = self.snapshot();
        let doc = &snap.docs[d.doc as usize];
        let line = cairn_index::LineSpan {
            start: d.span.start,
            end: d.span.start,
        };
        let signature = snap
            .span_bytes(d.doc, line)
            .map(|(b, _)| {
                String::from_utf8_lossy(b)
                    .trim()
                    .chars()
                    .take(300)
                    .collect()
            })
            .unwrap_or_default();
        let (github_url, permalink) = self.links(d.doc, d.span);
        Definition {
            doc_id: doc.doc_id.to_string(),
            name: d.name.clone(),
            kind: d.kind.as_str().to_owned(),
            scope: d.scope.clone(),
            signature,
            start_line: d.span.start,
            end_line: d.span.end,
            toolkit: doc.toolkit.clone(),
            doctype: doc.doctype,
            github_url,
            permalink,
        }
    }
}

/// The definitions among `visible` that answer `name`, by the first way of matching that finds any.
fn match_name<'d>(
    visible: &[&'d cairn_index::DefinitionRecord],
    name: &str,
) -> (NameMatch, Vec<&'d cairn_index::DefinitionRecord>) {
    let lower = name.to_lowercase();
    let dotted = name.rsplit_once('.');
    let tries: [(NameMatch, &Matcher); 3] = [
        (NameMatch::Exact, &|d| d.name == name),
        (NameMatch::AnyCase, &|d| d.name.to_lowercase() == lower),
        (NameMatch::Dotted, &|d| {
            dotted.is_some_and(|(scope, last)| {
                d.name == last && (d.scope == scope || d.scope.ends_with(&format!(".{scope}")))
            })
        }),
    ];
    tries
        .iter()
        .map(|(m, keep)| {
            (
                *m,
                visible
                    .iter()
                    .copied()
                    .filter(|d| keep(d))
                    .collect::<Vec<_>>(),
            )
        })
        .find(|(_, f)| !f.is_empty())
        .unwrap_or((NameMatch::None, Vec::new()))
}
