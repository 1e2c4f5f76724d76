//! The endpoints: request shapes, their validation, and one library call each.
//!
//! GET query strings and POST bodies parse into the same request types, so
//! both answer the same question the same way; every parse error names its field.

use super::{AppState, TraceId, json};
use crate::auth::Caller;
use crate::problem::{ApiError, Problem};
use actix_web::http::StatusCode;
use actix_web::http::header;
use actix_web::{HttpMessage, HttpRequest, HttpResponse, web};
use cairn_search::{
    ChatMessage, ContextRequest, ContextResponse, Filters, HealthResponse, Mode, RetrieveResponse,
    SearchRequest, SearchResponse, SpanRequest, TokenizerName, TreeResponse, VersionResponse,
};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

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
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
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

/// One value or a list of them.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(untagged)]
enum OneOrMany {
    #[default]
    None,
    One(String),
    Many(Vec<String>),
}

impl OneOrMany {
    fn into_vec(self) -> Vec<String> {
        match self {
            OneOrMany::None => Vec::new(),
            OneOrMany::One(s) => vec![s],
            OneOrMany::Many(v) => v,
        }
    }
}

/// A search.
#[derive(Debug, Deserialize, ToSchema, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct SearchBody {
    /// The question or keywords, up to 1,000 characters.
    query: String,
    /// Hits wanted, 1 to 50 (default 10).
    #[serde(default)]
    limit: Option<usize>,
    /// Only these toolkits (lowercase repository names, e.g. `emcee`, `mulensmodel`). GET: comma-separated.
    #[serde(default)]
    #[schema(value_type = Option<Vec<String>>)]
    #[param(value_type = Option<String>)]
    toolkit: OneOrMany,
    /// Only these doctypes: code, doc, readme, notebook, example, test, config. GET: comma-separated.
    #[serde(default)]
    #[schema(value_type = Option<Vec<String>>)]
    #[param(value_type = Option<String>)]
    doctype: OneOrMany,
    /// Only these repositories (names as in repositories.yml). GET: comma-separated.
    #[serde(default)]
    #[schema(value_type = Option<Vec<String>>)]
    #[param(value_type = Option<String>)]
    repo: OneOrMany,
    /// Only these categories. GET: comma-separated.
    #[serde(default)]
    #[schema(value_type = Option<Vec<String>>)]
    #[param(value_type = Option<String>)]
    category: OneOrMany,
    /// Only doc_ids starting with one of these (`category/repo/folder/`). GET: comma-separated.
    #[serde(default)]
    #[schema(value_type = Option<Vec<String>>)]
    #[param(value_type = Option<String>)]
    path_prefix: OneOrMany,
    /// 0 to 1: when the best hit's evidence (cosine) is below this, the answer says insufficient_evidence.
    #[serde(default)]
    threshold: Option<f32>,
    /// hybrid (default), bm25 or vector.
    #[serde(default)]
    mode: Option<Mode>,
}

/// The five filter lists of a body, as the library takes them.
fn filters(
    toolkit: OneOrMany,
    doctype: OneOrMany,
    repo: OneOrMany,
    category: OneOrMany,
    path_prefix: OneOrMany,
) -> Filters {
    Filters {
        toolkit: toolkit.into_vec(),
        doctype: doctype.into_vec(),
        repo: repo.into_vec(),
        category: category.into_vec(),
        path_prefix: path_prefix.into_vec(),
    }
}

impl SearchBody {
    fn into_request(self, groups: Option<Vec<String>>) -> SearchRequest {
        SearchRequest {
            query: self.query,
            limit: self.limit.unwrap_or(10),
            filters: filters(
                self.toolkit,
                self.doctype,
                self.repo,
                self.category,
                self.path_prefix,
            ),
            threshold: self.threshold,
            mode: self.mode.unwrap_or_default(),
            groups,
        }
    }
}

async fn run_search(
    state: web::Data<AppState>,
    req: &HttpRequest,
    body: SearchBody,
) -> Result<HttpResponse, ApiError> {
    let engine = state.live.current();
    let request = body.into_request(caller(req).groups);
    let resp: SearchResponse = state.cpu(move || engine.search(&request)).await??;
    Ok(json(&resp))
}

/// Search the indexed repositories for passages that answer a question.
#[utoipa::path(
    get,
    path = "/search",
    operation_id = "searchCitations",
    tag = "search",
    params(SearchBody),
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
    let body: SearchBody = parse_query(req.query_string())?;
    run_search(state, &req, body).await
}

/// Search, with the arguments as a JSON body.
#[utoipa::path(
    post,
    path = "/search",
    operation_id = "searchCitationsPost",
    tag = "search",
    request_body = SearchBody,
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
    let body: SearchBody = body(&req, &bytes)?;
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

/// Several spans at once.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RetrieveBatchBody {
    /// 1 to 50 spans.
    items: Vec<SpanRequest>,
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
    request_body = RetrieveBatchBody,
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
    let b: RetrieveBatchBody = body(&req, &bytes)?;
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

/// Which part of the tree.
#[derive(Debug, Deserialize, ToSchema, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct TreeParams {
    /// A doc_id prefix (`category`, `category/repo`, `category/repo/folder`); empty lists the top.
    #[serde(default)]
    prefix: Option<String>,
    /// Levels below the prefix (default 2).
    #[serde(default)]
    depth: Option<usize>,
    /// Most entries returned, 1 to 5,000 (default 500).
    #[serde(default)]
    max_entries: Option<usize>,
}

/// List the documents under a prefix.
#[utoipa::path(
    get,
    path = "/tree",
    operation_id = "listDocuments",
    tag = "browse",
    params(TreeParams),
    responses(
        (status = 200, description = "Folders and files under the prefix", body = TreeResponse),
        (status = "4XX", description = "Bad input or auth", body = Problem, content_type = "application/problem+json")
    ),
    description = "Lists the doc_id hierarchy (categories, repositories, folders, files with doctype and line count) under a prefix. Use it to discover what is indexed."
)]
pub async fn tree(state: web::Data<AppState>, req: HttpRequest) -> Result<HttpResponse, ApiError> {
    let p: TreeParams = parse_query(req.query_string())?;
    let resp = state.live.current().tree(
        p.prefix.as_deref().unwrap_or(""),
        p.depth.unwrap_or(2),
        p.max_entries.unwrap_or(500),
        caller(&req).groups.as_deref(),
    )?;
    Ok(json(&resp))
}

/// A prompt-context request.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ContextBody {
    /// The question. When absent, the last user message of `messages` is the question.
    #[serde(default)]
    query: Option<String>,
    /// OpenAI-style chat messages; the answer returns them with the context added to the system message.
    #[serde(default)]
    messages: Option<Vec<MessageBody>>,
    /// Token budget of the context block, 100 to 8,000 (default 2,000).
    #[serde(default)]
    max_tokens: Option<usize>,
    /// The tokenizer that counts the budget: o200k_base (default; GPT-4o and later) or cl100k_base.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    tokenizer: Option<TokenizerName>,
    /// Search hits considered (default 10).
    #[serde(default)]
    limit: Option<usize>,
    /// Only these toolkits (lowercase repository names, e.g. `emcee`, `mulensmodel`). GET: comma-separated.
    #[serde(default)]
    #[schema(value_type = Option<Vec<String>>)]
    toolkit: OneOrMany,
    /// Only these doctypes: code, doc, readme, notebook, example, test, config. GET: comma-separated.
    #[serde(default)]
    #[schema(value_type = Option<Vec<String>>)]
    doctype: OneOrMany,
    /// Only these repositories (names as in repositories.yml). GET: comma-separated.
    #[serde(default)]
    #[schema(value_type = Option<Vec<String>>)]
    repo: OneOrMany,
    /// Only these categories. GET: comma-separated.
    #[serde(default)]
    #[schema(value_type = Option<Vec<String>>)]
    category: OneOrMany,
    /// Only doc_ids starting with one of these (`category/repo/folder/`). GET: comma-separated.
    #[serde(default)]
    #[schema(value_type = Option<Vec<String>>)]
    path_prefix: OneOrMany,
    /// Evidence (cosine, 0 to 1) a passage needs (default 0.3).
    #[serde(default)]
    threshold: Option<f32>,
    /// hybrid (default), bm25 or vector.
    #[serde(default)]
    mode: Option<Mode>,
}

/// One chat message.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MessageBody {
    /// system, developer, user, assistant or tool.
    role: String,
    /// The text.
    content: String,
}

/// Build a cited context block for a prompt.
#[utoipa::path(
    post,
    path = "/context",
    operation_id = "buildContext",
    tag = "search",
    request_body = ContextBody,
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
    let b: ContextBody = body(&req, &bytes)?;
    let request = ContextRequest {
        query: b.query,
        messages: b.messages.map(|m| {
            m.into_iter()
                .map(|m| ChatMessage {
                    role: m.role,
                    content: m.content,
                })
                .collect()
        }),
        max_tokens: b.max_tokens.unwrap_or(0),
        limit: b.limit.unwrap_or(0),
        filters: filters(b.toolkit, b.doctype, b.repo, b.category, b.path_prefix),
        threshold: b.threshold,
        mode: b.mode.unwrap_or_default(),
        tokenizer: b.tokenizer.unwrap_or_default(),
        groups: caller(&req).groups,
    };
    let engine = state.live.current();
    let resp: ContextResponse = state.cpu(move || engine.context(&request)).await??;
    Ok(json(&resp))
}

/// A runtime ranking weight.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct WeightBody {
    /// The document to boost or demote.
    doc_id: String,
    /// Multiplier, clamped to 0.1 to 10.
    multiplier: f32,
    /// `global`, or a toolkit (applies when a search filters on it). Default global.
    #[serde(default)]
    namespace: Option<String>,
    /// Days until it expires, up to 365 (default 30).
    #[serde(default)]
    ttl_days: Option<f64>,
}

/// What was stored.
#[derive(Debug, Serialize, ToSchema)]
pub struct WeightResponse {
    /// The document.
    doc_id: String,
    /// The namespace.
    namespace: String,
    /// The multiplier after clamping.
    multiplier: f32,
    /// Unix seconds when it stops applying.
    expires_at: i64,
    /// The version answering.
    index_version: String,
}

/// Set a runtime ranking weight (admin tokens only).
#[utoipa::path(
    post,
    path = "/weight",
    operation_id = "setWeight",
    tag = "admin",
    request_body = WeightBody,
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
            StatusCode::FORBIDDEN,
            "forbidden",
            "setting weights needs an admin token (`cairn token add NAME --admin`)",
        ));
    }
    let b: WeightBody = body(&req, &bytes)?;
    let namespace = b.namespace.unwrap_or_else(|| "global".to_owned());
    let engine = state.live.current();
    let w = engine.set_weight(
        &b.doc_id,
        b.multiplier,
        &namespace,
        b.ttl_days.unwrap_or(30.0),
    )?;
    tracing::info!(doc_id = %b.doc_id, namespace = %namespace, multiplier = w.multiplier, caller = %caller(&req).name, "runtime weight set");
    Ok(json(&WeightResponse {
        doc_id: b.doc_id,
        namespace,
        multiplier: w.multiplier,
        expires_at: w.expires_at,
        index_version: engine.snapshot().version.to_string(),
    }))
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
    description = "Liveness: 200 while the server runs, with document counts by repository and doctype."
)]
pub async fn health(state: web::Data<AppState>, req: HttpRequest) -> HttpResponse {
    json(&state.live.current().health(caller(&req).groups.as_deref()))
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
        .body(state.metrics.render(state.pool.depth()))
}

async fn openapi(state: web::Data<AppState>) -> HttpResponse {
    json(&super::openapi::document(state.opts.public_url.as_deref()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_strings_parse_like_bodies() {
        let b: SearchBody =
            parse_query("query=emcee+pool&limit=5&toolkit=emcee,dynesty&toolkit=corner.py")
                .expect("parse");
        assert_eq!(b.query, "emcee pool");
        assert_eq!(b.limit, Some(5));
        let r = b.into_request(None);
        assert_eq!(r.filters.toolkit, ["emcee", "dynesty", "corner.py"]);
        let e = parse_query::<SearchBody>("query=x&limit=many").expect_err("error");
        assert_eq!(e.field.as_deref(), Some("limit"));
        let e = parse_query::<SearchBody>("limit=3").expect_err("error");
        assert_eq!(e.field.as_deref(), Some("query"));
        let e = parse_query::<SearchBody>("query=x&colour=red").expect_err("error");
        assert_eq!(e.field.as_deref(), Some("colour"));
        let e = parse_query::<SearchBody>("query=x&mode=fast").expect_err("error");
        assert_eq!(e.field.as_deref(), Some("mode"));
        let e = parse_query::<SearchBody>("query=x&query=y").expect_err("error");
        assert_eq!(e.field.as_deref(), Some("query"));
    }

    #[test]
    fn json_errors_name_the_field() {
        let e = parse_json::<SpanRequest>(br#"{"doc_id": "a/b/c", "start": "one"}"#)
            .expect_err("error");
        assert_eq!(e.field.as_deref(), Some("start"));
        let e =
            parse_json::<RetrieveBatchBody>(br#"{"items": [{"doc_id": 3}]}"#).expect_err("error");
        assert_eq!(e.field.as_deref(), Some("items[0].doc_id"));
        let e = parse_json::<SpanRequest>(b"{not json").expect_err("error");
        assert_eq!(e.code, "malformed_request");
    }
}
