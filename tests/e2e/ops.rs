//! The table of operations: every operation is offered everywhere it should
//! be (HTTP route, OpenAPI path, MCP tool, CLI subcommand); an operation
//! written as one file (a fixture here) gets all of that from the generic
//! table code; and the CLI answers exactly as the API does.

use crate::fixtures::{World, cairn, stdout};
use cairn_search::{Engine, EngineOptions, TreeResponse};
use cairn_serve::ops::schema::query_params;
use cairn_serve::ops::{Call, Input, Meta, Method, OPERATIONS, Op, Route, operation};
use cairn_serve::problem::ApiError;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::sync::Arc;

fn built() -> (World, Arc<Engine>) {
    let w = World::new();
    let o = w.build("out", &[]);
    assert!(o.status.success(), "{}", crate::fixtures::stderr(&o));
    let engine = Engine::open(&EngineOptions {
        index: w.path("out"),
        model_dir: Some(w.model.clone()),
        device: cairn_embed::DevicePref::Cpu,
    })
    .expect("open");
    (w, Arc::new(engine))
}

/// A new operation, written as an operation file is: arguments, answer, metadata, run.
#[derive(Debug, Deserialize, JsonSchema, clap::Args)]
#[serde(deny_unknown_fields)]
struct CountArgs {
    /// A doc_id prefix.
    #[serde(default)]
    #[arg(long)]
    prefix: Option<String>,
}

/// How many files lie under the prefix.
#[derive(Debug, Serialize, utoipa::ToSchema, JsonSchema)]
struct CountResponse {
    /// Files.
    files: usize,
}

struct Count;

impl Op for Count {
    type Args = CountArgs;
    type Output = CountResponse;
    const META: Meta = Meta {
        tool: Some("count"),
        title: "Count files",
        routes: &[Route {
            method: Method::Get,
            path: "/count",
            operation_id: "countFiles",
            summary: "Count the files under a prefix.",
        }],
        tag: "browse",
        description: "How many files lie under a doc_id prefix.",
        answers: "The count",
        cli: Some("count"),
        ..Meta::READ
    };

    fn run(a: CountArgs, call: &Call) -> Result<CountResponse, ApiError> {
        let tree: TreeResponse = call.engine.tree(
            a.prefix.as_deref().unwrap_or(""),
            16,
            5000,
            call.caller.groups(),
        )?;
        let files = tree.entries.iter().filter(|e| e.kind == "file").count();
        Ok(CountResponse { files })
    }

    fn text(r: &CountResponse) -> String {
        format!("{} files\n", r.files)
    }
}

/// Its one line in a table.
static TABLE: &[cairn_serve::ops::Operation] = &[operation::<Count>()];

#[test]
fn an_operation_written_as_one_file_is_offered_by_every_connector() {
    let (_w, engine) = built();
    let op = &TABLE[0];
    // MCP: the input schema, with the field's doc as its description.
    let input = (op.input)();
    assert_eq!(
        input["properties"]["prefix"]["description"], "A doc_id prefix.",
        "{input:?}"
    );
    // OpenAPI: the query parameter, and the answer's schema.
    let params = query_params(&input);
    assert_eq!(params.len(), 1);
    assert_eq!(params[0].name, "prefix");
    let mut schemas = Vec::new();
    assert_eq!((op.output)(&mut schemas), "CountResponse");
    assert_eq!((op.body)(&mut schemas), "CountArgs");
    // HTTP and MCP: arguments as JSON, parsed and run; bad ones named.
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    let call = Call::local(Arc::clone(&engine));
    let answer = rt
        .block_on(op.run(Input::Json(br#"{"prefix": "science/alpha"}"#), call.clone()))
        .unwrap_or_else(|e| panic!("{e}"));
    let files = answer.value["files"].as_u64().expect("files");
    assert!(files >= 2, "{}", answer.value);
    assert_eq!(answer.text, format!("{files} files\n"));
    let e = rt
        .block_on(op.run(Input::Value(json!({"prefix": 3})), call.clone()))
        .err()
        .expect("refused");
    assert_eq!(e.field.as_deref(), Some("prefix"));
    let e = rt
        .block_on(op.run(Input::Value(json!({"colour": "red"})), call.clone()))
        .err()
        .expect("refused");
    assert_eq!(e.field.as_deref(), Some("colour"));
    // The CLI: its flags, parsed and run the same way.
    let cmd = (op.flags)(clap::Command::new("count"));
    let flags = cmd
        .try_get_matches_from(["count", "--prefix", "science/alpha"])
        .expect("flags");
    let local = op.run_local(&flags, &call).expect("run");
    assert_eq!(local.value, answer.value);
}

#[test]
fn every_operation_is_offered_where_it_should_be() {
    let help = stdout(&cairn(&["--help"]));
    let openapi: Value = serde_json::from_slice(&cairn(&["openapi"]).stdout).expect("openapi");
    let mut on_cli = Vec::new();
    for op in OPERATIONS {
        assert!(
            !op.meta.routes.is_empty(),
            "{:?} has no route",
            op.meta.tool
        );
        for r in op.meta.routes {
            let method = match r.method {
                Method::Get => "get",
                Method::Post => "post",
            };
            assert_eq!(
                openapi["paths"][r.path][method]["operationId"], r.operation_id,
                "{method} {}",
                r.path
            );
        }
        if let Some(sub) = op.meta.cli {
            assert!(
                help.lines().any(|l| l.trim_start().starts_with(sub)),
                "{sub} is not a subcommand:\n{help}"
            );
            on_cli.push(sub);
        }
        // Only the probes are HTTP-only; everything else is an MCP tool.
        assert_eq!(
            op.meta.tool.is_none(),
            op.meta.routes.iter().all(|r| r.path == "/ready"),
            "{:?}",
            op.meta.routes
        );
    }
    assert_eq!(
        on_cli,
        [
            "search",
            "fetch",
            "retrieve",
            "history",
            "tree",
            "context",
            "ask",
            "explain",
            "grep",
            "references",
            "definitions",
            "version"
        ]
    );
}

#[test]
fn the_cli_answers_as_the_api_does() {
    let (w, engine) = built();
    let index = w.path("out");
    let model = w.model.to_str().expect("utf8").to_owned();
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    let cases = [
        (
            vec![
                "search",
                "fit the model",
                "--toolkit",
                "alpha",
                "--limit",
                "3",
            ],
            "search_passages",
            json!({"query": "fit the model", "toolkit": "alpha", "limit": 3}),
        ),
        (
            vec![
                "retrieve",
                "science/alpha/src/alpha/core.py",
                "--lines",
                "2:4",
            ],
            "retrieve",
            json!({"doc_id": "science/alpha/src/alpha/core.py", "start": 2, "end": 4}),
        ),
        (
            vec!["tree", "science"],
            "tree",
            json!({"prefix": "science"}),
        ),
        (
            vec!["context", "fit the model", "--max-tokens", "300"],
            "context",
            json!({"query": "fit the model", "max_tokens": 300}),
        ),
    ];
    for (argv, tool, body) in cases {
        let mut args = argv.clone();
        args.extend([
            "--json",
            "--index",
            index.to_str().expect("utf8"),
            "--model-dir",
            &model,
        ]);
        let o = cairn(&args);
        assert!(
            o.status.success(),
            "{argv:?}: {}",
            crate::fixtures::stderr(&o)
        );
        let cli: Value = serde_json::from_slice(&o.stdout).expect("json");
        let op = cairn_serve::ops::by_tool(tool).expect("tool");
        let api = rt
            .block_on(op.run(Input::Value(body), Call::local(Arc::clone(&engine))))
            .unwrap_or_else(|e| panic!("{tool}: {e}"))
            .value;
        assert_eq!(cli, api, "{argv:?}");
    }
}
