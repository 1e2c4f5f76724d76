//! The OpenAPI 3.1 document, generated from the table of operations
//! ([`crate::ops::OPERATIONS`]: paths, descriptions, argument and result
//! types) and shaped for GPT Actions: unique operationIds, a bearer scheme,
//! `servers`, and `x-openai-isConsequential` (false for read-only POSTs,
//! true for `setWeight`).

use crate::ops::schema::query_params;
use crate::ops::{Method, OPERATIONS, Operation, Route, Who};
use crate::problem::Problem;
use utoipa::openapi::extensions::ExtensionsBuilder;
use utoipa::openapi::path::{HttpMethod, OperationBuilder, PathItem};
use utoipa::openapi::request_body::RequestBodyBuilder;
use utoipa::openapi::schema::Ref;
use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityRequirement, SecurityScheme};
use utoipa::openapi::{
    self, ComponentsBuilder, ContentBuilder, InfoBuilder, LicenseBuilder, OpenApiBuilder,
    PathsBuilder, RefOr, ResponseBuilder, Schema, Server,
};
use utoipa::{PartialSchema, ToSchema};

/// Media type of problem bodies.
const PROBLEM_JSON: &str = crate::problem::PROBLEM_JSON;

/// The document, with `servers` set to `public_url` when given.
pub fn document(public_url: Option<&str>) -> openapi::OpenApi {
    let mut schemas: Vec<(String, RefOr<Schema>)> = vec![
        (Problem::name().into_owned(), Problem::schema()),
        (
            <cairn_search::Code as ToSchema>::name().into_owned(),
            cairn_search::Code::schema(),
        ),
    ];
    let mut paths = PathsBuilder::new();
    for op in OPERATIONS {
        for route in op.meta.routes {
            let method = match route.method {
                Method::Get => HttpMethod::Get,
                Method::Post => HttpMethod::Post,
            };
            paths = paths.path(
                route.path,
                PathItem::new(method, operation(op, route, &mut schemas)),
            );
        }
    }
    schemas.sort_by(|a, b| a.0.cmp(&b.0));
    schemas.dedup_by(|a, b| a.0 == b.0);
    let components = ComponentsBuilder::new()
        .schemas_from_iter(schemas)
        .security_scheme(
            "bearer",
            SecurityScheme::Http(Http::new(HttpAuthScheme::Bearer)),
        )
        .build();
    let info = InfoBuilder::new()
        .title("cairn")
        .version(env!("CARGO_PKG_VERSION"))
        .description(Some("Citation search over scientific software repositories: ranked passages with exact line spans of a pinned commit and GitHub links to cite."))
        .license(Some(LicenseBuilder::new().name("MIT OR Apache-2.0").build()))
        .build();
    OpenApiBuilder::new()
        .info(info)
        .paths(paths.build())
        .components(Some(components))
        .security(Some([SecurityRequirement::new(
            "bearer",
            Vec::<String>::new(),
        )]))
        .servers(public_url.map(|url| [Server::new(url.trim_end_matches('/'))]))
        .build()
}

/// One route of an operation as an OpenAPI operation.
fn operation(
    op: &Operation,
    route: &Route,
    schemas: &mut Vec<(String, RefOr<Schema>)>,
) -> openapi::path::Operation {
    let json_of = |name: String| {
        ContentBuilder::new()
            .schema(Some(Ref::from_schema_name(name)))
            .build()
    };
    let problem = || {
        ContentBuilder::new()
            .schema(Some(Ref::from_schema_name(Problem::name())))
            .build()
    };
    let meta = &op.meta;
    let ok = ResponseBuilder::new()
        .description(meta.answers)
        .content("application/json", json_of((op.output)(schemas)))
        .build();
    // GPT Actions reads a POST as a change unless told; say it in words too.
    let description = match (route.method, meta.read_only) {
        (Method::Post, true) => format!("{} Read-only.", meta.description),
        _ => meta.description.to_owned(),
    };
    let mut b = OperationBuilder::new()
        .tag(meta.tag)
        .summary(Some(route.summary))
        .description(Some(description))
        .operation_id(Some(route.operation_id))
        .response("200", ok);
    let input = (op.input)();
    let takes_args = input
        .get("properties")
        .and_then(serde_json::Value::as_object)
        .is_some_and(|p| !p.is_empty());
    match route.method {
        Method::Get if takes_args => {
            // What the parameters refer to, without the body schema itself.
            let mut defs = Vec::new();
            let body = (op.body)(&mut defs);
            schemas.extend(defs.into_iter().filter(|(name, _)| *name != body));
            b = b.parameters(Some(query_params(&input)));
        }
        Method::Post if takes_args => {
            let body = RequestBodyBuilder::new()
                .content("application/json", json_of((op.body)(schemas)))
                .required(Some(utoipa::openapi::Required::True))
                .build();
            b = b.request_body(Some(body));
        }
        _ => {}
    }
    if meta.who == Who::Admin {
        b = b.response(
            "403",
            ResponseBuilder::new()
                .description("Not an admin token")
                .content(PROBLEM_JSON, problem()),
        );
    }
    if meta.who != Who::Public {
        b = b.response(
            "4XX",
            ResponseBuilder::new()
                .description("Bad input, auth or limits")
                .content(PROBLEM_JSON, problem()),
        );
    }
    if meta.on_cpu {
        b = b.response(
            "5XX",
            ResponseBuilder::new()
                .description("Overloaded or failed; retry after Retry-After")
                .content(PROBLEM_JSON, problem()),
        );
    }
    if route.method == Method::Post {
        // GPT Actions runs a non-consequential action without asking the user.
        b = b.extensions(Some(
            ExtensionsBuilder::new()
                .add("x-openai-isConsequential", !meta.read_only)
                .build(),
        ));
    }
    let mut built = b.build();
    if meta.who == Who::Public {
        // Liveness and readiness answer without a token.
        built.security = Some(Vec::new());
    }
    built
}
