//! Filters never silently match nothing (issue 58): a comma list is several
//! values on every connector, an unknown toolkit, repository, category, ref,
//! doctype or path prefix is refused naming its field and the values the
//! caller may use (a hidden repository's looks exactly like an unknown
//! one), and the CLI's text is plain in a pipe, its focus lines first.

use crate::fixtures::{cairn, stderr, stdout};
use crate::http::{bearer, parts, served};
use actix_web::http::StatusCode;
use actix_web::test as atest;
use serde_json::{Value, json};

/// The doctypes of a search answer's hits, in order.
fn doctypes(answer: &Value) -> Vec<&str> {
    answer["hits"]
        .as_array()
        .expect("hits")
        .iter()
        .filter_map(|h| h["doctype"].as_str())
        .collect()
}

#[actix_web::test]
async fn filters_take_comma_lists_and_refuse_what_matches_nothing() {
    let s = served(Some("team-a"), |_| {});
    let app = atest::init_service(cairn_serve::http::app(s.state.clone(), None)).await;
    let ask = |uri: &str, token: &str| {
        atest::TestRequest::get()
            .uri(uri)
            .insert_header(bearer(token))
    };

    // A comma list in a JSON body and in a query string: two doctypes.
    let body = json!({"query": "alpha beta", "doctype": "readme,code", "limit": 20});
    let req = atest::TestRequest::post()
        .uri("/search")
        .insert_header(bearer(&s.team))
        .set_json(body);
    let (status, _, v) = parts(atest::call_service(&app, req.to_request()).await).await;
    assert_eq!(status, StatusCode::OK, "{v}");
    let kinds = doctypes(&v);
    assert!(
        kinds.contains(&"readme") && kinds.contains(&"code"),
        "{kinds:?}"
    );
    assert!(
        kinds.iter().all(|k| ["readme", "code"].contains(k)),
        "{kinds:?}"
    );

    // Unknown values: 422 naming the field and listing the caller's own.
    let refused = |v: &Value, field: &str| {
        assert_eq!(v["code"], "invalid_argument", "{v}");
        assert_eq!(v["field"], field, "{v}");
        v["detail"].as_str().unwrap_or("").to_owned()
    };
    for (uri, field) in [
        ("/search?query=x&toolkit=nosuch", "toolkit"),
        ("/search?query=x&repo=nosuch", "repo"),
        ("/search?query=x&category=nosuch", "category"),
        ("/search?query=x&ref=nosuch", "ref"),
        ("/search?query=x&doctype=nosuch", "doctype"),
        ("/search?query=x&path_prefix=tools/nosuch/", "path_prefix"),
        ("/grep?pattern=x&toolkit=nosuch", "toolkit"),
        ("/definitions?name=fit_model&toolkit=nosuch", "toolkit"),
    ] {
        let (status, _, v) =
            parts(atest::call_service(&app, ask(uri, &s.team).to_request()).await).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{uri}: {v}");
        refused(&v, field);
    }
    // A toolkit the caller may not see is refused exactly as an unknown one.
    let mut seen = Vec::new();
    for toolkit in ["alpha", "zzz"] {
        let uri = format!("/search?query=x&toolkit={toolkit}");
        let res = atest::call_service(&app, ask(&uri, &s.reader).to_request()).await;
        seen.push(parts(res).await.2);
    }
    let (hidden, unknown) = (&seen[0], &seen[1]);
    let (h, u) = (refused(hidden, "toolkit"), refused(unknown, "toolkit"));
    assert_eq!(h.replace("\"alpha\"", "\"zzz\""), u);
    assert!(u.contains("beta") && !u.contains("alpha"), "{u}");
    // The group's member may use it.
    let (status, _, v) = parts(
        atest::call_service(
            &app,
            ask("/search?query=fit&toolkit=alpha", &s.team).to_request(),
        )
        .await,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{v}");
}

#[test]
fn the_cli_takes_comma_lists_refuses_unknown_values_and_prints_plain_text() {
    let w = crate::fixtures::World::new();
    assert!(w.build("out", &[]).status.success());
    let idx = w.path("out");
    let (idx, model) = (idx.to_str().expect("utf8"), w.model.to_str().expect("utf8"));
    let run = |extra: &[&str]| {
        let mut args = vec![
            "search",
            "fit_model light curves",
            "--index",
            idx,
            "--model-dir",
            model,
        ];
        args.extend_from_slice(extra);
        cairn(&args)
    };
    let o = run(&["--doctype", "code,notebook", "--json", "--limit", "20"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).expect("json");
    let kinds = doctypes(&v);
    assert!(
        !kinds.is_empty() && kinds.iter().all(|k| ["code", "notebook"].contains(k)),
        "{kinds:?}"
    );
    let o = run(&["--toolkit", "nosuch"]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    let e = stderr(&o);
    assert!(e.contains("toolkit") && e.contains("alpha, beta"), "{e}");
    // Piped: no highlight marks, and each hit's focus first.
    let o = run(&[]);
    let text = stdout(&o);
    assert!(!text.contains("**"), "{text}");
    let first = text.lines().next().unwrap_or("");
    assert!(
        first.contains("science/alpha/src/alpha/core.py:") && first.contains(" (in "),
        "{first}"
    );
}
