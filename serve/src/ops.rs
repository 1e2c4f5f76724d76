//! The operations, each defined once: its name, description, argument and
//! result types, who may call it and whether it runs on the CPU pool.
//! HTTP routes ([`crate::http::api`]), MCP tools ([`crate::mcp`]) and the
//! OpenAPI document ([`crate::http::openapi`]) are all generated from
//! [`OPERATIONS`], and every call runs through [`Operation::run`], so the two
//! connectors cannot answer the same question differently.

use crate::args::{
    BatchArgs, BatchItem, BatchResponse, ContextArgs, ExplainArgs, NoArgs, ReadyResponse,
    SearchArgs, TreeArgs, WeightArgs, WeightResponse,
};
use crate::pool::CpuPool;
use crate::problem::{ApiError, parse_json};
use cairn_search::{
    Caller, ContextResponse, Engine, ExplainResponse, HealthResponse, RetrieveResponse,
    SearchError, SearchResponse, SpanRequest, TreeResponse, VersionResponse,
};
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::sync::Arc;
use std::time::Instant;
use utoipa::openapi::path::{Parameter, ParameterIn};
use utoipa::openapi::{RefOr, Schema};
use utoipa::{IntoParams, ToSchema};

/// Which operation (what [`Operation::run`] dispatches on).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Ranked passages for a question.
    Search,
    /// Exact lines of a document.
    Retrieve,
    /// Several spans at once.
    RetrieveBatch,
    /// The doc_id hierarchy.
    Tree,
    /// Cited passages within a token budget.
    Context,
    /// Where an error is raised and what explains it.
    Explain,
    /// The index version served.
    Version,
    /// Liveness and counts.
    Health,
    /// Readiness.
    Ready,
    /// A runtime ranking multiplier.
    SetWeight,
}

/// Who may call an operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Who {
    /// Anyone, without credentials (probes).
    Public,
    /// Any authenticated caller; what it sees is limited by its groups.
    Caller,
    /// Admins only; the library refuses anyone else.
    Admin,
}

/// An HTTP method an operation answers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// Arguments in the query string.
    Get,
    /// Arguments as a JSON body.
    Post,
}

/// One HTTP binding of an operation.
#[derive(Clone, Copy, Debug)]
pub struct Route {
    /// The method.
    pub method: Method,
    /// The path.
    pub path: &'static str,
    /// The OpenAPI operationId (unique; GPT Actions names the action by it).
    pub operation_id: &'static str,
    /// One line for the OpenAPI summary.
    pub summary: &'static str,
}

/// The schemas of a type, for the OpenAPI components: its own, then those it refers to.
type Schemas = fn(&mut Vec<(String, RefOr<Schema>)>) -> String;

/// One operation.
pub struct Operation {
    /// What runs.
    pub kind: Kind,
    /// The MCP tool name; `None` for HTTP-only probes.
    pub tool: Option<&'static str>,
    /// Its HTTP routes.
    pub routes: &'static [Route],
    /// The OpenAPI tag.
    pub tag: &'static str,
    /// What it does, for a model choosing a tool or an action (≤ 300 characters).
    pub description: &'static str,
    /// What a success holds (the OpenAPI 200 response).
    pub answers: &'static str,
    /// Who may call it.
    pub who: Who,
    /// Whether it runs on the CPU pool (embedding, ranking), within the deadline.
    pub on_cpu: bool,
    /// Whether it changes nothing (MCP's readOnlyHint; GPT Actions' isConsequential is its negation).
    pub read_only: bool,
    /// Its arguments' schemas.
    pub args: Args,
    /// Its result's schemas.
    pub output: Schemas,
}

/// The schemas of an operation's arguments, all from one type.
#[derive(Clone, Copy)]
pub struct Args {
    /// The MCP input schema.
    pub input: fn() -> Arc<rmcp::model::JsonObject>,
    /// The OpenAPI schemas of a POST body.
    pub body: Option<Schemas>,
    /// The OpenAPI query parameters of a GET.
    pub params: Option<fn() -> Vec<Parameter>>,
}

fn input<T: JsonSchema + 'static>() -> Arc<rmcp::model::JsonObject> {
    rmcp::handler::server::common::schema_for_type::<T>()
}

fn schemas<T: ToSchema>(out: &mut Vec<(String, RefOr<Schema>)>) -> String {
    let name = T::name().into_owned();
    out.push((name.clone(), T::schema()));
    T::schemas(out);
    name
}

fn params<T: IntoParams>() -> Vec<Parameter> {
    T::into_params(|| Some(ParameterIn::Query))
}

/// Arguments sent as a JSON body.
const fn body<T: JsonSchema + ToSchema + 'static>() -> Args {
    Args {
        input: input::<T>,
        body: Some(schemas::<T>),
        params: None,
    }
}

/// Arguments sent in the query string.
const fn query<T: JsonSchema + IntoParams + 'static>() -> Args {
    Args {
        input: input::<T>,
        body: None,
        params: Some(params::<T>),
    }
}

/// Arguments sent either way (GET and POST routes).
const fn query_or_body<T: JsonSchema + ToSchema + IntoParams + 'static>() -> Args {
    Args {
        params: Some(params::<T>),
        ..body::<T>()
    }
}

/// What most operations are: a read any caller may make, on this thread,
/// without arguments. Entries below override what differs.
const READ: Operation = Operation {
    kind: Kind::Version,
    tool: None,
    routes: &[],
    tag: "",
    description: "",
    answers: "",
    who: Who::Caller,
    on_cpu: false,
    read_only: true,
    args: Args {
        input: input::<NoArgs>,
        body: None,
        params: None,
    },
    output: schemas::<VersionResponse>,
};

/// Every operation, in the order tools are listed.
pub static OPERATIONS: &[Operation] = &[
    Operation {
        kind: Kind::Search,
        tool: Some("search"),
        routes: &[
            Route {
                method: Method::Get,
                path: "/search",
                operation_id: "searchCitations",
                summary: "Search the indexed repositories for passages that answer a question.",
            },
            Route {
                method: Method::Post,
                path: "/search",
                operation_id: "searchCitationsPost",
                summary: "Search, with the arguments as a JSON body.",
            },
        ],
        tag: "search",
        description: "Finds the passages of the indexed scientific-software repositories that best answer a question: doc_id, lines, focus lines (the best few), snippet, GitHub links. Add queries: 2-3 keyword rewrites naming the functions or parameters the answer likely uses. toolkit keeps to one package.",
        answers: "Ranked passages, each with exact lines and GitHub links",
        on_cpu: true,
        args: query_or_body::<SearchArgs>(),
        output: schemas::<SearchResponse>,
        ..READ
    },
    Operation {
        kind: Kind::Retrieve,
        tool: Some("retrieve"),
        routes: &[Route {
            method: Method::Post,
            path: "/retrieve",
            operation_id: "retrievePassage",
            summary: "Get the exact lines of a document.",
        }],
        tag: "retrieve",
        description: "Returns lines start..end of a document (doc_id from a search hit) as at the indexed commit, with GitHub links and the file's sha256; a notebook's lines come as their cells (text_format notebook-cells), raw=true gives the exact bytes. Use it to read around a hit before quoting.",
        answers: "The lines as at the indexed commit (a notebook's as its cells)",
        args: body::<SpanRequest>(),
        output: schemas::<RetrieveResponse>,
        ..READ
    },
    Operation {
        kind: Kind::RetrieveBatch,
        tool: Some("retrieve_batch"),
        routes: &[Route {
            method: Method::Post,
            path: "/retrieve/batch",
            operation_id: "retrievePassages",
            summary: "Get several spans in one call.",
        }],
        tag: "retrieve",
        description: "Like retrieve (retrievePassage) for up to 50 spans; each item succeeds or fails on its own. Together at most 48,000 bytes of text.",
        answers: "One result per item; each succeeds or fails alone",
        args: body::<BatchArgs>(),
        output: schemas::<BatchResponse>,
        ..READ
    },
    Operation {
        kind: Kind::Tree,
        tool: Some("tree"),
        routes: &[Route {
            method: Method::Get,
            path: "/tree",
            operation_id: "listDocuments",
            summary: "List the documents under a prefix.",
        }],
        tag: "browse",
        description: "Lists the doc_id hierarchy (categories, repositories, folders, files with doctype and line count) under a prefix. Use it to discover what is indexed.",
        answers: "Folders and files under the prefix",
        args: query::<TreeArgs>(),
        output: schemas::<TreeResponse>,
        ..READ
    },
    Operation {
        kind: Kind::Context,
        tool: Some("context"),
        routes: &[Route {
            method: Method::Post,
            path: "/context",
            operation_id: "buildContext",
            summary: "Build a cited context block for a prompt.",
        }],
        tag: "search",
        description: "For bots that build prompts: searches, then returns numbered passages ([1], [2] …) cut at line boundaries to fit max_tokens, with their links. Add queries: keyword rewrites naming the identifiers the answer likely uses. insufficient_evidence is true when nothing clears the threshold.",
        answers: "Numbered passages within the token budget, and their citations",
        on_cpu: true,
        args: body::<ContextArgs>(),
        output: schemas::<ContextResponse>,
        ..READ
    },
    Operation {
        kind: Kind::Explain,
        tool: Some("explain"),
        routes: &[Route {
            method: Method::Post,
            path: "/explain",
            operation_id: "explainError",
            summary: "Explain a pasted error: where it is raised and what explains it.",
        }],
        tag: "search",
        description: "Paste a traceback, log excerpt or error message: returns the raise/throw/warn statements whose message matches (exact lines, GitHub links), the traceback's frames mapped to indexed lines, and passages that explain it. insufficient_evidence when nothing indexed does.",
        answers: "Raise sites, mapped frames and explaining passages, each with exact lines and links",
        on_cpu: true,
        args: body::<ExplainArgs>(),
        output: schemas::<ExplainResponse>,
        ..READ
    },
    Operation {
        kind: Kind::Version,
        tool: Some("version"),
        routes: &[Route {
            method: Method::Get,
            path: "/version",
            operation_id: "getIndexVersion",
            summary: "What index is being served.",
        }],
        tag: "status",
        description: "The index version being served, when it was built, the embedding model, and each repository's default branch and indexed commit.",
        answers: "Version, build time, model and each repository's branch and commit",
        output: schemas::<VersionResponse>,
        ..READ
    },
    Operation {
        kind: Kind::Health,
        tool: Some("health"),
        routes: &[Route {
            method: Method::Get,
            path: "/health",
            operation_id: "getHealth",
            summary: "Liveness and counts.",
        }],
        tag: "status",
        description: "Liveness: 200 while the server runs, with document counts by doctype (and by repository for a caller with credentials).",
        answers: "The server is up; counts of what the caller can see",
        who: Who::Public,
        output: schemas::<HealthResponse>,
        ..READ
    },
    Operation {
        kind: Kind::Ready,
        tool: None,
        routes: &[Route {
            method: Method::Get,
            path: "/ready",
            operation_id: "getReady",
            summary: "Whether an index is loaded.",
        }],
        tag: "status",
        description: "Readiness for load balancers: 200 once an index is loaded.",
        answers: "An index is loaded",
        who: Who::Public,
        output: schemas::<ReadyResponse>,
        ..READ
    },
    Operation {
        kind: Kind::SetWeight,
        tool: Some("set_weight"),
        routes: &[Route {
            method: Method::Post,
            path: "/weight",
            operation_id: "setWeight",
            summary: "Set a runtime ranking weight (admin tokens only).",
        }],
        tag: "admin",
        description: "Admin only: multiplies a document's ranking score (clamped 0.1 to 10) in a namespace until it expires. Changes future answers.",
        answers: "The stored weight",
        who: Who::Admin,
        read_only: false,
        args: body::<WeightArgs>(),
        output: schemas::<WeightResponse>,
        ..READ
    },
];

/// The operation an MCP tool name names.
pub fn by_tool(name: &str) -> Option<&'static Operation> {
    OPERATIONS.iter().find(|o| o.tool == Some(name))
}

/// Paths that answer without credentials.
pub fn public_paths() -> impl Iterator<Item = &'static str> {
    OPERATIONS
        .iter()
        .filter(|o| o.who == Who::Public)
        .flat_map(|o| o.routes.iter().map(|r| r.path))
}

/// The operation of `kind` (every kind has one in [`OPERATIONS`]).
pub fn operation(kind: Kind) -> Option<&'static Operation> {
    OPERATIONS.iter().find(|o| o.kind == kind)
}

/// A fresh id naming one call in logs and problem bodies.
pub fn new_trace_id() -> String {
    let mut b = [0u8; 16];
    rand::RngCore::fill_bytes(&mut rand::rng(), &mut b);
    hex::encode(b)
}

/// Everything one call needs besides its arguments.
#[derive(Clone)]
pub struct Call {
    /// The engine answering (held until the answer is built).
    pub engine: Arc<Engine>,
    /// Who is asking.
    pub caller: Caller,
    /// The caller presented no credentials (a public route's probe).
    pub anonymous: bool,
    /// Where CPU work runs.
    pub pool: CpuPool,
    /// When the answer stops being wanted.
    pub deadline: Instant,
    /// Names the call in logs and in failed batch items.
    pub trace_id: String,
    /// What was called (the HTTP path, or `mcp:<tool>`), for failed batch items.
    pub instance: String,
    /// Whether the answer's text is wanted (MCP shows it; HTTP sends JSON only).
    pub text: bool,
}

/// An answer: the JSON both connectors send, and the text an MCP client shows a model.
pub struct Answer {
    /// The structured result.
    pub value: Value,
    /// The same for a person or a model to read (empty unless [`Call::text`]).
    pub text: String,
}

impl Answer {
    /// `result`, with its text rendered only for a caller that shows text.
    fn new<T: Serialize>(call: &Call, result: &T, text: impl FnOnce() -> String) -> Self {
        Self {
            value: serde_json::to_value(result).unwrap_or(Value::Null),
            text: if call.text { text() } else { String::new() },
        }
    }

    /// `result`, whose text is its pretty JSON.
    fn json<T: Serialize>(call: &Call, result: &T) -> Self {
        Self::new(call, result, || {
            serde_json::to_string_pretty(result).unwrap_or_default()
        })
    }
}

/// A call's arguments as they arrived.
pub enum Input<'a> {
    /// A JSON body, parsed straight into the arguments (so a field given
    /// twice is refused, which a detour through `Value` would hide).
    Json(&'a [u8]),
    /// Arguments already in JSON form (MCP's, a query string's).
    Value(Value),
}

impl Input<'_> {
    /// The arguments as `T`, naming the field at fault.
    fn parse<T: DeserializeOwned>(&self) -> Result<T, ApiError> {
        match self {
            Input::Json(bytes) => parse_json(&mut serde_json::Deserializer::from_slice(bytes)),
            Input::Value(v) => parse_json(v),
        }
    }
}

/// A call's arguments, parsed: what the engine is asked.
enum Request {
    Search(cairn_search::SearchRequest),
    Retrieve(SpanRequest),
    RetrieveBatch(BatchArgs),
    Tree(TreeArgs),
    Context(cairn_search::ContextRequest),
    Explain(cairn_search::ExplainRequest),
    Version,
    Health,
    Ready,
    SetWeight(WeightArgs),
}

impl Operation {
    /// Runs the operation on `args` for `call`. The arguments are parsed
    /// first, here, so bad input is refused at once whatever the load; the
    /// work then runs on the CPU pool within the deadline when
    /// [`Operation::on_cpu`], else here.
    pub async fn run(&'static self, args: Input<'_>, call: Call) -> Result<Answer, ApiError> {
        let request = self.parse(&args, &call)?;
        match self.on_cpu {
            true => {
                let (pool, deadline) = (call.pool.clone(), call.deadline);
                pool.run(deadline, move || answer(request, &call)).await?
            }
            false => answer(request, &call),
        }
    }

    /// `args` as this operation's request, naming the field at fault.
    fn parse(&self, args: &Input<'_>, call: &Call) -> Result<Request, ApiError> {
        let groups = || call.caller.groups.clone();
        Ok(match self.kind {
            Kind::Search => Request::Search(
                args.parse::<SearchArgs>()?
                    .into_request(groups(), call.deadline),
            ),
            Kind::Retrieve => Request::Retrieve(args.parse()?),
            Kind::RetrieveBatch => Request::RetrieveBatch(args.parse()?),
            Kind::Tree => Request::Tree(args.parse()?),
            Kind::Context => Request::Context(
                args.parse::<ContextArgs>()?
                    .into_request(groups(), call.deadline),
            ),
            Kind::Explain => Request::Explain(
                args.parse::<ExplainArgs>()?
                    .into_request(groups(), call.deadline),
            ),
            Kind::Version => args.parse::<NoArgs>().map(|_| Request::Version)?,
            Kind::Health => args.parse::<NoArgs>().map(|_| Request::Health)?,
            Kind::Ready => args.parse::<NoArgs>().map(|_| Request::Ready)?,
            Kind::SetWeight => Request::SetWeight(args.parse()?),
        })
    }
}

/// The answer to `request`, computed on this thread.
fn answer(request: Request, call: &Call) -> Result<Answer, ApiError> {
    let (engine, groups) = (&call.engine, call.caller.groups());
    Ok(match request {
        Request::Search(req) => {
            let r = engine.search(&req)?;
            Answer::new(call, &r, || r.to_string())
        }
        Request::Retrieve(a) => {
            let r = engine.retrieve(&a, groups)?;
            Answer::new(call, &r, || r.to_string())
        }
        Request::RetrieveBatch(a) => {
            let r = batch(engine, &a, call)?;
            Answer::new(call, &r, || r.to_string())
        }
        Request::Tree(a) => {
            let r = a.run(engine, groups)?;
            Answer::new(call, &r, || r.to_string())
        }
        Request::Context(req) => {
            let r = engine.context(&req)?;
            Answer::new(call, &r, || r.context.clone())
        }
        Request::Explain(req) => {
            let r = engine.explain(&req)?;
            Answer::new(call, &r, || r.to_string())
        }
        Request::Version => Answer::json(call, &engine.version(groups)),
        Request::Health => {
            let mut health = engine.health(groups);
            // Probes need no names: without credentials, counts only.
            if call.anonymous {
                health.docs_by_repo.clear();
            }
            Answer::json(call, &health)
        }
        Request::Ready => Answer::json(
            call,
            &ReadyResponse {
                ready: true,
                index_version: engine.snapshot().version.to_string(),
            },
        ),
        Request::SetWeight(a) => {
            let w = a.apply(engine, &call.caller)?;
            Answer::new(call, &w, || {
                format!(
                    "weight {} set on {} in {} until unix time {}",
                    w.multiplier, w.doc_id, w.namespace, w.expires_at
                )
            })
        }
    })
}

/// A batch: each item its passage or its problem (one shape over HTTP and MCP).
fn batch(engine: &Engine, a: &BatchArgs, call: &Call) -> Result<BatchResponse, SearchError> {
    let items = engine
        .retrieve_batch(&a.items, call.caller.groups())?
        .into_iter()
        .map(|r| match r {
            Ok(p) => BatchItem::passage(p),
            Err(e) => BatchItem::problem(ApiError::from(e).problem(&call.trace_id, &call.instance)),
        })
        .collect();
    Ok(BatchResponse {
        items,
        index_version: engine.snapshot().version.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each operation appears once everywhere it is offered: its routes in
    /// the OpenAPI document under its operationIds, its tool in the MCP list.
    #[test]
    fn every_operation_is_offered_from_this_table() {
        let doc = serde_json::to_value(crate::http::openapi::document(None)).expect("json");
        let mut ids = std::collections::BTreeSet::new();
        let mut tools = std::collections::BTreeSet::new();
        for op in OPERATIONS {
            assert!(op.description.len() <= 300, "{:?}", op.kind);
            for r in op.routes {
                let method = match r.method {
                    Method::Get => "get",
                    Method::Post => "post",
                };
                assert_eq!(
                    doc["paths"][r.path][method]["operationId"], r.operation_id,
                    "{method} {}",
                    r.path
                );
                assert!(ids.insert(r.operation_id), "{} twice", r.operation_id);
            }
            if let Some(t) = op.tool {
                assert!(tools.insert(t), "{t} twice");
                assert_eq!(by_tool(t).map(|o| o.kind), Some(op.kind));
            }
        }
        let routes: usize = doc["paths"]
            .as_object()
            .expect("paths")
            .values()
            .map(|item| item.as_object().map_or(0, |m| m.len()))
            .sum();
        assert_eq!(routes, ids.len(), "no path the table does not list");
        assert_eq!(
            public_paths().collect::<Vec<_>>(),
            ["/health", "/ready"],
            "only probes answer without a token"
        );
    }
}
