//! The OpenAPI 3.1 document, generated from the handlers' annotations and the
//! request and response types, and shaped for GPT Actions: unique
//! operationIds, a bearer scheme, `servers`, and `x-openai-isConsequential`
//! (false for read-only POSTs, true for `setWeight`).

use super::api;
use crate::problem::Problem;
use utoipa::OpenApi;
use utoipa::openapi::extensions::ExtensionsBuilder;
use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityScheme};
use utoipa::openapi::{self, Server};

#[derive(OpenApi)]
#[openapi(
    info(
        title = "cairn",
        description = "Citation search over scientific software repositories: ranked passages with exact line spans of a pinned commit and GitHub links to cite.",
        license(name = "MIT OR Apache-2.0")
    ),
    paths(
        api::search_get,
        api::search_post,
        api::retrieve,
        api::retrieve_batch,
        api::tree,
        api::context,
        api::weight,
        api::version,
        api::health,
        api::ready
    ),
    components(schemas(Problem, cairn_search::Code)),
    security(("bearer" = []))
)]
struct ApiDoc;

/// Operations that only read, though sent as POST: GPT Actions runs them without asking.
const READ_ONLY_POSTS: [&str; 4] = [
    "searchCitationsPost",
    "retrievePassage",
    "retrievePassages",
    "buildContext",
];

/// The document, with `servers` set to `public_url` when given.
pub fn document(public_url: Option<&str>) -> openapi::OpenApi {
    let mut doc = ApiDoc::openapi();
    doc.info.version = env!("CARGO_PKG_VERSION").to_owned();
    if let Some(url) = public_url {
        doc.servers = Some(vec![Server::new(url.trim_end_matches('/'))]);
    }
    let components = doc.components.get_or_insert_with(Default::default);
    components.add_security_scheme(
        "bearer",
        SecurityScheme::Http(Http::new(HttpAuthScheme::Bearer)),
    );
    for item in doc.paths.paths.values_mut() {
        if let Some(op) = item.post.as_mut() {
            let id = op.operation_id.as_deref().unwrap_or("");
            let consequential = !READ_ONLY_POSTS.contains(&id);
            op.extensions = Some(
                ExtensionsBuilder::new()
                    .add("x-openai-isConsequential", consequential)
                    .build(),
            );
        }
    }
    // Liveness and readiness answer without a token.
    for path in ["/health", "/ready"] {
        if let Some(op) = doc.paths.paths.get_mut(path).and_then(|i| i.get.as_mut()) {
            op.security = Some(Vec::new());
        }
    }
    doc
}
