//! The endpoints: request shapes, their validation, and one library call each.
//!
//! GET query strings and POST bodies parse into the same request types, so
//! both answer the same question the same way; every parse error names its field.

use super::{AppState, TraceId, json};
use crate::args::{BatchArgs, ContextArgs, SearchArgs, TreeArgs, WeightArgs, WeightResponse};
use crate::auth::Caller;
use crate::problem::{ApiError, Problem};
use actix_web::http::header;
use actix_web::{HttpMessage, HttpRequest, HttpResponse, web};
use cairn_search::Code;
use cairn_search::{
    ContextResponse, HealthResponse, RetrieveResponse, SearchResponse, SpanRequest, TreeResponse,
    VersionResponse,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use utoipa::ToSchema;

/// Registers every endpoint.
pub fn routes(cfg: &mut web::ServiceConfig) {
    // One resource per path, so a wrong method gets 405 rather than 404.
    cfg.service(
        web::resource("/search")
            .route(web::get().to(search_get))
            .route(web::post().to(search_post)),
    )
    .service(web::resource("/retrieve").route(web::post().to(retrieve)))
    .service(web::resource("/retrieve/batch").route(web::post().to(retrieve_batch)))
    .service(web::resource("/tree").route(web::get().to(tree)))
    .service(web::resource("/context").route(web::post().to(context)))
    .service(web::resource("/weight").route(web::post().to(weight)))
    .service(web::resource("/version").route(web::get().to(version)))
    .service(web::resource("/health").route(web::get().to(health)))
    .service(web::resource("/ready").route(web::get().to(ready)))
    .service(web::resource("/metrics").route(web::get().to(metrics)))
    .service(web::resource("/openapi.json").route(web::get().to(openapi)));
}

fn caller(req: &HttpRequest) -> Caller {
    req.extensions()
        .get::<Caller>()
        .cloned()
        .unwrap_or_else(Caller::anonymous)
}

/// Parses JSON bytes into `T`, naming the field at fault.
fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    crate::problem::parse_json(&mut serde_json::Deserializer::from_slice(bytes))
}

/// A POST body: JSON (when a content type is given, it must say so).
fn body<T: DeserializeOwned>(req: &HttpRequest, bytes: &web::Bytes) -> Result<T, ApiError> {
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
    parse_json(bytes)
}

/// Query-string fields that hold lists (repeated, or comma-separated).
const LIST_FIELDS: [&str; 5] = ["toolkit", "doctype", "repo", "category", "path_prefix"];
/// Query-string fields that hold numbers.
const NUMBER_FIELDS: [&str; 5] = ["limit", "threshold", "depth", "max_entries", "max_tokens"];

/// Parses a query string into `T` through the same JSON shapes as the POST bodies.
fn parse_query<T: DeserializeOwned>(query: &str) -> Result<T, ApiError> {
    let mut map = serde_json::Map::new();
    for (k, v) in url::form_urlencoded::parse(query.as_bytes()) {
        let key = k.into_owned();
        if LIST_FIELDS.contains(&key.as_str()) {
            let entry = map
                .entry(key)
                .or_insert_with(|| serde_json::Value::Array(Vec::new()));
            if let serde_json::Value::Array(a) = entry {
                a.extend(
                    v.split(',')
                        .map(str::trim)
                        .filter(|s| !s.is_empty())
                        .map(|s| serde_json::Value::String(s.to_owned())),
                );
            }
            continue;
        }
        if map.contains_key(&key) {
            return Err(ApiError::malformed(
                Some(key.clone()),
                format!("{key} is given more than once"),
            ));
        }
        let value = match NUMBER_FIELDS.contains(&key.as_str()) {
            true => match serde_json::from_str::<serde_json::Number>(v.trim()) {
                Ok(n) => serde_json::Value::Number(n),
                Err(_) => {
                    return Err(ApiError::malformed(
                        Some(key.clone()),
                        format!("{key} must be a number, not {v:?}"),
                    ));
                }
            },
            false => serde_json::Value::String(v.into_owned()),
        };
        map.insert(key, value);
    }
    let bytes = serde_json::to_vec(&map).unwrap_or_default();
    parse_json(&bytes)
}

async fn run_search(
    state: web::Data<AppState>,
    req: &HttpRequest,
    body: SearchArgs,
) -> Result<HttpResponse, ApiError> {
    let engine = state.live.current();
    let request = body.into_request(caller(req).groups, state.deadline_at());
    let resp: SearchResponse = state.cpu(move || engine.search(&request)).await??;
    Ok(json(&resp))
}

/// Search the indexed repositories for passages that answer a question.
#[utoipa::path(
    get,
    path = "/search",
    operation_id = "searchCitations",
    tag = "search",
    params(SearchArgs),
    responses(
        (status = 200, description = "Ranked passages, each with exact lines and GitHub links", body = SearchResponse),
        (status = "4XX", description = "Bad input, auth or limits", body = Problem, content_type = "application/problem+json"),
        (status = "5XX", description = "Overloaded or failed; retry after Retry-After", body = Problem, content_type = "application/problem+json")
    ),
    description = "Finds the passages of the indexed scientific-software repositories (code, docs, notebooks) that best answer a question. Each hit has doc_id, start_line-end_line, a snippet and GitHub links to cite. Use toolkit to stay within one package."
)]
pub async fn search_get(
    state: web::Data<AppState>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let body: SearchArgs = parse_query(req.query_string())?;
    run_search(state, &req, body).await
}

/// Search, with the arguments as a JSON body.
#[utoipa::path(
    post,
    path = "/search",
    operation_id = "searchCitationsPost",
    tag = "search",
    request_body = SearchArgs,
    responses(
        (status = 200, description = "Ranked passages, each with exact lines and GitHub links", body = SearchResponse),
        (status = "4XX", description = "Bad input, auth or limits", body = Problem, content_type = "application/problem+json"),
        (status = "5XX", description = "Overloaded or failed; retry after Retry-After", body = Problem, content_type = "application/problem+json")
    ),
    description = "Same as searchCitations with a JSON body (filters may be lists). Read-only."
)]
pub async fn search_post(
    state: web::Data<AppState>,
    req: HttpRequest,
    bytes: web::Bytes,
) -> Result<HttpResponse, ApiError> {
    let body: SearchArgs = body(&req, &bytes)?;
    run_search(state, &req, body).await
}

/// Get the exact lines of a document.
#[utoipa::path(
    post,
    path = "/retrieve",
    operation_id = "retrievePassage",
    tag = "retrieve",
    request_body = SpanRequest,
    responses(
        (status = 200, description = "The lines, byte for byte as at the indexed commit", body = RetrieveResponse),
        (status = 404, description = "No such document", body = Problem, content_type = "application/problem+json"),
        (status = "4XX", description = "Bad input, auth or limits", body = Problem, content_type = "application/problem+json")
    ),
    description = "Returns lines start..end of a document (doc_id from a search hit) exactly as at the indexed commit, with GitHub links and the file's sha256. Use it to read more around a hit before quoting. Read-only."
)]
pub async fn retrieve(
    state: web::Data<AppState>,
    req: HttpRequest,
    bytes: web::Bytes,
) -> Result<HttpResponse, ApiError> {
    let b: SpanRequest = body(&req, &bytes)?;
    let (start, end) = b.span();
    let resp =
        state
            .live
            .current()
            .retrieve(&b.doc_id, start, end, caller(&req).groups.as_deref())?;
    Ok(json(&resp))
}

/// One item of a batch: the passage, or why not.
#[derive(Debug, Serialize, ToSchema)]
pub struct BatchItem {
    /// Whether this item succeeded.
    ok: bool,
    /// The passage, when ok.
    #[serde(skip_serializing_if = "Option::is_none")]
    passage: Option<RetrieveResponse>,
    /// The problem, when not ok.
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<Problem>,
}

/// The answer to a batch.
#[derive(Debug, Serialize, ToSchema)]
pub struct BatchResponse {
    /// One per item, in order.
    items: Vec<BatchItem>,
    /// The version answering.
    index_version: String,
}

/// Get several spans in one call.
#[utoipa::path(
    post,
    path = "/retrieve/batch",
    operation_id = "retrievePassages",
    tag = "retrieve",
    request_body = BatchArgs,
    responses(
        (status = 200, description = "One result per item; each succeeds or fails alone", body = BatchResponse),
        (status = "4XX", description = "Bad input, auth or limits", body = Problem, content_type = "application/problem+json")
    ),
    description = "Like retrievePassage for up to 50 spans; each item succeeds or fails on its own. Together at most 48,000 bytes of text. Read-only."
)]
pub async fn retrieve_batch(
    state: web::Data<AppState>,
    req: HttpRequest,
    bytes: web::Bytes,
) -> Result<HttpResponse, ApiError> {
    let b: BatchArgs = body(&req, &bytes)?;
    let engine = state.live.current();
    let results = engine.retrieve_batch(&b.items, caller(&req).groups.as_deref())?;
    let trace = req
        .extensions()
        .get::<TraceId>()
        .map(|t| t.0.clone())
        .unwrap_or_default();
    let items = results
        .into_iter()
        .map(|r| match r {
            Ok(p) => BatchItem {
                ok: true,
                passage: Some(p),
                error: None,
            },
            Err(e) => BatchItem {
                ok: false,
                passage: None,
                error: Some(ApiError::from(e).problem(&trace, req.path())),
            },
        })
        .collect();
    Ok(json(&BatchResponse {
        items,
        index_version: engine.snapshot().version.to_string(),
    }))
}

/// List the documents under a prefix.
#[utoipa::path(
    get,
    path = "/tree",
    operation_id = "listDocuments",
    tag = "browse",
    params(TreeArgs),
    responses(
        (status = 200, description = "Folders and files under the prefix", body = TreeResponse),
        (status = "4XX", description = "Bad input or auth", body = Problem, content_type = "application/problem+json")
    ),
    description = "Lists the doc_id hierarchy (categories, repositories, folders, files with doctype and line count) under a prefix. Use it to discover what is indexed."
)]
pub async fn tree(state: web::Data<AppState>, req: HttpRequest) -> Result<HttpResponse, ApiError> {
    let p: TreeArgs = parse_query(req.query_string())?;
    let resp = p.run(&state.live.current(), caller(&req).groups.as_deref())?;
    Ok(json(&resp))
}

/// Build a cited context block for a prompt.
#[utoipa::path(
    post,
    path = "/context",
    operation_id = "buildContext",
    tag = "search",
    request_body = ContextArgs,
    responses(
        (status = 200, description = "Numbered passages within the token budget, and their citations", body = ContextResponse),
        (status = "4XX", description = "Bad input, auth or limits", body = Problem, content_type = "application/problem+json"),
        (status = "5XX", description = "Overloaded or failed; retry after Retry-After", body = Problem, content_type = "application/problem+json")
    ),
    description = "For bots that build prompts: searches, then returns numbered passages ([1], [2] …) cut at line boundaries to fit max_tokens, with their links. insufficient_evidence is true when nothing clears the threshold. Read-only."
)]
pub async fn context(
    state: web::Data<AppState>,
    req: HttpRequest,
    bytes: web::Bytes,
) -> Result<HttpResponse, ApiError> {
    let b: ContextArgs = body(&req, &bytes)?;
    let request = b.into_request(caller(&req).groups, state.deadline_at());
    let engine = state.live.current();
    let resp: ContextResponse = state.cpu(move || engine.context(&request)).await??;
    Ok(json(&resp))
}

/// Set a runtime ranking weight (admin tokens only).
#[utoipa::path(
    post,
    path = "/weight",
    operation_id = "setWeight",
    tag = "admin",
    request_body = WeightArgs,
    responses(
        (status = 200, description = "The stored weight", body = WeightResponse),
        (status = 403, description = "Not an admin token", body = Problem, content_type = "application/problem+json"),
        (status = "4XX", description = "Bad input or auth", body = Problem, content_type = "application/problem+json")
    ),
    description = "Admin only: multiplies a document's ranking score (clamped 0.1 to 10) in a namespace until it expires. Changes future answers."
)]
pub async fn weight(
    state: web::Data<AppState>,
    req: HttpRequest,
    bytes: web::Bytes,
) -> Result<HttpResponse, ApiError> {
    if !caller(&req).admin {
        return Err(ApiError::new(
            Code::Forbidden,
            "setting weights needs an admin token (`cairn token add NAME --admin`)",
        ));
    }
    let b: WeightArgs = body(&req, &bytes)?;
    Ok(json(&b.apply(&state.live.current(), &caller(&req))?))
}

/// What index is being served.
#[utoipa::path(
    get,
    path = "/version",
    operation_id = "getIndexVersion",
    tag = "status",
    responses(
        (status = 200, description = "Version, build time, model and each repository's branch and commit", body = VersionResponse),
        (status = 401, description = "No or bad token", body = Problem, content_type = "application/problem+json")
    ),
    description = "The index version being served, when it was built, the embedding model, and each repository's default branch and indexed commit."
)]
pub async fn version(state: web::Data<AppState>, req: HttpRequest) -> HttpResponse {
    json(&state.live.current().version(caller(&req).groups.as_deref()))
}

/// Liveness and counts.
#[utoipa::path(
    get,
    path = "/health",
    operation_id = "getHealth",
    tag = "status",
    responses((status = 200, description = "The server is up; counts of what the caller can see", body = HealthResponse)),
    description = "Liveness: 200 while the server runs, with document counts by doctype (and by repository for a caller with credentials)."
)]
pub async fn health(state: web::Data<AppState>, req: HttpRequest) -> HttpResponse {
    let mut health = state.live.current().health(caller(&req).groups.as_deref());
    // Probes need no names: without credentials, counts only.
    if req.extensions().contains::<super::Anonymous>() {
        health.docs_by_repo.clear();
    }
    json(&health)
}

/// Readiness.
#[derive(Debug, Serialize, ToSchema)]
pub struct ReadyResponse {
    /// An index is loaded and answering.
    ready: bool,
    /// The version answering.
    index_version: String,
}

/// Whether an index is loaded.
#[utoipa::path(
    get,
    path = "/ready",
    operation_id = "getReady",
    tag = "status",
    responses((status = 200, description = "An index is loaded", body = ReadyResponse)),
    description = "Readiness for load balancers: 200 once an index is loaded."
)]
pub async fn ready(state: web::Data<AppState>) -> HttpResponse {
    json(&ReadyResponse {
        ready: true,
        index_version: state.live.current().snapshot().version.to_string(),
    })
}

async fn metrics(state: web::Data<AppState>) -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/plain; version=0.0.4")
        .body(
            state
                .metrics
                .render(state.pool.depth(), state.live.current().query_cache()),
        )
}

async fn openapi(state: web::Data<AppState>) -> HttpResponse {
    json(&super::openapi::document(state.opts.public_url.as_deref()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_strings_parse_like_bodies() {
        let b: SearchArgs =
            parse_query("query=emcee+pool&limit=5&toolkit=emcee,dynesty&toolkit=corner.py")
                .expect("parse");
        let r = b.into_request(None, std::time::Instant::now());
        assert_eq!(r.query, "emcee pool");
        assert_eq!(r.limit, 5);
        assert_eq!(r.filters.toolkit, ["emcee", "dynesty", "corner.py"]);
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
