//! Which MCP tools a session lists, and how lean each one is. By default
//! the seven a model needs most ([`DEFAULT_TOOLS`]); else the sets and
//! tools a client asks for (`cairn mcp --toolsets read,code --tools
//! history`, or `/mcp?toolsets=…&tools=…` per request; `all` for every
//! one). `ask` is listed only where a model is configured, `set_weight`
//! only to admins. Each tool is listed lean: its description (the toolkit
//! catalog on `search_passages` alone), its input schema without what only
//! the HTTP API needs, and its output schema's shape without its words (a
//! result's own field names say what they are). The HTTP API's OpenAPI
//! document keeps every word.

use crate::ops::{OPERATIONS, Operation, Toolset, Who};
use rmcp::model::{MetaObject, Tool, ToolAnnotations};
use serde_json::{Map, Value};
use std::sync::Arc;

/// The tools listed when a client asks for none in particular.
pub const DEFAULT_TOOLS: [&str; 7] = [
    "search_passages",
    "retrieve",
    "grep",
    "definitions",
    "explain",
    "search",
    "fetch",
];

/// Words in the argument descriptions that only the HTTP API's query strings need.
const QUERY_STRING_NOTE: &str = " In a query string: comma-separated.";

/// The tools a session lists: the default ones, or the sets and tools named.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ToolChoice {
    sets: Vec<Toolset>,
    tools: Vec<String>,
}

impl ToolChoice {
    /// The sets and tools `names` name (`read`, `code`, `history`,
    /// `explain`, `admin`, `all`, or a tool's name), each checked.
    pub fn parse<S: AsRef<str>>(names: &[S]) -> Result<Self, String> {
        let mut choice = Self::default();
        for name in names.iter().flat_map(|n| n.as_ref().split(',')) {
            let name = name.trim();
            if name.is_empty() {
                continue;
            }
            if name == "all" {
                choice.sets.extend(Toolset::ALL);
            } else if let Some(set) = Toolset::ALL.iter().find(|s| s.name() == name) {
                choice.sets.push(*set);
            } else if OPERATIONS.iter().any(|op| op.meta.tool == Some(name)) {
                choice.tools.push(name.to_owned());
            } else {
                let sets: Vec<&str> = Toolset::ALL.iter().map(|s| s.name()).collect();
                return Err(format!(
                    "{name:?} is neither a tool nor a set ({}, all)",
                    sets.join(", ")
                ));
            }
        }
        Ok(choice)
    }

    /// The choice a request's query string makes (`toolsets=…`, `tools=…`),
    /// if it makes one.
    pub fn from_query(query: &str) -> Result<Option<Self>, String> {
        let named: Vec<String> = url::form_urlencoded::parse(query.as_bytes())
            .filter(|(k, _)| k == "toolsets" || k == "tools")
            .map(|(_, v)| v.into_owned())
            .collect();
        match named.is_empty() {
            true => Ok(None),
            false => Self::parse(&named).map(Some),
        }
    }

    /// Whether `op`'s tool is chosen.
    fn chooses_op(&self, op: &Operation) -> bool {
        let Some(tool) = op.meta.tool else {
            return false;
        };
        match self.sets.is_empty() && self.tools.is_empty() {
            true => DEFAULT_TOOLS.contains(&tool),
            false => self.sets.contains(&op.meta.toolset) || self.tools.iter().any(|t| t == tool),
        }
    }

    /// Whether `tool` is chosen: a session answers it (the operation
    /// itself refuses a caller who may not call it, as over HTTP).
    pub fn chooses(&self, tool: &str) -> bool {
        OPERATIONS
            .iter()
            .find(|op| op.meta.tool == Some(tool))
            .is_some_and(|op| self.chooses_op(op))
    }

    /// The tools listed, lean, with the toolkits the caller may see (`catalog`).
    pub fn listed(&self, admin: bool, has_model: bool, catalog: &str) -> Vec<Tool> {
        OPERATIONS
            .iter()
            .filter(|op| self.chooses_op(op) && allowed(op, admin, has_model))
            .filter_map(|op| tool(op, catalog))
            .collect()
    }
}

/// Whether `op` may be listed at all: admins' tools to admins, the model's
/// where there is one.
fn allowed(op: &Operation, admin: bool, has_model: bool) -> bool {
    (admin || op.meta.who != Who::Admin) && (has_model || !op.meta.model)
}

/// `op` as MCP lists it, lean.
fn tool(op: &Operation, catalog: &str) -> Option<Tool> {
    let name = op.meta.tool?;
    // The catalog once, on the tool a model calls first.
    let description = match name == "search_passages" && !catalog.is_empty() {
        true => format!("{} Toolkits: {catalog}", op.meta.description),
        false => op.meta.description.to_owned(),
    };
    let input = match lean_input(Value::Object((op.input)().as_ref().clone())) {
        Value::Object(m) => m,
        _ => Map::new(),
    };
    let mut t = Tool::new(name, description, Arc::new(input));
    t.title = Some(op.meta.title.to_owned());
    t.output_schema = match shape((op.output_json)().as_ref()) {
        Value::Object(m) => Some(Arc::new(m)),
        _ => None,
    };
    if crate::mcp_app::TOOLS.contains(&name) {
        t.meta = Some(MetaObject(crate::mcp_app::tool_meta()));
    }
    t.annotations = Some(
        ToolAnnotations::new()
            .read_only(op.meta.read_only)
            .destructive(false)
            .idempotent(true)
            .open_world(false),
    );
    Some(t)
}

/// An input schema as a model needs it: every argument and its words, but
/// no titles, formats, `$schema`, null defaults or query-string notes.
fn lean_input(v: Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.into_iter()
                .filter(|(k, v)| {
                    !matches!(k.as_str(), "title" | "format" | "$schema")
                        && !(k == "default" && (v.is_null() || v == &Value::Array(Vec::new())))
                })
                .map(|(k, v)| match (k.as_str(), v) {
                    ("description", Value::String(d)) => {
                        (k, Value::String(d.replace(QUERY_STRING_NOTE, "")))
                    }
                    (_, v) => (k, lean_input(v)),
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.into_iter().map(lean_input).collect()),
        other => other,
    }
}

/// An output schema's shape: its top-level fields, each with its JSON type
/// where it has a plain one (any value where it is a reference or a
/// choice), and which are required. Results still conform; a model reads
/// what each field holds from the result itself.
fn shape(schema: &Map<String, Value>) -> Value {
    let mut out = Map::new();
    out.insert("type".to_owned(), "object".into());
    let properties: Map<String, Value> = schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| {
            p.iter()
                .map(|(k, v)| {
                    let mut field = Map::new();
                    if let Some(t) = v.get("type") {
                        field.insert("type".to_owned(), t.clone());
                    }
                    (k.clone(), Value::Object(field))
                })
                .collect()
        })
        .unwrap_or_default();
    out.insert("properties".to_owned(), Value::Object(properties));
    if let Some(r) = schema.get("required") {
        out.insert("required".to_owned(), r.clone());
    }
    Value::Object(out)
}

/// `emcee (The Python ensemble sampling toolkit…); dynesty (…)`: each
/// toolkit the version lists, with its repositories' descriptions.
pub fn toolkit_catalog(v: &cairn_search::VersionResponse) -> String {
    v.repos
        .iter()
        .map(|r| match r.description.as_str() {
            "" => r.toolkit.clone(),
            d => format!("{} ({})", r.toolkit, d.trim_end_matches('.')),
        })
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_tools_are_operations_and_names_are_checked() {
        for name in DEFAULT_TOOLS {
            assert!(ToolChoice::default().chooses(name), "{name}");
        }
        assert!(!ToolChoice::default().chooses("history"));
        let c = ToolChoice::parse(&["code,history", "tree"]).expect("parse");
        assert!(c.chooses("grep") && c.chooses("history"));
        assert!(c.chooses("tree") && !c.chooses("search_passages"));
        let unknown = ToolChoice::parse(&["nope"]).expect_err("unknown");
        assert!(unknown.contains("neither"), "{unknown}");
        let all = ToolChoice::parse(&["all"]).expect("all");
        let listed = |admin, model| -> Vec<String> {
            all.listed(admin, model, "")
                .iter()
                .map(|t| t.name.to_string())
                .collect()
        };
        assert!(!listed(false, false).contains(&"ask".to_owned()));
        assert!(listed(false, true).contains(&"ask".to_owned()));
        assert!(!listed(false, true).contains(&"set_weight".to_owned()));
        assert!(listed(true, true).contains(&"set_weight".to_owned()));
        assert_eq!(ToolChoice::from_query("a=1").expect("none"), None);
        assert!(
            ToolChoice::from_query("toolsets=read&tools=grep")
                .expect("some")
                .is_some()
        );
    }

    #[test]
    fn a_shape_keeps_types_and_what_is_required() {
        let schema = serde_json::json!({"type": "object", "description": "x",
            "properties": {"a": {"type": "string", "description": "words"}, "b": {"$ref": "#/$defs/B"}},
            "required": ["a"], "$defs": {"B": {"type": "object"}}});
        let Value::Object(m) = schema else {
            unreachable!()
        };
        assert_eq!(
            shape(&m),
            serde_json::json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {}}, "required": ["a"]})
        );
    }
}
