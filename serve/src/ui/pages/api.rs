//! The API reference, from the OpenAPI document: each path with a curl line.

use super::super::html::{attr, esc, query_value};
use super::wire_name;
use std::fmt::Write;
use utoipa::openapi::OpenApi;
use utoipa::openapi::path::{Operation, Parameter};

/// The API reference, from the OpenAPI document: each operation, its
/// parameters and a curl line.
pub fn api(doc: &OpenApi, base: &str) -> String {
    let mut out = String::from(
        "<h1>HTTP API</h1><p>Every operation answers JSON; errors are RFC 9457 <code>application/problem+json</code> naming the field at fault. Send <code>Authorization: Bearer $CAIRN_TOKEN</code> (make one with <code>cairn token add NAME</code>). The machine-readable document is <a href=\"/openapi.json\">/openapi.json</a> (import it as a GPT Action).</p>",
    );
    // Every (method, path, operation) of the document, in its order.
    let ops: Vec<(&str, &str, &Operation)> = doc
        .paths
        .paths
        .iter()
        .flat_map(|(p, item)| {
            [("get", &item.get), ("post", &item.post)]
                .into_iter()
                .filter_map(move |(m, op)| Some((m, p.as_str(), op.as_ref()?)))
        })
        .collect();
    let id = |op: &Operation| op.operation_id.clone().unwrap_or_default();
    out.push_str("<nav aria-label=\"Operations\"><ul class=\"toc\">");
    for (method, p, op) in &ops {
        let _ = write!(
            out,
            "<li><a href=\"#{}\"><code>{} {}</code></a> {}</li>",
            attr(&id(op)),
            esc(&method.to_uppercase()),
            esc(p),
            esc(op.summary.as_deref().unwrap_or(""))
        );
    }
    out.push_str("</ul></nav>");
    for (method, p, op) in &ops {
        let _ = write!(
            out,
            "<section class=\"op\" id=\"{}\"><h2><code>{} {}</code></h2><p>{}</p>",
            attr(&id(op)),
            esc(&method.to_uppercase()),
            esc(p),
            esc(op.description.as_deref().unwrap_or(""))
        );
        let params: &[Parameter] = op.parameters.as_deref().unwrap_or_default();
        if !params.is_empty() {
            out.push_str("<table class=\"params\"><thead><tr><th scope=\"col\">Parameter</th><th scope=\"col\">In</th><th scope=\"col\">Required</th><th scope=\"col\">Meaning</th></tr></thead><tbody>");
            for prm in params {
                let _ = write!(
                    out,
                    "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td></tr>",
                    esc(&prm.name),
                    esc(&wire_name(&prm.parameter_in)),
                    if required(prm) { "yes" } else { "no" },
                    esc(prm.description.as_deref().unwrap_or(""))
                );
            }
            out.push_str("</tbody></table>");
        }
        let _ = write!(
            out,
            "<pre class=\"curl\" tabindex=\"0\"><code>{}</code></pre></section>",
            esc(&curl(base, p, method, params))
        );
    }
    out
}

pub(super) fn required(prm: &Parameter) -> bool {
    matches!(prm.required, utoipa::openapi::Required::True)
}

/// A curl line for one operation, with the required parameters filled by example values.
pub(super) fn curl(base: &str, p: &str, method: &str, params: &[Parameter]) -> String {
    let example = |name: &str| match name {
        "query" => "emcee multiprocessing Pool",
        "doc_id" => "general_tools/emcee/src/emcee/ensemble.py",
        "start" => "560",
        "end" => "570",
        "prefix" => "general_tools",
        _ => "…",
    };
    if method == "get" {
        let q: Vec<String> = params
            .iter()
            .filter(|prm| required(prm))
            .map(|prm| format!("{}={}", prm.name, query_value(example(&prm.name))))
            .collect();
        let sep = if q.is_empty() { "" } else { "?" };
        format!(
            "curl -H \"Authorization: Bearer $CAIRN_TOKEN\" \"{base}{p}{sep}{}\"",
            q.join("&")
        )
    } else {
        let body = match p {
            "/search" | "/context" => r#"{"query": "emcee multiprocessing Pool"}"#,
            "/retrieve" => {
                r#"{"doc_id": "general_tools/emcee/src/emcee/ensemble.py", "start": 560, "end": 570}"#
            }
            _ => "{}",
        };
        format!(
            "curl -X POST -H \"Authorization: Bearer $CAIRN_TOKEN\" -H 'content-type: application/json' \\\n  -d '{body}' {base}{p}"
        )
    }
}
