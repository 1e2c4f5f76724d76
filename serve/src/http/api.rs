//! The endpoints, generated from [`crate::ops::OPERATIONS`]: each route
//! parses its query string or JSON body into the operation's arguments and
//! runs the operation; plus the server's own routes (metrics, the OpenAPI
//! document).
//!
//! GET query strings and POST bodies parse into the same JSON shapes, so
//! both answer the same question the same way; every parse error names its field.

use super::{AppState, TraceId};
use crate::ops::schema::{FieldKind, field_kind};
use crate::ops::{Call, Input, Method, OPERATIONS, Operation};
use crate::problem::ApiError;
use actix_web::http::header;
use actix_web::{HttpMessage, HttpRequest, HttpResponse, web};
use cairn_search::{Caller, Code, Filters};
use rmcp::model::JsonObject;
use serde_json::Value;
use std::sync::Arc;

/// Registers every endpoint.
pub fn routes(cfg: &mut web::ServiceConfig) {
    // One resource per path, so a wrong method gets 405 rather than 404.
    let mut paths: Vec<&'static str> = Vec::new();
    for op in OPERATIONS {
        for r in op.meta.routes {
            if !paths.contains(&r.path) {
                paths.push(r.path);
            }
        }
    }
    for path in paths {
        let mut resource = web::resource(path);
        for op in OPERATIONS {
            for r in op.meta.routes.iter().filter(|r| r.path == path) {
                resource = match r.method {
                    Method::Get => {
                        resource.route(web::get().to(move |state, req| get(op, state, req)))
                    }
                    Method::Post => resource.route(
                        web::post().to(move |state, req, bytes| post(op, state, req, bytes)),
                    ),
                };
            }
        }
        cfg.service(resource);
    }
    cfg.service(web::resource("/metrics").route(web::get().to(metrics)))
        .service(web::resource("/openapi.json").route(web::get().to(openapi)))
        .service(
            web::resource(crate::oauth::METADATA_PATH)
                .route(web::get().to(|s| resource_metadata(s, false))),
        )
        .service(
            web::resource(crate::oauth::MCP_METADATA_PATH)
                .route(web::get().to(|s| resource_metadata(s, true))),
        );
}

/// RFC 9728 protected-resource metadata: where an OAuth client learns which
/// authorization servers issue tokens for this server (404 without OAuth).
async fn resource_metadata(
    state: web::Data<AppState>,
    mcp: bool,
) -> Result<HttpResponse, ApiError> {
    let rs = state.auth.oauth().ok_or_else(|| {
        ApiError::new(
            Code::NotFound,
            "this server takes no OAuth access tokens (start it with --oauth-issuer and --public-url)",
        )
    })?;
    Ok(HttpResponse::Ok()
        .insert_header((header::CACHE_CONTROL, "public, max-age=3600"))
        .json(rs.metadata(mcp)))
}

/// An operation called with its arguments in the query string.
async fn get(
    op: &'static Operation,
    state: web::Data<AppState>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    // An operation without parameters ignores the query string, as probes expect.
    let input = (op.input)();
    let takes_args = input
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|p| !p.is_empty());
    let args = match takes_args {
        true => Input::Value(query_args(&input, req.query_string())?),
        false => Input::Value(Value::Object(serde_json::Map::new())),
    };
    answer(op, &state, &req, args).await
}

/// An operation called with its arguments as a JSON body.
async fn post(
    op: &'static Operation,
    state: web::Data<AppState>,
    req: HttpRequest,
    bytes: web::Bytes,
) -> Result<HttpResponse, ApiError> {
    let args = body(&req, &bytes)?;
    if op.meta.model && super::events::wanted(&req) {
        drop(args);
        return events(op, &state, &req, bytes).await;
    }
    answer(op, &state, &req, args).await
}

/// A call that waits on the model, as server-sent events: each step and
/// draft as JSON, then the answer as the JSON body would have been, or
/// its problem.
async fn events(
    op: &'static Operation,
    state: &AppState,
    req: &HttpRequest,
    bytes: web::Bytes,
) -> Result<HttpResponse, ApiError> {
    use super::events::{Render, event, stream};
    use crate::ops::ask::{AskEvent, Progress};
    let (progress, told) = Progress::new(true);
    let call = call(state, req).with_progress(progress);
    let (trace_id, instance) = (call.trace_id.clone(), call.instance.clone());
    let render = Render {
        event: Box::new(|told: &AskEvent| match told {
            AskEvent::Step(s) => event("step", &serde_json::to_string(s).unwrap_or_default()),
            AskEvent::Draft(t) => event("draft", &serde_json::json!({ "text": t }).to_string()),
        }),
        answer: Box::new(|a: crate::ops::Answer| event("answer", &a.value.to_string())),
        error: Box::new(move |e: &ApiError| {
            let problem = e.problem(&trace_id, &instance);
            event(
                "error",
                &serde_json::to_string(&problem).unwrap_or_default(),
            )
        }),
    };
    let job = async move { op.run(Input::Json(&bytes), call).await };
    stream(job, told, render).await
}

async fn answer(
    op: &'static Operation,
    state: &AppState,
    req: &HttpRequest,
    args: Input<'_>,
) -> Result<HttpResponse, ApiError> {
    Ok(json(&op.run(args, call(state, req)).await?.value))
}

/// The call a request makes: its caller, deadline and trace id.
pub(crate) fn call(state: &AppState, req: &HttpRequest) -> Call {
    let ext = req.extensions();
    let caller = ext
        .get::<Caller>()
        .cloned()
        .unwrap_or_else(Caller::anonymous);
    Call::new(state.live.current(), caller, req.path())
        .on(
            state.pool.clone(),
            cairn_search::Deadline::at(state.deadline_at()),
        )
        .paid_by(
            ext.get::<crate::costs::Payer>().cloned(),
            ext.contains::<super::Anonymous>(),
        )
        .traced(
            ext.get::<TraceId>()
                .map(|t| t.0.clone())
                .unwrap_or_default(),
        )
        .versions(Arc::clone(&state.live) as Arc<dyn crate::ops::Versions>)
        .with_model(state.llm.clone())
}

/// A POST body: JSON (when a content type is given, it must say so).
pub(crate) fn body<'a>(req: &HttpRequest, bytes: &'a web::Bytes) -> Result<Input<'a>, ApiError> {
    if let Some(ct) = req.headers().get(header::CONTENT_TYPE)
        && !ct
            .to_str()
            .is_ok_and(|s| s.trim_start().starts_with("application/json"))
    {
        return Err(ApiError::new(
            Code::UnsupportedMediaType,
            "send the body as application/json",
        ));
    }
    Ok(Input::Json(bytes))
}

/// A query string as the JSON object a POST body would carry, each field
/// typed by the arguments' schema (`input`).
fn query_args(input: &JsonObject, query: &str) -> Result<Value, ApiError> {
    let mut map = serde_json::Map::new();
    for (k, v) in url::form_urlencoded::parse(query.as_bytes()) {
        let key = k.into_owned();
        let kind = field_kind(input, &key);
        if kind == FieldKind::List {
            let entry = map.entry(key).or_insert_with(|| Value::Array(Vec::new()));
            if let Value::Array(a) = entry {
                a.extend(Filters::split(&v).map(|s| Value::String(s.to_owned())));
            }
            continue;
        }
        if map.contains_key(&key) {
            return Err(ApiError::malformed(
                Some(key.clone()),
                format!("{key} is given more than once"),
            ));
        }
        let value = match kind {
            FieldKind::Number => match serde_json::from_str::<serde_json::Number>(v.trim()) {
                Ok(n) => Value::Number(n),
                Err(_) => {
                    return Err(ApiError::malformed(
                        Some(key.clone()),
                        format!("{key} must be a number, not {v:?}"),
                    ));
                }
            },
            FieldKind::Bool => match v.trim() {
                "true" | "1" => Value::Bool(true),
                "false" | "0" => Value::Bool(false),
                _ => {
                    return Err(ApiError::malformed(
                        Some(key.clone()),
                        format!("{key} must be true or false, not {v:?}"),
                    ));
                }
            },
            FieldKind::List | FieldKind::Text => Value::String(v.into_owned()),
        };
        map.insert(key, value);
    }
    Ok(Value::Object(map))
}

async fn metrics(state: web::Data<AppState>, req: HttpRequest) -> HttpResponse {
    // Freshness as the scraper may see it: another group's repositories stay unnamed.
    let groups = req
        .extensions()
        .get::<Caller>()
        .and_then(|c| c.groups.clone());
    state
        .metrics
        .freshness(&state.live.current().health(groups.as_deref()));
    HttpResponse::Ok()
        .content_type("text/plain; version=0.0.4")
        .body(
            state
                .metrics
                .render(state.pool.depth(), state.live.current().query_cache()),
        )
}

async fn openapi(state: web::Data<AppState>) -> HttpResponse {
    // It depends on the server's options only: made once, not on every call.
    let body = state.openapi.get_or_init(|| {
        serde_json::to_string(&super::openapi::document(state.opts.public_url.as_deref()))
            .unwrap_or_default()
    });
    HttpResponse::Ok()
        .content_type("application/json")
        .body(body.clone())
}

/// A response the default JSON way, for handlers.
fn json<T: serde::Serialize>(value: &T) -> HttpResponse {
    HttpResponse::Ok().json(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::retrieve_batch::BatchArgs;
    use crate::ops::schema::input;
    use crate::ops::search::SearchArgs;
    use cairn_search::SpanRequest;
    use serde::de::DeserializeOwned;

    /// A query string parsed as `T`, as a GET route does.
    fn parse_query<T: DeserializeOwned + schemars::JsonSchema + 'static>(
        query: &str,
    ) -> Result<T, ApiError> {
        Input::Value(query_args(&input::<T>(), query)?).parse()
    }

    /// JSON bytes parsed as `T`, as a POST route does.
    fn parse_json<T: DeserializeOwned + schemars::JsonSchema + 'static>(
        bytes: &[u8],
    ) -> Result<T, ApiError> {
        Input::Json(bytes).parse()
    }

    #[test]
    fn query_strings_parse_like_bodies() {
        let b: SearchArgs =
            parse_query("query=emcee+pool&limit=5&toolkit=emcee,dynesty&toolkit=corner.py")
                .expect("parse");
        assert_eq!(b.query, "emcee pool");
        assert_eq!(b.limit, Some(5));
        assert_eq!(b.filters.toolkit, ["emcee", "dynesty", "corner.py"]);
        let e = parse_query::<SearchArgs>("query=x&limit=many").expect_err("error");
        assert_eq!(e.field.as_deref(), Some("limit"));
        let e = parse_query::<SearchArgs>("limit=3").expect_err("error");
        assert_eq!(e.field.as_deref(), Some("query"));
        let e = parse_query::<SearchArgs>("query=x&colour=red").expect_err("error");
        assert_eq!(e.field.as_deref(), Some("colour"));
        let e = parse_query::<SearchArgs>("query=x&mode=fast").expect_err("error");
        assert_eq!(e.field.as_deref(), Some("mode"));
        let e = parse_query::<SearchArgs>("query=x&query=y").expect_err("error");
        assert_eq!(e.field.as_deref(), Some("query"));
    }

    #[test]
    fn json_errors_name_the_field() {
        let e = parse_json::<SpanRequest>(br#"{"doc_id": "a/b/c", "start": "one"}"#)
            .expect_err("error");
        assert_eq!(e.field.as_deref(), Some("start"));
        let e = parse_json::<BatchArgs>(br#"{"items": [{"doc_id": 3}]}"#).expect_err("error");
        assert_eq!(e.field.as_deref(), Some("items[0].doc_id"));
        let e = parse_json::<SpanRequest>(b"{not json").expect_err("error");
        assert_eq!(e.code, "malformed_request");
    }
}
