//! The web page for people: search (`/`), a passage with its cited lines
//! highlighted (`/doc/{doc_id}?lines=a-b`), the doc tree (`/browse/…`), an
//! error explained (`/errors`), a written answer (`/answer`, streamed by its
//! script) and the API reference (`/api`). Rendered on the server from the same
//! operations the HTTP API runs ([`crate::ops`]), so a person and a bot get
//! the same answer; every asset is compiled in (no CDN: it works air-gapped),
//! and every page works without JavaScript.
//!
//! Depends on [`crate::ops`], [`crate::http`]'s state, [`crate::session`]
//! and [`crate::problem`]; only [`crate::server`] depends on it, handing
//! [`PAGES`] to [`crate::http`] as data.

mod highlight;
mod html;
mod pages;
mod response;
mod sign_in;

use response::{html_response, ok_page};
use sign_in::{login, login_form, logout, session_cookie};

use crate::http::AppState;
use crate::ops::ask::{Ask, AskArgs};
use crate::ops::definitions::{Definitions, DefinitionsArgs};
use crate::ops::explain::Explain;
use crate::ops::grep::Grep;
use crate::ops::references::{References, ReferencesArgs};
use crate::ops::retrieve::Retrieve;
use crate::ops::search::Search;
use crate::ops::tree::{Tree, TreeArgs};
use crate::ops::version::Version;
use crate::ops::{self, NoArgs, Op};
use crate::problem::ApiError;
use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpRequest, HttpResponse, web};
use cairn_search::SpanRequest;

/// The stylesheet (light and dark, following the system).
const STYLE_CSS: &str = include_str!("assets/style.css");
/// Search-as-you-type, keyboard navigation, the copy buttons, the streamed answer.
const APP_JS: &str = include_str!("assets/app.js");
/// Lines shown around a cited span unless asked for more.
const CONTEXT_LINES: u32 = 10;
/// Most context lines on either side (the retrieve cap is 400 lines in all).
const MAX_CONTEXT: u32 = 150;
/// The pages, as [`crate::http`] takes them.
pub const PAGES: crate::http::Pages = crate::http::Pages {
    routes,
    is_page,
    is_asset,
    session_cookie,
    wants_html,
    problem_page,
};

/// Whether `path` is one of the page routes (answered to anonymous visitors).
fn is_page(path: &str) -> bool {
    path == "/"
        || path == "/api"
        || path == "/login"
        || path == "/logout"
        || path == "/errors"
        || path == "/answer"
        || path == "/browse"
        || path.starts_with("/browse/")
        || path.starts_with("/doc/")
        || path.starts_with("/def/")
        || path.starts_with("/ui/")
}

/// Whether `path` is a static asset (not counted against a visitor's budget).
fn is_asset(path: &str) -> bool {
    path.starts_with("/ui/")
}

/// Registers the pages.
fn routes(cfg: &mut web::ServiceConfig) {
    cfg.service(web::resource("/").route(web::get().to(search)))
        .service(web::resource("/doc/{doc_id:.+}").route(web::get().to(doc)))
        .service(web::resource("/def/{name}").route(web::get().to(def)))
        .service(web::resource("/browse").route(web::get().to(browse)))
        .service(web::resource("/browse/{prefix:.*}").route(web::get().to(browse)))
        .service(
            web::resource("/errors")
                .route(web::get().to(explain_form))
                .route(web::post().to(explain)),
        )
        .service(web::resource("/api").route(web::get().to(api)))
        .service(web::resource("/answer").route(web::get().to(answer)))
        .service(
            web::resource("/login")
                .route(web::get().to(login_form))
                .route(web::post().to(login)),
        )
        .service(web::resource("/logout").route(web::post().to(logout)))
        .service(web::resource("/ui/style.css").route(web::get().to(style)))
        .service(web::resource("/ui/app.js").route(web::get().to(script)));
}

/// Runs operation `O` for the request's caller.
async fn run<O: Op>(
    state: &AppState,
    req: &HttpRequest,
    args: O::Args,
) -> Result<O::Output, ApiError> {
    ops::run::<O>(args, crate::http::api::call(state, req)).await
}

/// The query string's fields (the last value of each).
fn query(req: &HttpRequest) -> std::collections::HashMap<String, String> {
    url::form_urlencoded::parse(req.query_string().as_bytes())
        .into_owned()
        .collect()
}

async fn search(state: web::Data<AppState>, req: HttpRequest) -> Result<HttpResponse, ApiError> {
    let q = query(&req);
    let field = |k: &str| q.get(k).map(|v| v.trim().to_owned()).unwrap_or_default();
    // The filters as the API reads them: repeated or comma-separated, blanks ("all") left out.
    let mut filters = cairn_search::Filters::default();
    for (k, v) in url::form_urlencoded::parse(req.query_string().as_bytes()) {
        if let Some(list) = filters.list_mut(&k) {
            list.extend(cairn_search::Filters::split(&v).map(str::to_owned));
        }
    }
    let form = pages::SearchForm {
        q: field("q"),
        filters,
        scores: !field("scores").is_empty(),
        exact: !field("exact").is_empty(),
    };
    let answer = match (form.q.is_empty(), form.exact) {
        (true, _) => None,
        (false, false) => Some(
            run::<Search>(&state, &req, form.args())
                .await
                .map(pages::Found::Passages),
        ),
        (false, true) => Some(
            run::<Grep>(&state, &req, form.grep_args())
                .await
                .map(pages::Found::Lines),
        ),
    };
    // A bad query (too long, an unknown filter value) is said on the page, by its field.
    let (answer, error) = match answer {
        Some(Ok(a)) => (Some(a), None),
        Some(Err(e)) if e.status.is_client_error() => (None, Some(e)),
        Some(Err(e)) => return Err(e),
        None => (None, None),
    };
    let error_html = error.as_ref().map(field_error);
    if q.contains_key("partial") {
        let body = match (&answer, &error_html) {
            (_, Some(e)) => e.clone(),
            (Some(a), None) => pages::results(&form, a),
            (None, None) => String::new(),
        };
        return Ok(html_response(actix_web::http::StatusCode::OK, body));
    }
    let version = run::<Version>(&state, &req, NoArgs {}).await?;
    let main = pages::search(
        &form,
        &version,
        answer.as_ref(),
        error_html.as_deref(),
        state.has_model(),
    );
    let title = if form.q.is_empty() {
        "Search".to_owned()
    } else {
        form.q.clone()
    };
    Ok(ok_page(&title, &main, &version.index_version))
}

/// The ask page: a question in `q` is answered by the configured model as
/// the visitor (who must be signed in: the model's tokens are spent).
async fn answer(state: web::Data<AppState>, req: HttpRequest) -> Result<HttpResponse, ApiError> {
    if !state.has_model() {
        return Err(ApiError::new(
            cairn_search::Code::NotFound,
            "no model is configured on this server",
        ));
    }
    let question = query(&req)
        .get("q")
        .map(|q| q.trim().to_owned())
        .unwrap_or_default();
    let args = AskArgs {
        question: question.clone(),
        max_steps: None,
    };
    let answer = match (question.is_empty(), crate::http::events::wanted(&req)) {
        (true, _) => None,
        (false, true) => return streamed(&state, &req, args).await,
        (false, false) => Some(run::<Ask>(&state, &req, args).await),
    };
    let (answer, error) = match answer {
        Some(Ok(a)) => (Some(a), None),
        Some(Err(e)) if e.status.is_client_error() => (None, Some(field_error(&e))),
        Some(Err(e)) => return Err(e),
        None => (None, None),
    };
    let version = run::<Version>(&state, &req, NoArgs {}).await?;
    let main = pages::ask(&question, answer.as_ref(), error.as_deref());
    Ok(ok_page("Ask", &main, &version.index_version))
}

/// The ask page's answer as server-sent events (its script asks so): each
/// step as a list item, the model's draft as text, then the checked
/// answer's HTML, or the error's.
async fn streamed(
    state: &AppState,
    req: &HttpRequest,
    args: AskArgs,
) -> Result<HttpResponse, ApiError> {
    use crate::http::events::{Render, event, stream};
    use crate::ops::ask::{AskEvent, AskResponse, Progress};
    let (progress, told) = Progress::new(true);
    let call = crate::http::api::call(state, req).with_progress(progress);
    let render = Render {
        event: Box::new(|told: &AskEvent| match told {
            AskEvent::Step(s) => event("step", &pages::step(s)),
            AskEvent::Draft(t) => event("draft", t),
        }),
        answer: Box::new(|a: AskResponse| event("answer", &pages::answered(&a))),
        error: Box::new(|e: &ApiError| event("error", &field_error(e))),
    };
    stream(ops::run::<Ask>(args, call), told, render).await
}

async fn explain_form(
    state: web::Data<AppState>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    explain_page(&state, &req, pages::ExplainForm::default()).await
}

/// The explain form posted: the text comes in the body (a traceback is too long for a URL).
async fn explain(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: web::Bytes,
) -> Result<HttpResponse, ApiError> {
    let mut form = pages::ExplainForm::default();
    for (k, v) in url::form_urlencoded::parse(&body) {
        match k.as_ref() {
            "text" => form.text = v.into_owned(),
            "toolkit" => form.toolkit = v.trim().to_owned(),
            "version" => form.version = v.trim().to_owned(),
            _ => {}
        }
    }
    explain_page(&state, &req, form).await
}

async fn explain_page(
    state: &AppState,
    req: &HttpRequest,
    form: pages::ExplainForm,
) -> Result<HttpResponse, ApiError> {
    let answer = match form.text.trim().is_empty() {
        true => None,
        false => Some(run::<Explain>(state, req, form.args()).await),
    };
    let (answer, error) = match answer {
        Some(Ok(a)) => (Some(a), None),
        Some(Err(e)) if e.status.is_client_error() => (None, Some(field_error(&e))),
        Some(Err(e)) => return Err(e),
        None => (None, None),
    };
    let version = run::<Version>(state, req, NoArgs {}).await?;
    let main = pages::explain(&form, &version, answer.as_ref(), error.as_deref());
    Ok(ok_page("Explain an error", &main, &version.index_version))
}

/// A refused argument, said on the page by its field.
fn field_error(e: &ApiError) -> String {
    format!(
        "<p class=\"error\" role=\"alert\">{}{}</p>",
        e.field
            .as_deref()
            .map(|f| format!("<code>{}</code>: ", html::esc(f)))
            .unwrap_or_default(),
        html::esc(&e.detail)
    )
}

/// `a-b` (or `a`) from a line-span field (`lines`, `focus`).
fn parse_lines(field: &str, s: &str) -> Result<(u32, u32), ApiError> {
    let bad = || {
        ApiError::malformed(
            Some(field.to_owned()),
            format!("{field} must be START-END (e.g. 120-140), not {s:?}"),
        )
    };
    cairn_search::parse_line_range(s).ok_or_else(bad)
}

/// A non-negative number of context lines from `field` (capped).
fn parse_context(
    q: &std::collections::HashMap<String, String>,
    field: &str,
) -> Result<u32, ApiError> {
    match q.get(field) {
        None => Ok(CONTEXT_LINES),
        Some(v) => v
            .trim()
            .parse::<u32>()
            .map(|n| n.min(MAX_CONTEXT))
            .map_err(|_| {
                ApiError::malformed(
                    Some(field.to_owned()),
                    format!("{field} must be a number of lines, not {v:?}"),
                )
            }),
    }
}

/// A path parameter as the doc_id, prefix or name its link encoded
/// (`ui::html::path`): actix decodes every escape but `%2B`, `%25` and `%2F`,
/// which are decoded here, once, so `c++/a+b.py` reaches its page.
fn path_param(req: &HttpRequest, name: &str) -> String {
    let raw = req.match_info().get(name).unwrap_or("");
    percent_encoding::percent_decode_str(raw)
        .decode_utf8()
        .map_or_else(|_| raw.to_owned(), |s| s.into_owned())
}

async fn doc(state: web::Data<AppState>, req: HttpRequest) -> Result<HttpResponse, ApiError> {
    let doc_id = path_param(&req, "doc_id");
    let q = query(&req);
    let (a, b) = parse_lines("lines", q.get("lines").map_or("1-40", String::as_str))?;
    let (before, after) = (parse_context(&q, "before")?, parse_context(&q, "after")?);
    // A search hit's focus, highlighted within the cited lines.
    let focus = q
        .get("focus")
        .map(|f| parse_lines("focus", f))
        .transpose()?;
    let call = crate::http::api::call(&state, &req);
    let cited = ops::run::<Retrieve>(
        SpanRequest::lines(doc_id.clone(), a.into(), b.into()),
        call.clone(),
    )
    .await?;
    // The span as it was clamped to the file is what the page cites.
    let (a, b) = (cited.start_line, cited.end_line);
    // The window is one read, so it holds at most MAX_SPAN_LINES: the cited
    // lines always, and the context only as far as the room left allows
    // (before first), so every cited line is shown.
    let room = cairn_search::MAX_SPAN_LINES.saturating_sub(b.saturating_sub(a) + 1);
    let before = before.min(room);
    let after = after.min(room - before);
    let window = SpanRequest::lines(
        doc_id.clone(),
        a.saturating_sub(before).max(1).into(),
        b.saturating_add(after).into(),
    );
    let window = ops::run::<Retrieve>(window, call.clone()).await?;
    let version = cited.index_version.clone();
    // The cited lines' history, where the version records it (a page
    // without it is still the page).
    let history = ops::run::<crate::ops::history::History>(
        SpanRequest::lines(doc_id.clone(), a.into(), b.into()),
        call.clone(),
    )
    .await
    .ok();
    // Colouring is CPU work like any search: on the pool, under the deadline,
    // paid for by the caller (a hostile file's lines cost seconds before).
    let main = ops::on_pool(call, move |call| {
        let defined = call.engine.defined_names(call.caller.groups.as_deref());
        pages::passage(
            &cited,
            &window,
            before,
            after,
            focus,
            &defined,
            history.as_ref(),
        )
    })
    .await?;
    Ok(ok_page(&format!("{doc_id}:{a}-{b}"), &main, &version))
}

/// The definitions of a name (where a clicked identifier leads).
async fn def(state: web::Data<AppState>, req: HttpRequest) -> Result<HttpResponse, ApiError> {
    let name = path_param(&req, "name");
    let args = DefinitionsArgs {
        name: name.clone(),
        filters: cairn_search::Filters::default(),
        limit: Some(50),
    };
    let found = run::<Definitions>(&state, &req, args).await?;
    let uses = ReferencesArgs {
        name: name.clone(),
        filters: cairn_search::Filters::default(),
        path: None,
        context: None,
        limit: Some(100),
        cursor: None,
    };
    let uses = run::<References>(&state, &req, uses).await?;
    let main = pages::definitions(&found, &uses);
    Ok(ok_page(
        &format!("Definitions of {name}"),
        &main,
        &found.index_version,
    ))
}

async fn browse(state: web::Data<AppState>, req: HttpRequest) -> Result<HttpResponse, ApiError> {
    let prefix = path_param(&req, "prefix").trim_matches('/').to_owned();
    let args = TreeArgs {
        prefix: Some(prefix.clone()),
        depth: Some(1),
        max_entries: None,
    };
    let tree = run::<Tree>(&state, &req, args).await?;
    let main = pages::browse(&prefix, &tree);
    let title = if prefix.is_empty() {
        "Browse".to_owned()
    } else {
        prefix.clone()
    };
    Ok(ok_page(&title, &main, &tree.index_version))
}

async fn api(state: web::Data<AppState>, req: HttpRequest) -> HttpResponse {
    let base = state
        .opts
        .public_url
        .clone()
        .unwrap_or_else(|| format!("http://{}", req.connection_info().host()));
    let doc = crate::http::openapi::document(state.opts.public_url.as_deref());
    let version = state.live.current().snapshot().version.to_string();
    ok_page(
        "API",
        &pages::api(&doc, base.trim_end_matches('/')),
        &version,
    )
}

fn asset(content_type: &'static str, body: &'static str) -> HttpResponse {
    HttpResponse::Ok()
        .insert_header((header::CONTENT_TYPE, content_type))
        .insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
        .insert_header((
            header::CACHE_CONTROL,
            HeaderValue::from_static("public, max-age=3600"),
        ))
        .body(body)
}

async fn style() -> HttpResponse {
    asset("text/css; charset=utf-8", STYLE_CSS)
}

async fn script() -> HttpResponse {
    asset("text/javascript; charset=utf-8", APP_JS)
}

/// Whether a request is a browser's (it asks for HTML): its errors get a page.
fn wants_html(req: &HttpRequest) -> bool {
    !req.path().starts_with("/mcp")
        && req
            .headers()
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|a| a.contains("text/html"))
}

/// An error as an HTML page, with the same status, trace id and headers a problem carries.
fn problem_page(api: &ApiError, trace_id: &str) -> HttpResponse {
    let title = api.status.canonical_reason().unwrap_or("Error");
    let detail = match &api.field {
        Some(f) => format!("{f}: {}", api.detail),
        None => api.detail.clone(),
    };
    let main = pages::problem(api.status.as_u16(), title, &detail, trace_id);
    let mut res = html_response(api.status, html::page(title, &main, ""));
    if let Ok(v) = HeaderValue::from_str(trace_id) {
        res.headers_mut()
            .insert(header::HeaderName::from_static("x-trace-id"), v);
    }
    if let Some(s) = api.retry_after
        && let Ok(v) = HeaderValue::from_str(&s.to_string())
    {
        res.headers_mut().insert(header::RETRY_AFTER, v);
    }
    res
}
