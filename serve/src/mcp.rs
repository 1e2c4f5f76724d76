//! The MCP server: the search library's calls as MCP tools, and passages as
//! resources, over stdio (`cairn mcp`) and streamable HTTP (`/mcp` on the
//! HTTP server, behind the same auth, ACL and Origin check).
//!
//! Built on rmcp, the official Rust SDK (maintained with the spec, stdio and
//! streamable HTTP), with rmcp-actix-web to mount it in the actix app.
//! Tools are the operations of [`crate::ops`], with the same names,
//! descriptions, arguments, defaults and limits as the HTTP API. Every
//! failure a caller can cause comes back as a tool error carrying the same
//! stable `code` as the HTTP problem types, never as a dropped session.

use crate::auth::Caller;
use crate::live::LiveIndex;
use crate::ops::{Anonymous, Call, Input};
use crate::pool::CpuPool;
use crate::problem::ApiError;
use crate::toolsets::{ToolChoice, toolkit_catalog};
use cairn_search::{Code, MAX_SPAN_LINES, SpanRequest, TextFormat};
#[allow(deprecated)] // `SetLevelRequestParams`: see `set_level`.
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, MetaObject,
    PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult,
    Resource, ResourceContents, ResourceTemplate, ServerCapabilities, ServerConfig,
    SetLevelRequestParams,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Resources per page of resources/list.
const RESOURCE_PAGE: usize = 200;
/// The scheme of passage URIs: `cairn://doc/{doc_id}?lines=10-40`.
const DOC_URI: &str = "cairn://doc/";

/// The MCP service: one per session, all sharing the live index and CPU pool.
#[derive(Clone)]
pub struct CairnMcp {
    live: Arc<LiveIndex>,
    pool: CpuPool,
    deadline: Duration,
    llm: Option<Arc<crate::llm::LlmClient>>,
    tools: ToolChoice,
    metrics: Option<Arc<crate::metrics::Metrics>>,
}

/// A tool error with the HTTP problem's code and field.
fn tool_error(e: &ApiError) -> CallToolResult {
    let value = json!({ "code": e.code, "field": e.field, "message": e.detail });
    let mut r = CallToolResult::structured_error(value);
    r.content = vec![ContentBlock::text(format!("error [{}]: {e}", e.code))];
    r
}

/// Who is calling: the caller an HTTP session authenticated as, whether it
/// presented no credentials, and who pays for its CPU work; a stdio session
/// is the local user, who pays nothing.
struct Asker {
    caller: Caller,
    anonymous: bool,
    payer: Option<crate::costs::Payer>,
}

fn caller(ctx: &RequestContext<RoleServer>) -> Asker {
    match ctx.extensions.get::<http::request::Parts>() {
        Some(parts) => {
            let ext = parts.extensions.get::<rmcp::model::Extensions>();
            let caller = ext
                .and_then(|e| e.get::<Caller>())
                .cloned()
                // Over HTTP the middleware always attaches one; never widen on its absence.
                .unwrap_or_else(Caller::anonymous);
            let anonymous = ext.is_none_or(|e| e.get::<Anonymous>().is_some());
            let payer = ext.and_then(|e| e.get::<crate::costs::Payer>()).cloned();
            Asker {
                caller,
                anonymous,
                payer,
            }
        }
        None => Asker {
            caller: Caller::local(),
            anonymous: false,
            payer: None,
        },
    }
}

impl CairnMcp {
    /// A service over `live`, running CPU work on `pool` within `deadline`.
    pub fn new(live: Arc<LiveIndex>, pool: CpuPool, opts: &McpOptions) -> Self {
        Self {
            live,
            pool,
            deadline: opts.deadline,
            llm: opts.llm.clone(),
            tools: opts.tools.clone(),
            metrics: opts.metrics.clone(),
        }
    }

    /// The tools this request's session lists: those its URL's query
    /// chooses (`/mcp?toolsets=…&tools=…`), else those the server was started with.
    fn choice(&self, ctx: &RequestContext<RoleServer>) -> Result<ToolChoice, McpError> {
        let query = ctx
            .extensions
            .get::<http::request::Parts>()
            .and_then(|p| p.uri.query());
        match query.map(ToolChoice::from_query).transpose() {
            Ok(Some(Some(chosen))) => Ok(chosen),
            Ok(_) => Ok(self.tools.clone()),
            Err(e) => Err(McpError::invalid_params(format!("toolsets: {e}"), None)),
        }
    }

    /// When a call starting now stops being wanted.
    fn deadline_at(&self) -> Instant {
        Instant::now() + self.deadline
    }

    /// A call of `who` to the live engine, on the CPU pool and under the deadline.
    fn call(&self, who: &Asker, instance: String) -> Call {
        Call::new(self.live.current(), who.caller.clone(), instance)
            .on(
                self.pool.clone(),
                cairn_search::Deadline::at(self.deadline_at()),
            )
            .paid_by(who.payer.clone(), who.anonymous)
            .versions(Arc::clone(&self.live) as Arc<dyn crate::ops::Versions>)
            .with_text()
            .with_model(self.llm.clone())
    }

    /// Runs one tool; Err only for failures the caller caused or can retry.
    async fn run_tool(
        &self,
        name: &str,
        args: Value,
        who: &Asker,
    ) -> Result<CallToolResult, ApiError> {
        let op = crate::ops::by_tool(name)
            .ok_or_else(|| ApiError::new(Code::NotFound, format!("no tool named {name:?}")))?;
        let call = self.call(who, format!("mcp:{name}"));
        let answer = op.run(Input::Value(args), call).await?;
        // The focus lines of each hit, for the MCP Apps view (`_meta`: no
        // model reads it), read at the version that found them.
        let focus = match name {
            "search_passages" => {
                let call = self.call(who, format!("mcp:{name}"));
                // The answer stands without them: a refused read leaves `_meta` out.
                let read = crate::mcp_app::read_focus(&answer.cites, call).await;
                read.ok()
                    .map(|read| MetaObject(crate::mcp_app::focus_meta(&read)))
            }
            _ => None,
        };
        let mut r = CallToolResult::structured(answer.value);
        r.meta = focus;
        r.content = vec![ContentBlock::text(answer.text)];
        // Each cited passage as a resource the client can open (resources/read).
        r.content.extend(answer.cites.into_iter().map(|c| {
            // The version pins the lines: read after a swap, they are still the cited ones.
            let uri = format!(
                "{}?lines={}-{}&version={}",
                doc_uri(&c.doc_id),
                c.start,
                c.end,
                c.version
            );
            ContentBlock::resource_link(
                Resource::new(uri, c.doc_id)
                    .with_title(c.title)
                    .with_mime_type("text/plain"),
            )
        }));
        Ok(r)
    }
}

/// The passage URI of a whole document, the inverse of [`parse_doc_uri`]:
/// `?`, `#` and `%` in a doc_id are encoded, so a path holding `?lines=1-1`
/// can never be read as a query.
fn doc_uri(doc_id: &str) -> String {
    format!("{DOC_URI}{}", cairn_search::links::encode_path(doc_id))
}

/// Parses `cairn://doc/{doc_id}?lines=START-END&raw=true&version=V` (each optional).
fn parse_doc_uri(uri: &str) -> Option<SpanRequest> {
    let rest = uri.strip_prefix(DOC_URI)?;
    let (id, query) = rest.split_once('?').unwrap_or((rest, ""));
    // Percent-decoded here; the library then refuses any traversal the decoding revealed.
    let id = percent_encoding::percent_decode_str(id)
        .decode_utf8()
        .ok()?
        .into_owned();
    let mut span = SpanRequest::lines(id, 1, i64::from(MAX_SPAN_LINES));
    for (k, v) in url::form_urlencoded::parse(query.as_bytes()) {
        match &*k {
            "lines" => {
                let (a, b) = cairn_search::parse_line_range(&v)?;
                span.start = Some(a.into());
                span.end = Some(b.into());
            }
            "raw" => span.raw = matches!(&*v, "1" | "true"),
            "version" => span.index_version = Some(cairn_index::IndexVersion::parse(&v).ok()?),
            _ => return None,
        }
    }
    Some(span)
}

impl ServerHandler for CairnMcp {
    #[allow(deprecated)] // `logging`: see `set_level`.
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_extensions_with(
                    [(
                        crate::mcp_app::EXTENSION_ID.to_owned(),
                        crate::mcp_app::capability(),
                    )]
                    .into(),
                )
                .enable_logging()
                .enable_resources()
                .enable_tools()
                .build(),
        )
        .with_server_info(Implementation::new("cairn", env!("CARGO_PKG_VERSION")))
        .with_instructions(
            "Citation search over scientific software repositories. Call `search_passages` with the user's \
             question (add toolkit to stay in one package): it answers with snippets, exact lines and \
             permalinks; read around a hit with `retrieve`. (`search` and `fetch` give the same passages as \
             ids to fetch one by one.) Cite each passage by its permalink (exact lines of a pinned commit). \
             When insufficient_evidence is true, say you do not know.",
        )
    }

    /// Accepted, as a server declaring `logging` must; cairn sends no log
    /// messages of its own (its log is the operator's, see `CAIRN_LOG`).
    /// (SEP-2577 deprecates MCP logging; clients and the conformance suite
    /// of the protocol versions cairn speaks still call it.)
    #[allow(deprecated)]
    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        tracing::debug!(level = ?request.level, "mcp logging/setLevel");
        Ok(())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let who = caller(&context).caller;
        let catalog = toolkit_catalog(&self.live.current().version(who.groups()));
        let listed = self
            .choice(&context)?
            .listed(who.admin, self.llm.is_some(), &catalog);
        Ok(ListToolsResult::with_all_items(listed))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let who = caller(&context);
        // A tool the session does not list is not answered either.
        let chosen = self.choice(&context)?.chooses(&request.name);
        if !chosen && crate::ops::by_tool(&request.name).is_some() {
            if let Some(m) = &self.metrics {
                m.tool_call(&request.name, "error", std::time::Duration::ZERO);
            }
            return Ok(tool_error(&ApiError::new(
                Code::NotFound,
                format!(
                    "{:?} is not offered here: ask for its set (--toolsets, or /mcp?toolsets=…)",
                    request.name
                ),
            ))
            .into());
        }
        let args = Value::Object(request.arguments.unwrap_or_default());
        let started = Instant::now();
        let outcome = tokio::select! {
            r = self.run_tool(&request.name, args, &who) => r,
            // The client gave up: stop waiting (a job already running is told, and stops).
            () = context.ct.cancelled() => {
                tracing::info!(tool = %request.name, "tool call cancelled by the client");
                if let Some(m) = &self.metrics {
                    m.tool_call(&request.name, "cancelled", started.elapsed());
                }
                return Err(McpError::internal_error("cancelled", None));
            }
        };
        if let Some(m) = &self.metrics {
            let outcome = match &outcome {
                Ok(r) if r.is_error != Some(true) => "ok",
                _ => "error",
            };
            m.tool_call(&request.name, outcome, started.elapsed());
        }
        tracing::info!(
            target: "cairn::access",
            tool = %request.name,
            caller = %who.caller.name,
            ok = outcome.is_ok(),
            micros = started.elapsed().as_micros() as u64,
            "mcp tool call"
        );
        Ok(outcome.unwrap_or_else(|e| tool_error(&e)).into())
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let who = caller(&context).caller;
        let engine = self.live.current();
        let start: usize = request
            .and_then(|r| r.cursor)
            .map(|c| {
                c.parse()
                    .map_err(|_| McpError::invalid_params("bad cursor", None))
            })
            .transpose()?
            .unwrap_or(0);
        let (docs, next) = engine.documents(who.groups(), start, RESOURCE_PAGE);
        let page: Vec<Resource> = docs
            .into_iter()
            .map(|d| {
                Resource::new(doc_uri(d.doc_id.as_str()), d.doc_id.as_str())
                    .with_description(format!("{} {} ({} lines)", d.repo, d.doctype, d.line_count))
                    .with_mime_type("text/plain")
                    .with_size(d.size)
            })
            .collect();
        let mut result = ListResourcesResult::with_all_items(page);
        result.next_cursor = next.map(|n| n.to_string());
        Ok(result)
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        Ok(ListResourceTemplatesResult::with_all_items(vec![
            ResourceTemplate::new(format!("{DOC_URI}{{doc_id}}{{?lines,raw,version}}"), "passage")
                .with_description(
                    "Lines of an indexed file: doc_id as search returns it, percent-encoded but for `/` (a `?`, `#` or `%` in a path must be encoded), lines=START-END (at most 400). A notebook comes as its cells (markdown) unless raw=true. version=V reads a kept earlier index version (as cited).",
                )
                .with_mime_type("text/plain"),
        ]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        if request.uri == crate::mcp_app::VIEW_URI {
            let view = ResourceContents::text(crate::mcp_app::view_html(), request.uri)
                .with_mime_type(crate::mcp_app::MIME_TYPE);
            let view = view.with_meta(MetaObject(crate::mcp_app::resource_meta()));
            return Ok(ReadResourceResult::new(vec![view]).into());
        }
        let who = caller(&context);
        let span = parse_doc_uri(&request.uri).ok_or_else(|| {
            McpError::invalid_params(
                format!(
                    "expected {DOC_URI}<doc_id>?lines=START-END[&raw=true], got {:?}",
                    request.uri
                ),
                Some(json!({ "code": Code::InvalidArgument, "field": "uri" })),
            )
        })?;
        // As the `retrieve` tool: on the CPU pool and under the deadline, since
        // reading a kept earlier version may open and verify it first.
        let call = self.call(&who, "mcp:resources/read".to_owned());
        let r = crate::ops::run::<crate::ops::retrieve::Retrieve>(span, call)
            .await
            .map_err(|e| {
                let data = Some(json!({ "code": e.code, "field": e.field }));
                if e.code == Code::NotFound {
                    McpError::resource_not_found(e.detail, data)
                } else {
                    McpError::invalid_params(e.detail, data)
                }
            })?;
        let mime = match r.text_format {
            TextFormat::Raw => "text/plain",
            TextFormat::NotebookCells => "text/markdown",
        };
        let contents = ResourceContents::text(r.text, request.uri).with_mime_type(mime);
        Ok(ReadResourceResult::new(vec![contents]).into())
    }
}

/// How an MCP session runs its calls.
#[derive(Clone, Debug)]
pub struct McpOptions {
    /// How long one tool call may take.
    pub deadline: Duration,
    /// Browser origins allowed to open a session over HTTP (stdio has none).
    pub allowed_origins: Vec<String>,
    /// The configured model (`ask`), when there is one.
    pub llm: Option<Arc<crate::llm::LlmClient>>,
    /// The tools listed (`--toolsets`, `--tools`; the default seven unless given).
    pub tools: ToolChoice,
    /// Where each tool call is counted (the HTTP server's `/metrics`; none over stdio).
    pub metrics: Option<Arc<crate::metrics::Metrics>>,
}

impl Default for McpOptions {
    fn default() -> Self {
        Self {
            deadline: Duration::from_millis(crate::limits::DEFAULT_DEADLINE_MS),
            allowed_origins: Vec::new(),
            llm: None,
            tools: ToolChoice::default(),
            metrics: None,
        }
    }
}

/// The streamable-HTTP transport type mounted at `/mcp`.
pub type HttpTransport = rmcp_actix_web::transport::StreamableHttpService<CairnMcp>;

/// The transport for the HTTP server, stateless: every POST is answered on
/// its own by a fresh service, as the caller the auth middleware found.
///
/// cairn's tools never push and never call back, so a session would hold
/// nothing but memory: stateless, a flood of `initialize` requests leaves
/// nothing behind, and there is no session id to steal or replay. GET and
/// DELETE answer 405, which clients read as "no server stream".
pub fn http_transport(live: Arc<LiveIndex>, pool: CpuPool, opts: McpOptions) -> HttpTransport {
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    let service_opts = opts.clone();
    HttpTransport::builder()
        .service_factory(Arc::new(move || {
            Ok(CairnMcp::new(
                Arc::clone(&live),
                pool.clone(),
                &service_opts,
            ))
        }))
        .session_manager(Arc::new(LocalSessionManager::default()))
        .stateful_mode(false)
        .json_response(true)
        // The HTTP middleware has already applied the one Host rule of every
        // route; an empty list turns rmcp's own off.
        .allowed_hosts(Vec::new())
        .allowed_origins(opts.allowed_origins)
        // Counted as the body streams in, whatever Content-Length says.
        .max_request_body_bytes(crate::limits::MAX_BODY_BYTES)
        .on_request_fn(
            |req: &actix_web::HttpRequest, ext: &mut rmcp::model::Extensions| {
                use actix_web::HttpMessage;
                if let Some(c) = req.extensions().get::<Caller>() {
                    ext.insert(c.clone());
                }
                if req.extensions().contains::<Anonymous>() {
                    ext.insert(Anonymous);
                }
                if let Some(p) = req.extensions().get::<crate::costs::Payer>() {
                    ext.insert(p.clone());
                }
            },
        )
        .build()
}

/// Serves MCP over stdin/stdout until the client closes it, running CPU
/// work on `pool`. Only protocol goes to stdout; logs go to stderr.
pub async fn serve_stdio(
    live: Arc<LiveIndex>,
    pool: CpuPool,
    opts: McpOptions,
) -> Result<(), String> {
    use rmcp::ServiceExt;
    let service = CairnMcp::new(live, pool, &opts);
    let running = service
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| e.to_string())?;
    running.waiting().await.map_err(|e| e.to_string())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doc_uris_parse() {
        let parts = |uri: &str| parse_doc_uri(uri).map(|s| (s.doc_id, s.start, s.end, s.raw));
        assert_eq!(
            parts("cairn://doc/general_tools/emcee/README.md?lines=3-9"),
            Some((
                "general_tools/emcee/README.md".to_owned(),
                Some(3),
                Some(9),
                false
            ))
        );
        assert_eq!(
            parts("cairn://doc/a/b/my%20file.py"),
            Some(("a/b/my file.py".to_owned(), Some(1), Some(400), false))
        );
        assert_eq!(
            parts("cairn://doc/a/b/t.ipynb?lines=4-4&raw=true"),
            Some(("a/b/t.ipynb".to_owned(), Some(4), Some(4), true))
        );
        assert_eq!(parts("cairn://doc/a/b/c?lines=x-2"), None);
        assert_eq!(parts("cairn://doc/a/b/c?line=2"), None);
        assert_eq!(parts("file:///etc/passwd"), None);
        // A listed URI reads back exactly its document, whatever the path holds.
        for id in [
            "cat/r/notes?lines=1-1",
            "cat/r/a #1 100%.txt",
            "cat/r@v2/ü.md",
        ] {
            assert_eq!(
                parts(&doc_uri(id)),
                Some((id.to_owned(), Some(1), Some(400), false)),
                "{id}"
            );
        }
    }

    #[test]
    fn set_weight_is_listed_for_admins_only() {
        let names = |admin| -> Vec<String> {
            ToolChoice::parse(&["all"])
                .expect("all")
                .listed(admin, false, "")
                .into_iter()
                .map(|t| t.name.to_string())
                .collect()
        };
        assert!(!names(false).contains(&"set_weight".to_owned()));
        assert!(names(true).contains(&"set_weight".to_owned()));
        // Every operation with a tool name, derived from the table, both ways
        // (ask only with a model).
        let offered: Vec<String> = crate::ops::OPERATIONS
            .iter()
            .filter(|op| op.meta.who != crate::ops::Who::Admin && !op.meta.model)
            .filter_map(|op| op.meta.tool.map(str::to_owned))
            .collect();
        assert_eq!(names(false), offered);
    }
}
