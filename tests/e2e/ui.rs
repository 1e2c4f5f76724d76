//! The web pages in process (the browser drives them in `browser.rs`): what an
//! anonymous visitor and a group member see, markup from data always escaped,
//! HTML problems for browsers and problem+json for API clients, `--no-ui`.

use crate::http::{bearer, served};
use actix_web::http::StatusCode;
use actix_web::test;
use cairn_serve::server::app;

/// Status, content type and body text of a browser's GET (with a bearer token when given).
macro_rules! page {
    ($app:expr, $uri:expr, $token:expr) => {{
        let mut req = test::TestRequest::get()
            .uri(&$uri)
            .insert_header(("Accept", "text/html,application/xhtml+xml"));
        let token: Option<&str> = $token;
        if let Some(t) = token {
            req = req.insert_header(bearer(t));
        }
        let res = test::call_service(&$app, req.to_request()).await;
        let status = res.status();
        let ct = res
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned();
        let body = String::from_utf8_lossy(&test::read_body(res).await).into_owned();
        (status, ct, body)
    }};
}

#[actix_web::test]
async fn anonymous_visitors_see_public_documents_and_members_their_groups() {
    let s = served(Some("team-a"), |_| {});
    let app = test::init_service(app(s.state.clone())).await;
    // alpha is team-a's; beta is public.
    let (status, ct, body) = page!(app, "/?q=magnification", None);
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(ct.starts_with("text/html"), "{ct}");
    assert!(body.contains("tools/beta/lib/beta.cpp"), "{body}");
    assert!(!body.contains("science/alpha"), "{body}");
    // The filter choices come from what the visitor may see.
    assert!(!body.contains("<option value=\"alpha\""), "{body}");
    let (_, _, body) = page!(app, "/?q=magnification", Some(s.team.as_str()));
    assert!(body.contains("science/alpha/"), "{body}");
    // A passage of a group's document is not found for an anonymous visitor.
    let (status, ct, body) = page!(app, "/doc/science/alpha/src/alpha/core.py?lines=5-7", None);
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert!(ct.starts_with("text/html"), "a browser gets a page: {ct}");
    let (status, _, body) = page!(
        app,
        "/doc/science/alpha/src/alpha/core.py?lines=5-7",
        Some(s.team.as_str())
    );
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(body.contains("<tr id=\"L5\" class=\"cited\">"), "{body}");
    assert!(body.contains("href=\"#L5\""), "{body}");
    // The tree hides alpha too.
    let (_, _, body) = page!(app, "/browse/", None);
    assert!(
        body.contains("/browse/tools") && !body.contains("/browse/science"),
        "{body}"
    );
    // The API stays closed to anonymous callers.
    let res = test::call_service(
        &app,
        test::TestRequest::get().uri("/search?query=x").to_request(),
    )
    .await;
    assert_eq!(res.status(), StatusCode::UNAUTHORIZED);
}

#[actix_web::test]
async fn markup_in_every_field_is_text() {
    let s = served(None, |_| {});
    let app = test::init_service(app(s.state.clone())).await;
    let evil = "%3Cscript%3Ealert(1)%3C%2Fscript%3E";
    for uri in [
        format!("/?q={evil}"),
        format!("/?q=fit&toolkit={evil}"),
        format!("/?q=fit&doctype={evil}"),
        format!("/?q=fit&repo={evil}&scores=1"),
        format!("/doc/science/alpha/{evil}.py?lines=1-2"),
        format!("/doc/science/alpha/src/alpha/core.py?lines={evil}"),
        format!("/doc/science/alpha/src/alpha/core.py?lines=1-2&before={evil}"),
        format!("/browse/{evil}"),
        format!("/?q=fit&partial=1&toolkit={evil}"),
    ] {
        let (status, _, body) = page!(app, uri, Some(s.reader.as_str()));
        assert!(!body.contains("<script>alert"), "{uri} ({status}): {body}");
        assert!(status.as_u16() < 500, "{uri}: {status}");
        // The only scripts are the page's own file.
        assert!(body.matches("<script").count() <= 1, "{uri}: {body}");
    }
    // The query is shown back, escaped.
    let (_, _, body) = page!(app, format!("/?q={evil}"), Some(s.reader.as_str()));
    assert!(
        body.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
        "{body}"
    );
    // A bad span names its field.
    let (status, _, body) = page!(
        app,
        "/doc/science/alpha/src/alpha/core.py?lines=9-2",
        Some(s.reader.as_str())
    );
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(body.contains("lines: lines must be START-END"), "{body}");
}

/// A file name holding `+` (or `%`-encoded in its link) reaches its page
/// and its folder's listing: actix leaves `%2B` encoded, the page decodes it
/// once, and a doubly encoded name is still refused, never decoded twice.
#[actix_web::test]
async fn names_with_plus_signs_reach_their_pages() {
    let s = crate::http::served_with(
        None,
        vec![(
            "src/c++/x+y.py",
            b"def plus_one(x):\n    return x + 1\n".to_vec(),
        )],
        |_| {},
    );
    let app = test::init_service(app(s.state.clone())).await;
    let reader = Some(s.reader.as_str());
    let (status, _, body) = page!(
        app,
        "/doc/science/alpha/src/c%2B%2B/x%2By.py?lines=1-2",
        reader
    );
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(body.contains("plus_one"), "{body}");
    let (status, _, body) = page!(app, "/browse/science/alpha/src/c%2B%2B/", reader);
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(
        body.contains("href=\"/doc/science/alpha/src/c%2B%2B/x%2By.py"),
        "the listing links the file encoded: {body}"
    );
    let (status, _, body) = page!(app, "/doc/science/alpha/src/c%252B%252B/x%252By.py", reader);
    assert!(status.is_client_error(), "{status}: {body}");
    assert!(!body.contains("plus_one"), "{body}");
}

#[actix_web::test]
async fn browsers_get_pages_and_api_clients_problem_json() {
    let s = served(None, |_| {});
    let app = test::init_service(app(s.state.clone())).await;
    let (status, ct, body) = page!(app, "/no/such/page", Some(s.reader.as_str()));
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(
        ct.starts_with("text/html") && body.contains("<h1>404 Not Found</h1>"),
        "{ct} {body}"
    );
    let res = test::call_service(
        &app,
        test::TestRequest::get()
            .uri("/no/such/page")
            .insert_header(bearer(&s.reader))
            .to_request(),
    )
    .await;
    assert_eq!(
        res.headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok()),
        Some("application/problem+json")
    );
    // Pages carry a policy that lets them load nothing from elsewhere.
    let res = test::call_service(&app, test::TestRequest::get().uri("/").to_request()).await;
    let csp = res
        .headers()
        .get("content-security-policy")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    assert!(
        csp.contains("default-src 'none'") && csp.contains("script-src 'self'"),
        "{csp}"
    );
    assert_eq!(
        res.headers()
            .get("referrer-policy")
            .and_then(|v| v.to_str().ok()),
        Some("same-origin")
    );
    // The API reference is rendered from the OpenAPI document.
    let (status, _, body) = page!(app, "/api", None);
    assert_eq!(status, StatusCode::OK);
    assert!(
        body.contains("<code>POST /search</code>") && body.contains("curl -X POST"),
        "{body}"
    );
    // Every asset is served from the binary, and a first page load is small.
    let (_, _, index) = page!(app, "/?q=fit_model", Some(s.reader.as_str()));
    let (_, css_ct, css) = page!(app, "/ui/style.css", None);
    let (_, js_ct, js) = page!(app, "/ui/app.js", None);
    assert!(css_ct.starts_with("text/css") && js_ct.starts_with("text/javascript"));
    assert!(
        index.len() + css.len() + js.len() < 100_000,
        "{}",
        index.len() + css.len() + js.len()
    );
    assert!(
        !format!("{index}{css}{js}").contains("https://cdn"),
        "no CDN"
    );
}

#[actix_web::test]
async fn no_ui_serves_no_pages() {
    let s = served(None, |o| o.ui = false);
    let app = test::init_service(app(s.state.clone())).await;
    for uri in [
        "/",
        "/api",
        "/browse/",
        "/ui/app.js",
        "/doc/science/alpha/README.md?lines=1-2",
    ] {
        let res = test::call_service(
            &app,
            test::TestRequest::get()
                .uri(uri)
                .insert_header(bearer(&s.reader))
                .to_request(),
        )
        .await;
        assert_eq!(res.status(), StatusCode::NOT_FOUND, "{uri}");
    }
    // Without pages, an unauthenticated `/` is refused like any other route.
    let res = test::call_service(&app, test::TestRequest::get().uri("/").to_request()).await;
    assert_eq!(res.status(), StatusCode::UNAUTHORIZED);
}

#[actix_web::test]
async fn a_token_signs_in_once_and_the_cookie_holds_only_a_session() {
    let s = served(Some("team-a"), |_| {});
    let app = test::init_service(app(s.state.clone())).await;
    let login = |token: &str| {
        test::TestRequest::post()
            .uri("/login")
            .insert_header(("content-type", "application/x-www-form-urlencoded"))
            .set_payload(format!("token={token}"))
            .to_request()
    };
    // A wrong token: refused on the page, no cookie.
    let res = test::call_service(&app, login("cairn_wrong")).await;
    assert_eq!(res.status(), StatusCode::UNAUTHORIZED);
    assert!(res.headers().get("set-cookie").is_none());
    // The team's token: a session cookie, HttpOnly and SameSite=Strict, holding neither the token nor its hash.
    let res = test::call_service(&app, login(&s.team)).await;
    assert_eq!(res.status(), StatusCode::SEE_OTHER);
    let set = res
        .headers()
        .get("set-cookie")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    assert!(
        set.contains("HttpOnly") && set.contains("SameSite=Strict"),
        "{set}"
    );
    let session = set.split(';').next().unwrap_or("").to_owned();
    let value = session.split_once('=').map(|(_, v)| v).unwrap_or("");
    assert_eq!(value.len(), 64, "{set}");
    assert!(!set.contains(&s.team));
    let store = std::fs::read_to_string(s.w.path("tokens.json")).expect("tokens");
    assert!(!store.contains(value), "the cookie is not the stored hash");
    // With the cookie, pages show the team's documents; the JSON API still wants the token.
    let with_cookie = |uri: &str| {
        test::TestRequest::get()
            .uri(uri)
            .insert_header(("cookie", session.clone()))
            .insert_header(("Accept", "text/html"))
            .to_request()
    };
    let res = test::call_service(&app, with_cookie("/?q=magnification")).await;
    let body = String::from_utf8_lossy(&test::read_body(res).await).into_owned();
    assert!(body.contains("science/alpha/"), "{body}");
    let res = test::call_service(&app, with_cookie("/search?query=magnification")).await;
    assert_eq!(res.status(), StatusCode::UNAUTHORIZED);
    let res = test::call_service(&app, with_cookie("/login")).await;
    let body = String::from_utf8_lossy(&test::read_body(res).await).into_owned();
    assert!(
        body.contains("Signed in as <strong>team</strong>"),
        "{body}"
    );
    // Revoking the token ends the session.
    cairn_serve::auth::TokenStore::new(s.w.path("tokens.json"))
        .revoke("team")
        .expect("revoke");
    std::thread::sleep(std::time::Duration::from_millis(20));
    s.state.auth.refresh();
    let res = test::call_service(&app, with_cookie("/?q=magnification")).await;
    let body = String::from_utf8_lossy(&test::read_body(res).await).into_owned();
    assert!(!body.contains("science/alpha/"), "{body}");
    // Signing out clears the cookie.
    let res = test::call_service(
        &app,
        test::TestRequest::post()
            .uri("/logout")
            .insert_header(("cookie", session.clone()))
            .to_request(),
    )
    .await;
    assert_eq!(res.status(), StatusCode::SEE_OTHER);
    let set = res
        .headers()
        .get("set-cookie")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    assert!(
        set.contains("Max-Age=0") || set.contains("expires"),
        "{set}"
    );
    // Signing in again ends the session the browser held (session 19: it
    // stayed valid for its whole lifetime beside the new one).
    let cookie_of = |headers: &actix_web::http::header::HeaderMap| {
        headers
            .get("set-cookie")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(';').next())
            .unwrap_or("")
            .to_owned()
    };
    let first = cookie_of(test::call_service(&app, login(&s.reader)).await.headers());
    let again = test::TestRequest::post()
        .uri("/login")
        .insert_header(("content-type", "application/x-www-form-urlencoded"))
        .insert_header(("cookie", first.clone()))
        .set_payload(format!("token={}", s.reader))
        .to_request();
    let second = cookie_of(test::call_service(&app, again).await.headers());
    assert!(!second.is_empty() && second != first, "{first} / {second}");
    let signed_in = |cookie: String| {
        let app = &app;
        async move {
            let req = test::TestRequest::get()
                .uri("/login")
                .insert_header(("cookie", cookie))
                .insert_header(("Accept", "text/html"))
                .to_request();
            let body = test::read_body(test::call_service(app, req).await).await;
            String::from_utf8_lossy(&body).contains("Signed in as")
        }
    };
    assert!(!signed_in(first).await, "the first session is closed");
    assert!(signed_in(second).await, "the new one holds");
}

#[actix_web::test]
async fn hostile_page_requests_are_bounded() {
    let s = served(None, |_| {});
    let app = test::init_service(app(s.state.clone())).await;
    // A query past the search's limit is refused on the page, naming the field.
    let long = "a".repeat(5_000);
    let (status, _, body) = page!(app, format!("/?q={long}"), Some(s.reader.as_str()));
    assert_eq!(status, StatusCode::OK);
    assert!(
        body.contains("<code>query</code>: must be at most"),
        "{body}"
    );
    // Huge spans and context ask for no more than the caps allow.
    let (status, _, body) = page!(
        app,
        "/doc/science/alpha/docs/long.txt?lines=1-4000000000&before=4000000000&after=4000000000",
        Some(s.reader.as_str())
    );
    assert!(status.as_u16() < 500, "{status}");
    assert!(
        body.matches("<tr").count() <= 400 + 2 * 150,
        "{}",
        body.matches("<tr").count()
    );
    // Sign-in bodies: too large, or compressed, are refused before they are read.
    let big = test::TestRequest::post()
        .uri("/login")
        .insert_header(("content-type", "application/x-www-form-urlencoded"))
        .set_payload(format!("token={}", "x".repeat(2 << 20)))
        .to_request();
    let res = test::call_service(&app, big).await;
    assert_eq!(res.status(), StatusCode::PAYLOAD_TOO_LARGE);
    let gz = test::TestRequest::post()
        .uri("/login")
        .insert_header(("content-type", "application/x-www-form-urlencoded"))
        .insert_header(("content-encoding", "gzip"))
        .set_payload("token=x")
        .to_request();
    let res = test::call_service(&app, gz).await;
    assert_eq!(res.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
}

#[actix_web::test]
async fn a_hit_links_to_its_passage_with_the_focus_marked() {
    let s = served(None, |_| {});
    let app = test::init_service(app(s.state.clone())).await;
    let (status, _, body) = page!(app, "/?q=fit_model", Some(s.reader.as_str()));
    assert_eq!(status, StatusCode::OK, "{body}");
    // The hit's link carries its focus and opens at it.
    let href = body
        .split("class=\"hit-link\" href=\"")
        .nth(1)
        .and_then(|h| h.split('"').next())
        .unwrap_or("")
        .replace("&amp;", "&");
    assert!(href.contains("&focus=") && href.contains("#L"), "{href}");
    let (status, _, body) = page!(app, href, Some(s.reader.as_str()));
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(body.contains("class=\"cited focus\""), "{body}");
    // A focus that is not a span is refused, naming the field.
    let (status, _, body) = page!(
        app,
        "/doc/science/alpha/src/alpha/core.py?lines=1-16&focus=x",
        Some(s.reader.as_str())
    );
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(body.contains("focus: focus must be START-END"), "{body}");
}

#[actix_web::test]
async fn exact_text_lists_the_lines_that_hold_it() {
    let s = served(Some("team-a"), |_| {});
    let app = test::init_service(app(s.state.clone())).await;
    let (status, _, body) = page!(app, "/?q=FIT_MODEL&exact=1", Some(s.team.as_str()));
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(
        body.contains("name=\"exact\" value=\"1\" checked"),
        "{body}"
    );
    assert!(
        body.contains("href=\"/doc/science/alpha/src/alpha/core.py?lines=5-5&amp;focus=5-5#L5\">5</a>: def fit_model(data, t_E=1.0):"),
        "{body}"
    );
    // Hidden documents hold no lines for an anonymous visitor.
    let (_, _, body) = page!(app, "/?q=fit_model&exact=1&partial=1", None);
    assert!(!body.contains("science/alpha"), "{body}");
    assert!(body.contains("No line holds"), "{body}");
    // A passage hit that defines a name links to its line.
    let (_, _, body) = page!(app, "/?q=fit_model", Some(s.team.as_str()));
    assert!(
        body.contains("Defines <a href=\"/doc/science/alpha/src/alpha/core.py?lines="),
        "{body}"
    );
    // A scores link keeps the mode.
    let (_, _, body) = page!(app, "/?q=magnification&exact=1", Some(s.team.as_str()));
    assert!(body.contains("lines in"), "{body}");
}

#[actix_web::test]
async fn identifiers_link_to_their_definitions() {
    let s = served(None, |_| {});
    let app = test::init_service(app(s.state.clone())).await;
    let (status, _, body) = page!(
        app,
        "/doc/science/alpha/src/alpha/core.py?lines=5-7",
        Some(s.reader.as_str())
    );
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(
        body.contains("<a class=\"ident\" href=\"/def/fit_model\">fit_model</a>"),
        "{body}"
    );
    let (status, _, body) = page!(app, "/def/fit_model", Some(s.reader.as_str()));
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(
        body.contains("href=\"/doc/science/alpha/src/alpha/core.py?lines=5-7&amp;focus=5-5#L5\""),
        "{body}"
    );
    assert!(body.contains("def fit_model(data, t_E=1.0):"), "{body}");
    // Then where it is used (references: whole words).
    assert!(body.contains("<h2>Where it is used</h2>"), "{body}");
    assert!(body.contains("Call fit_model on your data."), "{body}");
    let (_, _, body) = page!(app, "/def/no_such_name", Some(s.reader.as_str()));
    assert!(
        body.contains("Nothing indexed defines this name."),
        "{body}"
    );
}

#[actix_web::test]
async fn another_groups_definitions_are_never_linked_or_listed() {
    // alpha (which defines Model.magnification) is team-a's; beta is public.
    let s = served(Some("team-a"), |_| {});
    let app = test::init_service(app(s.state.clone())).await;
    let readme = "/doc/tools/beta/README.md?lines=1-3";
    let (status, _, body) = page!(app, readme, None);
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(body.contains("magnification"), "{body}");
    assert!(!body.contains("href=\"/def/magnification\""), "{body}");
    let (_, _, body) = page!(app, readme, Some(s.team.as_str()));
    assert!(body.contains("href=\"/def/magnification\""), "{body}");
    let (_, _, body) = page!(app, "/def/magnification", None);
    assert!(!body.contains("science/alpha"), "{body}");
    assert!(
        body.contains("Nothing indexed defines this name."),
        "{body}"
    );
}

#[actix_web::test]
async fn a_pdf_hit_shows_its_page_and_lines() {
    let paper = cairn_pipeline::fixtures::pdf(&[
        &[
            "Fitting light curves",
            "1 Introduction",
            "Point lenses first.",
        ],
        &[
            "2 Method",
            "Near a caustic the magnification changes fast,",
            "so contour integration refines the source boundary.",
        ],
    ]);
    let s = crate::http::served_with(None, vec![("docs/paper.pdf", paper)], |_| {});
    let app = test::init_service(app(s.state.clone())).await;
    let (status, _, body) = page!(
        app,
        "/?q=contour+integration+caustic&doctype=paper",
        Some(s.reader.as_str())
    );
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(body.contains("science/alpha/docs/paper.pdf"), "{body}");
    // Page 2 holds the method; its lines are counted from the page's first.
    assert!(
        body.contains("<span class=\"tag page\">p. 2, lines 1–"),
        "{body}"
    );
}
