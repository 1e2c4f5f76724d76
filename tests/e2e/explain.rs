//! `POST /explain` and the `/errors` page over a fixture index whose
//! `check_t_E` (in a module added for these tests) raises: the raise site and frame for a member, nothing for a
//! caller who may not see the code, and clear answers to hostile text.

use crate::http::{bearer, parts, served_with};
use actix_web::http::StatusCode;
use actix_web::test;
use cairn_serve::server::app;
use serde_json::{Value, json};

/// A module of alpha that raises (committed beside the fixture's files).
pub const UNITS_PY: (&str, &[u8]) = (
    "src/alpha/units.py",
    b"\"\"\"Unit checks.\"\"\"\n\n\ndef check_t_E(t_E):\n    if t_E < 0:\n        raise ValueError(f\"t_E must be positive, got {t_E}\")\n    return t_E\n",
);

/// A traceback as Python prints it for `check_t_E(-3)`, from an installed copy.
pub const TRACEBACK: &str = "Traceback (most recent call last):\n  File \"/home/ada/fit.py\", line 3, in <module>\n    alpha.check_t_E(-3)\n  File \"/venv/lib/python3.12/site-packages/alpha/units.py\", line 6, in check_t_E\n    raise ValueError(f\"t_E must be positive, got {t_E}\")\nValueError: t_E must be positive, got -3\n";

/// The fixture index with [`UNITS_PY`] in alpha.
fn served(alpha_groups: Option<&str>) -> crate::http::Served {
    served_with(
        alpha_groups,
        vec![(UNITS_PY.0, UNITS_PY.1.to_vec())],
        |_| {},
    )
}

macro_rules! explain {
    ($app:expr, $token:expr, $body:expr) => {
        parts(
            test::call_service(
                &$app,
                test::TestRequest::post()
                    .uri("/explain")
                    .insert_header(bearer($token))
                    .set_json($body)
                    .to_request(),
            )
            .await,
        )
        .await
    };
}

#[actix_web::test]
async fn a_member_gets_the_raise_site_and_an_outsider_nothing() {
    let s = served(Some("team-a"));
    let app = test::init_service(app(s.state.clone())).await;

    let (status, _, body) = explain!(app, &s.team, json!({"text": TRACEBACK}));
    assert_eq!(status, StatusCode::OK, "{body}");
    let site = &body["raise_sites"][0];
    assert_eq!(site["doc_id"], "science/alpha/src/alpha/units.py", "{body}");
    assert_eq!(
        (site["start_line"].as_u64(), site["end_line"].as_u64()),
        (Some(6), Some(6))
    );
    assert_eq!(
        (site["exception"].as_str(), site["function"].as_str()),
        (Some("ValueError"), Some("check_t_E"))
    );
    assert_eq!(site["template"], "t_E must be positive, got {}");
    assert_eq!(site["at_frame"], true);
    assert!(
        site["permalink"]
            .as_str()
            .is_some_and(|p| p.ends_with("/src/alpha/units.py#L6-L6")),
        "{site}"
    );
    let frames = body["frames"].as_array().expect("frames");
    assert_eq!(frames.len(), 2);
    assert!(
        frames[0].get("at").is_none(),
        "the user's own script is not indexed"
    );
    assert_eq!(
        (
            frames[1]["at"]["start_line"].as_u64(),
            frames[1]["located"].as_str()
        ),
        (Some(6), Some("line"))
    );
    assert_eq!(body["parsed"]["shape"], "python-traceback");
    assert_eq!(body["insufficient_evidence"], false);
    // The version records line history: when the raising line last changed.
    assert_eq!(body["history"]["available"], true, "{}", body["history"]);
    assert!(
        site["last_changed"]["sha"]
            .as_str()
            .is_some_and(|s| s.len() == 12),
        "{site}"
    );

    // The message alone, and an installed copy whose lines moved: still found.
    let (_, _, body) = explain!(
        app,
        &s.team,
        json!({"text": "ValueError: t_E must be positive, got -3"})
    );
    assert_eq!(body["raise_sites"][0]["start_line"], 6, "{body}");
    let moved = TRACEBACK.replace("line 6,", "line 40,");
    let (_, _, body) = explain!(app, &s.team, json!({"text": moved, "version": "0.9"}));
    assert_eq!(body["frames"][1]["located"], "moved", "{body}");
    assert!(
        body["notices"].to_string().contains("you have version 0.9"),
        "{body}"
    );

    // A caller outside team-a learns nothing about alpha's code.
    let (status, _, body) = explain!(app, &s.reader, json!({"text": TRACEBACK}));
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["raise_sites"], json!([]), "{body}");
    assert!(!body.to_string().contains("science/alpha"), "{body}");
    assert_eq!(body["insufficient_evidence"], true);
}

#[actix_web::test]
async fn hostile_text_gets_a_clear_answer_never_a_500() {
    let s = served(None);
    let app = test::init_service(app(s.state.clone())).await;
    let field = |b: &Value| {
        (
            b["code"].as_str().map(str::to_owned),
            b["field"].as_str().map(str::to_owned),
        )
    };

    // Binary junk (as JSON can carry it), the empty text, and one byte over the limit.
    for text in [
        "\u{0}\u{1}\u{7f}\u{fffd}\u{fffd} ## !!".to_owned(),
        "   \n".to_owned(),
        "x".repeat(16 * 1024 + 1),
    ] {
        let (status, ct, body) = explain!(app, &s.reader, json!({"text": text}));
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert_eq!(ct, "application/problem+json");
        assert_eq!(
            field(&body),
            (Some("invalid_argument".into()), Some("text".into())),
            "{body}"
        );
    }
    // 16 KB of one line is at the limit: answered.
    let (status, _, body) = explain!(
        app,
        &s.reader,
        json!({"text": "ValueError: ".to_owned() + &"a".repeat(16 * 1024 - 12)})
    );
    assert_eq!(status, StatusCode::OK, "{body}");
    // A traceback from a package the index does not hold: said so, no guess.
    let foreign = "Traceback (most recent call last):\n  File \"/venv/site-packages/numpy/core/shape_base.py\", line 449, in stack\n    raise ValueError(\"all input arrays must have the same shape\")\nValueError: all input arrays must have the same shape\n";
    let (status, _, body) = explain!(app, &s.reader, json!({"text": foreign}));
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        (
            body["insufficient_evidence"].as_bool(),
            body["raise_sites"].as_array().map(Vec::len)
        ),
        (Some(true), Some(0)),
        "{body}"
    );
    assert!(
        body["notices"].to_string().contains("shape_base.py"),
        "{body}"
    );
    // A runaway recursion pasted whole: only the innermost 64 frames are read, and it says so.
    let mut deep = String::from("Traceback (most recent call last):\n");
    for i in 0.. {
        let frame = format!(
            "  File \"/venv/site-packages/alpha/units.py\", line {}, in check_t_E\n    check_t_E(t_E)\n",
            i % 7 + 1
        );
        if deep.len() + frame.len() + 64 > 16 * 1024 {
            break;
        }
        deep.push_str(&frame);
    }
    deep.push_str("RecursionError: maximum recursion depth exceeded\n");
    let (status, _, body) = explain!(app, &s.reader, json!({"text": deep}));
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["frames"].as_array().map(Vec::len), Some(64), "{body}");
    assert!(
        body["notices"]
            .to_string()
            .contains("the innermost 64 were read"),
        "{body}"
    );
    // Wrong shapes of arguments name their field.
    for (args, code, f) in [
        (json!({}), "malformed_request", "text"),
        (json!({"text": 3}), "malformed_request", "text"),
        (
            json!({"text": "x y", "limit": 21}),
            "invalid_argument",
            "limit",
        ),
        (
            json!({"text": "x y", "toolkit": "numpy"}),
            "invalid_argument",
            "toolkit",
        ),
        (
            json!({"text": "x y", "version": ""}),
            "invalid_argument",
            "version",
        ),
        (
            json!({"text": "x y", "verbose": true}),
            "malformed_request",
            "verbose",
        ),
    ] {
        let (_, _, body) = explain!(app, &s.reader, args.clone());
        assert_eq!(
            field(&body),
            (Some(code.into()), Some(f.into())),
            "{args}: {body}"
        );
    }
}

#[actix_web::test]
async fn the_errors_page_explains_a_pasted_traceback() {
    let s = served(None);
    let app = test::init_service(app(s.state.clone())).await;
    let form: String = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("text", TRACEBACK)
        .append_pair("toolkit", "alpha")
        .finish();
    let res = test::call_service(
        &app,
        test::TestRequest::post()
            .uri("/errors")
            .insert_header(("Accept", "text/html"))
            .insert_header(("Content-Type", "application/x-www-form-urlencoded"))
            .set_payload(form)
            .to_request(),
    )
    .await;
    assert_eq!(res.status(), StatusCode::OK);
    let html = String::from_utf8_lossy(&test::read_body(res).await).into_owned();
    assert!(html.contains("<h2>Raised at</h2>"), "{html}");
    assert!(
        html.contains("href=\"/doc/science/alpha/src/alpha/units.py?lines=6-6\""),
        "{html}"
    );
    // The pasted text comes back as text in the form, never as markup.
    assert!(
        html.contains("raise ValueError(f&quot;t_E must be positive")
            || html.contains("raise ValueError(f&#34;t_E"),
        "{html}"
    );
}

/// `cairn explain` reads the text from stdin: a traceback is answered, binary
/// junk and an oversized paste are refused with the reason and exit 2.
// `test` here is actix's; this one needs no runtime.
#[::core::prelude::v1::test]
fn the_cli_reads_a_traceback_from_stdin() {
    use std::io::Write;
    let w = crate::fixtures::World::new();
    crate::fixtures::commit(
        &w.alpha_repo(),
        &[(UNITS_PY.0, UNITS_PY.1.to_vec())],
        "units",
    );
    assert!(w.build("out", &[]).status.success());
    let run = |stdin: &[u8]| {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_cairn"))
            .args(["explain", "--index"])
            .arg(w.path("out"))
            .arg("--model-dir")
            .arg(&w.model)
            .env("CAIRN_LOG", "warn")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("spawn");
        // The child may refuse before reading all of it.
        let _ = child.stdin.take().expect("stdin").write_all(stdin);
        child.wait_with_output().expect("wait")
    };
    let out = run(TRACEBACK.as_bytes());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains(
            "raised at:\n 1. science/alpha/src/alpha/units.py:6-6  ValueError in check_t_E"
        ),
        "{text}"
    );
    for (stdin, says) in [
        (vec![0xff, 0xfe, 0x00, 0x81], "not UTF-8"),
        (vec![b'x'; 16 * 1024 + 1], "more than 16384 bytes"),
    ] {
        let out = run(&stdin);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains(says), "{err}");
    }
}
