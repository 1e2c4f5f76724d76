//! Generated input for every parser that takes outside input, a bounded
//! number of cases per run (CI runs them all): repositories.yml, weights.yaml,
//! build.yaml, HTTP query strings and JSON bodies, MCP tool arguments,
//! doc_ids and spans, pack manifests. Nothing may panic; every rejection is a
//! clear error (a config error names `file:line:column`, an HTTP one is a 4xx
//! problem naming its code).

use crate::fixtures::World;
use crate::http::{bearer, parts, served};
use actix_web::http::StatusCode;
use actix_web::{test as atest, web};
use cairn_index::{DocId, IndexVersion, LineSpan, Manifest};
use cairn_pipeline::config::{BuildSettings, Registry, load_weights};
use cairn_serve::http::AppState;
use cairn_serve::ops::Input;
use cairn_serve::ops::context::ContextArgs;
use cairn_serve::ops::retrieve_batch::BatchArgs;
use cairn_serve::ops::search::SearchArgs;
use cairn_serve::ops::set_weight::WeightArgs;
use cairn_serve::ops::tree::TreeArgs;
use cairn_serve::server::app;
use proptest::prelude::*;
use std::sync::Arc;

/// Characters that matter to YAML, JSON, URLs and paths, plus some that matter to nobody.
const PALETTE: &[char] = &[
    ':', '-', ' ', '\n', '\t', '{', '}', '[', ']', '"', '\'', '#', '&', '*', '!', '|', '>', '%',
    '@', '`', ',', '?', '=', '+', '/', '\\', '.', '0', '9', 'a', 'z', 'é', '\u{0}', '\u{feff}',
    '😀',
];

/// `valid` with a few characters inserted, deleted or replaced.
fn mutated(valid: &'static str) -> impl Strategy<Value = String> {
    prop::collection::vec(
        (
            any::<prop::sample::Index>(),
            0u8..3,
            prop::sample::select(PALETTE),
        ),
        0..8,
    )
    .prop_map(move |edits| {
        let mut chars: Vec<char> = valid.chars().collect();
        for (at, op, c) in edits {
            let i = at.index(chars.len() + 1);
            match op {
                0 => chars.insert(i, c),
                1 if i < chars.len() => {
                    chars.remove(i);
                }
                _ if i < chars.len() => chars[i] = c,
                _ => chars.push(c),
            }
        }
        chars.into_iter().collect()
    })
}

/// Any text made of the palette.
fn noise() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(PALETTE), 0..200)
        .prop_map(|c| c.into_iter().collect())
}

const REGISTRY: &str = "science:\n  groups: [team-a]\n  repos:\n    - name: alpha\n      url: https://github.com/example/alpha\n      include: [\"src/**\"]\n      pin: v1\ntools:\n  - name: beta\n    url: https://github.com/example/beta\n    web_url: https://example.org/beta\n";
const WEIGHTS: &str = "extensions:\n  .py: 1.2\npath_includes:\n  tests/: 0.5\n";
const SETTINGS: &str =
    "max_file_bytes: 20000\nchunk_max_lines: 30\nmodel: sentence-transformers/all-MiniLM-L6-v2\n";

/// A config error names the file with a line and column, or says what is wrong.
fn clear(message: &str, file: &str) -> bool {
    !message.is_empty() && message.contains(file)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn config_files_never_panic(
        registry in prop_oneof![mutated(REGISTRY), noise()],
        weights in prop_oneof![mutated(WEIGHTS), noise()],
        settings in prop_oneof![mutated(SETTINGS), noise()],
    ) {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("repositories.yml");
        if let Err(e) = Registry::parse(&path, &registry) {
            prop_assert!(clear(&e.to_string(), "repositories.yml"), "{e}");
        }
        let w = dir.path().join("weights.yaml");
        std::fs::write(&w, &weights).expect("write");
        if let Err(e) = load_weights(&w) {
            prop_assert!(clear(&e.to_string(), "weights.yaml"), "{e}");
        }
        let s = dir.path().join("build.yaml");
        std::fs::write(&s, &settings).expect("write");
        if let Err(e) = BuildSettings::load(&s) {
            prop_assert!(clear(&e.to_string(), "build.yaml"), "{e}");
        }
    }

    #[test]
    fn ids_spans_and_manifests_never_panic(
        id in prop_oneof![mutated("science/alpha/src/alpha/core.py"), noise()],
        start in any::<i64>(),
        end in any::<i64>(),
        manifest in prop_oneof![mutated(r#"{"format": 3, "index_version": "0123456789abcdef", "built_at": "2026-01-01T00:00:00Z", "repos": [], "files": {}}"#), noise()],
    ) {
        if let Err(e) = DocId::parse(&id) {
            prop_assert!(!e.to_string().is_empty());
        }
        let _ = IndexVersion::parse(&id);
        match LineSpan::new(start, end) {
            Ok(s) => prop_assert!(1 <= s.start && s.start <= s.end),
            Err(e) => prop_assert!(!e.to_string().is_empty()),
        }
        let _ = serde_json::from_str::<Manifest>(&manifest);
    }

    /// MCP tool arguments go through the same typed parser as HTTP bodies.
    #[test]
    fn tool_arguments_never_panic(
        body in prop_oneof![
            mutated(r#"{"query": "fit", "limit": 5, "toolkit": ["emcee"], "mode": "bm25"}"#),
            mutated(r#"{"items": [{"doc_id": "a/b/c.py", "start": 1, "end": 9}]}"#),
            mutated(r#"{"doc_id": "a/b/c", "multiplier": 2, "ttl_days": 3}"#),
            noise(),
        ],
    ) {
        let Ok(value) = serde_json::from_str::<serde_json::Value>(&body) else {
            return Ok(());
        };
        let input = Input::Value(value);
        for result in [
            input.parse::<SearchArgs>().map(|_| ()),
            input.parse::<ContextArgs>().map(|_| ()),
            input.parse::<BatchArgs>().map(|_| ()),
            input.parse::<TreeArgs>().map(|_| ()),
            input.parse::<WeightArgs>().map(|_| ()),
        ] {
            if let Err(e) = result {
                prop_assert_eq!(e.code, "malformed_request");
            }
        }
    }
}

thread_local! {
    /// One served fixture index per test thread.
    static SERVED: (web::Data<AppState>, String, Arc<World>) = {
        let s = served(Some("team-a"), |_| {});
        (s.state, s.team, Arc::new(s.w))
    };
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Query strings and JSON bodies: every answer is 200 or a 4xx problem.
    #[test]
    fn http_input_never_panics_or_fails_the_server(
        query in prop_oneof![mutated("query=fit+model&limit=5&toolkit=alpha,beta&mode=bm25&threshold=0.1"), noise()],
        body in prop_oneof![
            mutated(r#"{"query": "fit", "limit": 5, "repo": ["alpha"], "path_prefix": "science/"}"#),
            mutated(r#"{"doc_id": "science/alpha/README.md", "start": 1, "end": 5}"#),
            mutated(r#"{"messages": [{"role": "user", "content": "fit"}], "max_tokens": 300}"#),
            noise(),
        ],
        route in prop::sample::select(vec!["/search", "/retrieve", "/retrieve/batch", "/context"]),
    ) {
        let (state, token, _w) = SERVED.with(|s| (s.0.clone(), s.1.clone(), Arc::clone(&s.2)));
        let sys = actix_web::rt::System::new();
        sys.block_on(async {
            let app = atest::init_service(app(state)).await;
            let encoded: String = url::form_urlencoded::byte_serialize(query.as_bytes()).collect();
            for uri in [format!("/search?{query}"), format!("/tree?prefix={encoded}")] {
                let Ok(req) = std::panic::catch_unwind(|| {
                    atest::TestRequest::get().uri(&uri).insert_header(bearer(&token)).to_request()
                }) else {
                    // Not a URI at all: no server would receive it.
                    continue;
                };
                let (st, _, problem) = parts(atest::call_service(&app, req).await).await;
                prop_assert!(st == StatusCode::OK || st.is_client_error(), "{uri}: {st} {problem}");
                if st != StatusCode::OK {
                    prop_assert!(problem["code"].is_string(), "{problem}");
                }
            }
            let req = atest::TestRequest::post()
                .uri(route)
                .insert_header(bearer(&token))
                .insert_header(("content-type", "application/json"))
                .set_payload(body.clone())
                .to_request();
            let (st, _, problem) = parts(atest::call_service(&app, req).await).await;
            prop_assert!(st == StatusCode::OK || st.is_client_error(), "{route}: {st} {problem}");
            if st != StatusCode::OK {
                prop_assert!(problem["code"].is_string(), "{problem}");
            }
            Ok(())
        })?;
    }
}
