//! The operations, one file each: its typed arguments (serde, JSON schema,
//! clap), its typed answer (serde, OpenAPI schema, a text rendering), what
//! it is (name, description, routes, who may call it, whether it runs on
//! the CPU pool) and how it runs. [`OPERATIONS`] lists them; HTTP routes
//! ([`crate::http::api`]), MCP tools ([`crate::mcp`]), the OpenAPI document
//! ([`crate::http::openapi`]) and the CLI's subcommands are all generated
//! from it, and every call runs through [`run`], so no two connectors can
//! answer the same question differently.
//!
//! Adding an operation is one file here and one line in [`OPERATIONS`].
//! This module depends on the search library and on [`crate::problem`],
//! [`crate::pool`] and [`crate::costs`] only; the connectors depend on it.

pub mod ask;
mod call;
pub mod chatgpt_search;
pub mod context;
pub mod definitions;
pub mod explain;
pub mod fetch;
pub mod grep;
pub mod health;
pub mod history;
pub mod ready;
pub mod references;
pub mod retrieve;
pub mod retrieve_batch;
pub mod schema;
pub mod search;
pub mod set_weight;
pub mod tree;
pub mod version;

pub use call::{Anonymous, Call, Versions, new_trace_id};

use crate::costs::Payer;
use crate::llm::{MAX_MODEL_WAITS, MAX_MODEL_WAITS_EACH, ModelPlace};
use crate::problem::{ApiError, parse_json};
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Instant;
use utoipa::ToSchema;

/// One operation: everything about it, in its own file.
pub trait Op: 'static {
    /// What a caller sends (a JSON body, a query string, MCP arguments or CLI flags).
    type Args: DeserializeOwned + JsonSchema + clap::Args + Send + 'static;
    /// What it answers.
    type Output: Serialize + ToSchema + JsonSchema + Send + 'static;
    /// What it is and where it is offered.
    const META: Meta;
    /// The answer, computed on this thread (the CPU pool's, when [`Meta::on_cpu`]).
    fn run(args: Self::Args, call: &Call) -> Result<Self::Output, ApiError>;
    /// The answer for a person or a model to read (MCP's text, the CLI's output).
    fn text(output: &Self::Output) -> String {
        serde_json::to_string_pretty(output).unwrap_or_default()
    }
    /// The passages the answer cites, for connectors that link them (MCP's resource links).
    fn cites(_output: &Self::Output) -> Vec<PassageRef> {
        Vec::new()
    }
}

/// A passage an answer cites.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PassageRef {
    /// `<category>/<repo>/<path>`.
    pub doc_id: String,
    /// First line.
    pub start: u32,
    /// Last line.
    pub end: u32,
    /// What to call it.
    pub title: String,
    /// The index version that cited it.
    pub version: String,
    /// Its focus, the lines to read first, where the answer names one.
    pub focus: Option<(u32, u32)>,
}

/// What an operation is and where it is offered.
pub struct Meta {
    /// The MCP tool name; `None` for HTTP-only probes.
    pub tool: Option<&'static str>,
    /// A few words naming it for a person (MCP's tool title).
    pub title: &'static str,
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
    /// Whether it calls the configured model (then its deadline is the
    /// model's: [`Call::for_model`]).
    pub model: bool,
    /// Whether it changes nothing (MCP's readOnlyHint; GPT Actions' isConsequential is its negation).
    pub read_only: bool,
    /// The CLI subcommand offering it, if one does (status probes are for
    /// servers). Mostly the tool's name; the two differ where an MCP client
    /// expects a tool name the CLI already uses otherwise (`search`).
    pub cli: Option<&'static str>,
    /// The MCP tool set it belongs to (`--toolsets`).
    pub toolset: Toolset,
}

impl Meta {
    /// What most operations are: a read any caller may make, on this
    /// thread, offered by MCP and HTTP but not the CLI. Each file overrides
    /// what differs.
    pub const READ: Meta = Meta {
        tool: None,
        title: "",
        routes: &[],
        tag: "",
        description: "",
        answers: "",
        who: Who::Caller,
        on_cpu: false,
        model: false,
        read_only: true,
        cli: None,
        toolset: Toolset::Read,
    };
}

/// A set of MCP tools a client may ask for (`cairn mcp --toolsets`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Toolset {
    /// Finding and reading passages: search, fetch, retrieve, tree, context.
    Read,
    /// The code's own structure: grep, definitions, references.
    Code,
    /// When and why lines changed.
    History,
    /// Explaining an error; a written answer from the configured model.
    Explain,
    /// The server itself: version, health, set_weight.
    Admin,
}

impl Toolset {
    /// Every set, in order.
    pub const ALL: [Toolset; 5] = [
        Toolset::Read,
        Toolset::Code,
        Toolset::History,
        Toolset::Explain,
        Toolset::Admin,
    ];

    /// Its name in `--toolsets`.
    pub fn name(self) -> &'static str {
        match self {
            Toolset::Read => "read",
            Toolset::Code => "code",
            Toolset::History => "history",
            Toolset::Explain => "explain",
            Toolset::Admin => "admin",
        }
    }
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

/// An operation with its types erased: what the table holds and the
/// connectors iterate over.
pub struct Operation {
    /// What it is.
    pub meta: Meta,
    /// Its arguments' JSON schema (the MCP input schema, and the source of
    /// the OpenAPI body and query parameters).
    pub input: fn() -> Arc<rmcp::model::JsonObject>,
    /// Its arguments' OpenAPI schemas; returns the name of the top one.
    pub body: schema::Schemas,
    /// Its answer's OpenAPI schemas; returns the name of the top one.
    pub output: schema::Schemas,
    /// Its answer's JSON schema as serialized (MCP's output schema).
    pub output_json: fn() -> Arc<rmcp::model::JsonObject>,
    /// Adds its arguments to a CLI subcommand (their clap definition).
    pub flags: fn(clap::Command) -> clap::Command,
    /// Parses the arguments and runs it.
    run: for<'a> fn(Input<'a>, Call) -> BoxAnswer<'a>,
    /// Runs it on this thread with arguments parsed from CLI flags.
    local: fn(&clap::ArgMatches, &Call) -> Result<Answer, ApiError>,
    /// Parses the arguments and runs it on this thread (a tool `ask`'s model calls).
    here: for<'a> fn(Input<'a>, &Call) -> Result<Answer, ApiError>,
}

/// No arguments.
#[derive(Debug, serde::Deserialize, JsonSchema, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

/// A running call's eventual answer.
type BoxAnswer<'a> = Pin<Box<dyn Future<Output = Result<Answer, ApiError>> + Send + 'a>>;

/// The table entry of `O`.
pub const fn operation<O: Op>() -> Operation {
    Operation {
        meta: O::META,
        input: schema::input::<O::Args>,
        body: schema::openapi::<O::Args>,
        output: schema::output::<O::Output>,
        output_json: schema::output_json::<O::Output>,
        flags: <O::Args as clap::Args>::augment_args,
        run: run_erased::<O>,
        local: run_local::<O>,
        here: run_here::<O>,
    }
}

/// Every operation, in the order tools are listed.
pub static OPERATIONS: &[Operation] = &[
    operation::<search::Search>(),
    operation::<chatgpt_search::ChatGptSearch>(),
    operation::<fetch::Fetch>(),
    operation::<retrieve::Retrieve>(),
    operation::<retrieve_batch::RetrieveBatch>(),
    operation::<history::History>(),
    operation::<tree::Tree>(),
    operation::<context::Context>(),
    operation::<ask::Ask>(),
    operation::<explain::Explain>(),
    operation::<grep::Grep>(),
    operation::<references::References>(),
    operation::<definitions::Definitions>(),
    operation::<version::Version>(),
    operation::<health::Health>(),
    operation::<ready::Ready>(),
    operation::<set_weight::SetWeight>(),
];

impl Operation {
    /// Runs the operation on `args` for `call`. The arguments are parsed
    /// first, so bad input is refused at once whatever the load.
    pub async fn run(&'static self, args: Input<'_>, call: Call) -> Result<Answer, ApiError> {
        (self.run)(args, call).await
    }

    /// Runs the operation for the CLI: `flags` were parsed by a command
    /// that [`Operation::flags`] built; the work runs on this thread.
    pub fn run_local(&self, flags: &clap::ArgMatches, call: &Call) -> Result<Answer, ApiError> {
        (self.local)(flags, call)
    }

    /// Runs the operation on `args` on this thread, its text wanted: for a
    /// caller already on the CPU pool (`ask`'s tools).
    pub fn run_here(&self, args: Input<'_>, call: &Call) -> Result<Answer, ApiError> {
        (self.here)(args, call)
    }
}

fn run_erased<O: Op>(args: Input<'_>, call: Call) -> BoxAnswer<'_> {
    Box::pin(async move {
        let args = args.parse::<O::Args>()?;
        let text = call.text;
        let output = run::<O>(args, call).await?;
        Ok(Answer::of::<O>(&output, text))
    })
}

fn run_here<O: Op>(args: Input<'_>, call: &Call) -> Result<Answer, ApiError> {
    let output = O::run(args.parse::<O::Args>()?, call)?;
    Ok(Answer::of::<O>(&output, true))
}

fn run_local<O: Op>(flags: &clap::ArgMatches, call: &Call) -> Result<Answer, ApiError> {
    let args = <O::Args as clap::FromArgMatches>::from_arg_matches(flags)
        .map_err(|e| ApiError::malformed(None, e.to_string()))?;
    let output = O::run(args, call)?;
    Ok(Answer::of::<O>(&output, call.text))
}

/// Runs `O` on parsed arguments: on the CPU pool within the deadline when
/// it says so and the call has a pool, else here. The typed entry point
/// (the web pages, the CLI); connectors with untyped input use [`Operation::run`].
pub async fn run<O: Op>(args: O::Args, call: Call) -> Result<O::Output, ApiError> {
    if O::META.model && call.pool.is_some() {
        return waiting_on_model(call.for_model(), move |call| O::run(args, call)).await?;
    }
    match (call.pool.is_some(), O::META.on_cpu) {
        (true, true) => on_pool(call, move |call| O::run(args, call)).await?,
        _ => O::run(args, &call),
    }
}

/// Runs `f` for `call` on its CPU pool (here, without one): after its payer
/// found it a place, within its deadline, told through the call's deadline
/// if its caller stops waiting, and charged to its payer for the time it ran.
pub async fn on_pool<T, F>(call: Call, f: F) -> Result<T, ApiError>
where
    T: Send + 'static,
    F: FnOnce(&Call) -> T + Send + 'static,
{
    let Some(pool) = call.pool.clone() else {
        return Ok(f(&call));
    };
    let until = call.deadline.instant().unwrap_or_else(far_off);
    let place = match &call.payer {
        Some(p) => Some(p.enter(until).await?),
        None => None,
    };
    let abandon = Arc::new(AtomicBool::new(false));
    let call = Call {
        deadline: call.deadline.clone().or_when(Arc::clone(&abandon)),
        ..call
    };
    Ok(pool
        .run(until, abandon, move || {
            let _place = place;
            let _charge = call.payer.clone().map(Charge::starting_now);
            f(&call)
        })
        .await?)
}

/// Runs `f`, which waits on the configured model, on a blocking thread of
/// its own (not a CPU worker: it waits, and its tool calls go to the pool
/// as calls of their own), within the call's deadline and one of the
/// [`ModelPlace`]s; the deadline is raised for `f` when its caller stops waiting.
async fn waiting_on_model<T, F>(call: Call, f: F) -> Result<T, ApiError>
where
    T: Send + 'static,
    F: FnOnce(&Call) -> T + Send + 'static,
{
    let Some(place) = ModelPlace::take(&call.caller.name) else {
        return Err(ApiError::new(
            cairn_search::Code::Overloaded,
            format!(
                "{MAX_MODEL_WAITS} answers (or {MAX_MODEL_WAITS_EACH} of yours) are waiting on the model; retry shortly"
            ),
        )
        .retry_after(2));
    };
    let until = call.deadline.instant().unwrap_or_else(far_off);
    let abandon = Arc::new(AtomicBool::new(false));
    let call = Call {
        deadline: call.deadline.clone().or_when(Arc::clone(&abandon)),
        ..call
    };
    /// Raises the flag when the waiting ends: answered, timed out, or dropped.
    struct Raise(Arc<AtomicBool>);
    impl Drop for Raise {
        fn drop(&mut self) {
            self.0.store(true, std::sync::atomic::Ordering::Relaxed);
        }
    }
    let _raise = Raise(abandon);
    let job = tokio::task::spawn_blocking(move || {
        let _place = place;
        f(&call)
    });
    match tokio::time::timeout_at(until.into(), job).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(_)) => Err(crate::pool::PoolError::Panicked.into()),
        Err(_) => Err(crate::pool::PoolError::DeadlineExceeded.into()),
    }
}

/// Charges its payer, when dropped, for the time since it was made: a job
/// pays for what it ran however it ended, a panic included.
struct Charge(Payer, Instant);

impl Charge {
    fn starting_now(payer: Payer) -> Self {
        Self(payer, Instant::now())
    }
}

impl Drop for Charge {
    fn drop(&mut self) {
        self.0.charge(self.1.elapsed());
    }
}

/// A time no call waits for: a day from now.
fn far_off() -> Instant {
    Instant::now() + std::time::Duration::from_secs(24 * 3600)
}

/// The operation an MCP tool name names.
pub fn by_tool(name: &str) -> Option<&'static Operation> {
    OPERATIONS.iter().find(|o| o.meta.tool == Some(name))
}

/// Paths that answer without credentials.
pub fn public_paths() -> impl Iterator<Item = &'static str> {
    OPERATIONS
        .iter()
        .filter(|o| o.meta.who == Who::Public)
        .flat_map(|o| o.meta.routes.iter().map(|r| r.path))
}

/// An answer: the JSON both connectors send, and the text an MCP client shows a model.
pub struct Answer {
    /// The structured result.
    pub value: Value,
    /// The same for a person or a model to read (empty unless [`Call::text`]).
    pub text: String,
    /// The passages it cites.
    pub cites: Vec<PassageRef>,
}

impl Answer {
    /// `O`'s output as both connectors send it; its text only when wanted.
    fn of<O: Op>(output: &O::Output, text: bool) -> Self {
        Self {
            value: serde_json::to_value(output).unwrap_or(Value::Null),
            text: if text { O::text(output) } else { String::new() },
            cites: O::cites(output),
        }
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
    /// The arguments as `T`, naming the field at fault. Fields the schema
    /// does not list are refused here: arguments that flatten [`cairn_search::Filters`]
    /// cannot ask serde to (it does not combine `deny_unknown_fields` with `flatten`).
    pub fn parse<T: DeserializeOwned + JsonSchema + 'static>(&self) -> Result<T, ApiError> {
        let keys: Vec<String> = match self {
            // Keys only: the values are skipped unread, not built.
            Input::Json(bytes) => serde_json::from_slice::<
                std::collections::HashMap<String, serde::de::IgnoredAny>,
            >(bytes)
            .map(|m| m.into_keys().collect())
            .unwrap_or_default(),
            Input::Value(v) => v
                .as_object()
                .map(|m| m.keys().cloned().collect())
                .unwrap_or_default(),
        };
        schema::refuse_unknown::<T>(&keys)?;
        match self {
            Input::Json(bytes) => parse_json(&mut serde_json::Deserializer::from_slice(bytes)),
            Input::Value(v) => parse_json(v),
        }
    }
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
            assert!(op.meta.description.len() <= 300, "{:?}", op.meta.tool);
            for r in op.meta.routes {
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
            if let Some(t) = op.meta.tool {
                assert!(tools.insert(t), "{t} twice");
                assert!(by_tool(t).is_some_and(|o| std::ptr::eq(o, op)));
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
