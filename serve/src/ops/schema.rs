//! An operation's arguments described once, by their JSON schema (schemars,
//! from the argument type): the MCP input schema is it; the OpenAPI body
//! schema and GET query parameters are made from it; a query string's
//! fields are typed by it; and unknown fields are refused against it.

use crate::problem::ApiError;
use cairn_search::Filters;
use rmcp::model::JsonObject;
use schemars::JsonSchema;
use serde_json::Value;
use std::sync::Arc;
use utoipa::openapi::path::{Parameter, ParameterBuilder, ParameterIn};
use utoipa::openapi::{RefOr, Required, Schema};

/// Adds a type's OpenAPI schemas (its own, then those it refers to) and
/// returns the name of its own.
pub type Schemas = fn(&mut Vec<(String, RefOr<Schema>)>) -> String;

/// The JSON schema of `T` as MCP tools take it (draft 2020-12, numeric
/// formats spelled out, cached per type).
pub fn input<T: JsonSchema + 'static>() -> Arc<JsonObject> {
    use std::any::TypeId;
    use std::collections::HashMap;
    use std::sync::{LazyLock, Mutex};
    static CACHE: LazyLock<Mutex<HashMap<TypeId, Arc<JsonObject>>>> =
        LazyLock::new(Default::default);
    let mut cache = CACHE.lock().unwrap_or_else(|p| p.into_inner());
    let schema = cache.entry(TypeId::of::<T>()).or_insert_with(|| {
        let mut schema = (*rmcp::handler::server::common::schema_for_type::<T>()).clone();
        portable_formats(&mut schema);
        Arc::new(schema)
    });
    Arc::clone(schema)
}

/// Replaces the numeric formats schemars writes for Rust's integer and
/// float types (`uint32`, `int64`, `double`, …), which no JSON Schema
/// vocabulary defines and validators warn about, with what they mean:
/// unsigned ones become `minimum: 0`, the others just go.
fn portable_formats(schema: &mut JsonObject) {
    const RUST_FORMATS: &[&str] = &[
        "int", "int8", "int16", "int32", "int64", "int128", "uint", "uint8", "uint16", "uint32",
        "uint64", "uint128", "float", "double",
    ];
    let numeric = schema
        .get("format")
        .and_then(Value::as_str)
        .filter(|f| RUST_FORMATS.contains(f))
        .map(|f| f.starts_with('u'));
    if let Some(unsigned) = numeric {
        schema.remove("format");
        if unsigned && !schema.contains_key("minimum") {
            schema.insert("minimum".to_owned(), 0.into());
        }
    }
    for v in schema.values_mut() {
        match v {
            Value::Object(m) => portable_formats(m),
            Value::Array(items) => items
                .iter_mut()
                .filter_map(Value::as_object_mut)
                .for_each(portable_formats),
            _ => {}
        }
    }
}

/// `T`'s OpenAPI schemas, from its JSON schema: OpenAPI 3.1 schemas are
/// JSON Schema 2020-12, so only the place of the definitions changes.
pub fn openapi<T: JsonSchema>(out: &mut Vec<(String, RefOr<Schema>)>) -> String {
    let mut generator = schemars::generate::SchemaSettings::draft2020_12()
        .with(|s| s.definitions_path = "#/components/schemas/".into())
        .for_deserialize()
        .into_generator();
    let mut root = generator.root_schema_for::<T>().to_value();
    let name = T::schema_name().into_owned();
    if let Some(m) = root.as_object_mut() {
        m.remove("$schema");
        m.remove("title");
    }
    for (def, schema) in generator.take_definitions(true) {
        push(out, def, schema);
    }
    push(out, name.clone(), root);
    name
}

/// The JSON schema of what `T` serializes to (draft 2020-12, definitions
/// inline under `$defs`): MCP's output schema, which a client may check
/// each structured result against.
pub fn output_json<T: JsonSchema>() -> Arc<JsonObject> {
    let schema = schemars::generate::SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator()
        .into_root_schema_for::<T>();
    match schema.to_value() {
        serde_json::Value::Object(mut m) => {
            m.remove("$schema");
            portable_formats(&mut m);
            Arc::new(m)
        }
        _ => Arc::new(JsonObject::new()),
    }
}

/// `T`'s OpenAPI schemas from its utoipa derive (the answers, which the search library types).
pub fn output<T: utoipa::ToSchema>(out: &mut Vec<(String, RefOr<Schema>)>) -> String {
    let name = T::name().into_owned();
    out.push((name.clone(), T::schema()));
    T::schemas(out);
    name
}

fn push(out: &mut Vec<(String, RefOr<Schema>)>, name: String, schema: Value) {
    match serde_json::from_value::<RefOr<Schema>>(schema) {
        Ok(s) => out.push((name, s)),
        // A schema utoipa cannot model would be a bug in an argument type; leave it out rather than fail the document.
        Err(e) => tracing::error!(%name, error = %e, "an argument schema is not an OpenAPI schema"),
    }
}

/// Whether a property's schema admits JSON type `ty` (`"type": "x"` or `["x", "null"]`).
fn admits(property: &Value, ty: &str) -> bool {
    match property.get("type") {
        Some(Value::String(t)) => t == ty,
        Some(Value::Array(ts)) => ts.iter().any(|t| t == ty),
        _ => false,
    }
}

/// Refuses the first of `keys` that `T` does not take, as serde names an unknown field.
pub fn refuse_unknown<T: JsonSchema + 'static>(keys: &[String]) -> Result<(), ApiError> {
    let schema = input::<T>();
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return Ok(());
    };
    match keys.iter().find(|k| !props.contains_key(k.as_str())) {
        None => Ok(()),
        Some(k) => {
            let expected = props
                .keys()
                .map(|p| format!("`{p}`"))
                .collect::<Vec<_>>()
                .join(", ");
            let message = match props.is_empty() {
                true => format!("unknown field `{k}`, there are no fields"),
                false => format!("unknown field `{k}`, expected one of {expected}"),
            };
            Err(ApiError::malformed(Some(k.clone()), message))
        }
    }
}

/// How a query-string field's text becomes JSON.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldKind {
    /// A filter: repeated keys and comma-separated values alike make one list.
    List,
    /// A number.
    Number,
    /// `true` or `false`.
    Bool,
    /// Text, as given.
    Text,
}

/// The kind of a field of arguments whose schema is `input`, in a query string.
pub fn field_kind(input: &JsonObject, field: &str) -> FieldKind {
    if Filters::FIELDS.contains(&field) {
        return FieldKind::List;
    }
    match input.get("properties").and_then(|p| p.get(field)) {
        Some(p) if admits(p, "integer") || admits(p, "number") => FieldKind::Number,
        Some(p) if admits(p, "boolean") => FieldKind::Bool,
        _ => FieldKind::Text,
    }
}

/// `T`'s fields as OpenAPI query parameters: lists travel as one
/// comma-separated string; a field whose schema refers elsewhere is left out
/// (a query string cannot carry an object).
pub fn query_params(input: &JsonObject) -> Vec<Parameter> {
    let required: Vec<&str> = input
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(props) = input.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    props
        .iter()
        .map(|(name, p)| {
            let mut schema = p.clone();
            if let Some(m) = schema.as_object_mut() {
                let description = m.remove("description");
                if admits(p, "array") {
                    *m = serde_json::Map::from_iter([("type".to_owned(), "string".into())]);
                } else if let Some(Value::Array(types)) = m.get("type").cloned() {
                    // Absent, not null, is how a query string leaves a field out.
                    let types: Vec<Value> = types.into_iter().filter(|t| t != "null").collect();
                    if let [one] = types.as_slice() {
                        m.insert("type".to_owned(), one.clone());
                    }
                }
                if let Some(one_of) = m.remove("oneOf").or_else(|| m.remove("anyOf")) {
                    // `Option<Mode>`: the non-null branch.
                    if let Some(b) = one_of
                        .as_array()
                        .and_then(|bs| bs.iter().find(|b| b.get("type") != Some(&"null".into())))
                    {
                        *m = b.as_object().cloned().unwrap_or_default();
                        m.remove("description");
                    }
                }
                m.remove("default");
                m.remove("format");
                (name, description, schema)
            } else {
                (name, None, schema)
            }
        })
        .map(|(name, description, schema)| {
            // The MCP schema keeps its definitions in `$defs`; OpenAPI's are components.
            let schema = serde_json::to_string(&schema)
                .map(|s| s.replace("\"#/$defs/", "\"#/components/schemas/"))
                .ok()
                .and_then(|s| serde_json::from_str::<RefOr<Schema>>(&s).ok());
            let mut b = ParameterBuilder::new()
                .name(name)
                .parameter_in(ParameterIn::Query)
                .required(match required.contains(&name.as_str()) {
                    true => Required::True,
                    false => Required::False,
                })
                .schema(schema);
            if let Some(d) = description.as_ref().and_then(Value::as_str) {
                b = b.description(Some(d));
            }
            b.build()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::search::SearchArgs;

    #[test]
    fn query_fields_are_typed_by_the_schema() {
        let args = input::<SearchArgs>();
        let kind = |f| field_kind(&args, f);
        assert_eq!(kind("toolkit"), FieldKind::List);
        assert_eq!(kind("ref"), FieldKind::List);
        assert_eq!(kind("limit"), FieldKind::Number);
        assert_eq!(kind("threshold"), FieldKind::Number);
        assert_eq!(kind("queries"), FieldKind::Text);
        assert_eq!(kind("mode"), FieldKind::Text);
        let params = query_params(&input::<SearchArgs>());
        let names: Vec<&str> = params.iter().map(|p| p.name.as_str()).collect();
        for f in Filters::FIELDS
            .iter()
            .chain(&["query", "queries", "limit", "mode"])
        {
            assert!(names.contains(f), "{f} in {names:?}");
        }
        let e =
            refuse_unknown::<SearchArgs>(&["query".into(), "colour".into()]).expect_err("unknown");
        assert_eq!(e.field.as_deref(), Some("colour"));
    }

    #[test]
    fn tool_schemas_carry_no_rust_formats() {
        for op in crate::ops::OPERATIONS.iter() {
            for schema in [(op.input)(), (op.output_json)()] {
                let text = serde_json::to_string(&*schema).expect("json");
                for f in ["uint", "int8", "int16", "int32", "int64", "double", "float"] {
                    assert!(
                        !text.contains(&format!("\"format\":\"{f}")),
                        "{}: {text}",
                        op.meta.title
                    );
                }
            }
        }
        let limit = &input::<SearchArgs>()["properties"]["limit"];
        assert_eq!(limit["minimum"], 0, "{limit}");
    }
}
