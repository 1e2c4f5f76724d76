//! Cited lines inline (MCP Apps): `search_passages`, `retrieve` and `fetch`
//! name cairn's `ui://` view; the view, read as a resource, is shown in a
//! real Chromium by the official host side (`AppBridge` from
//! `@modelcontextprotocol/ext-apps`, bundled by scripts/mcp-apps-host.sh),
//! which sends it real tool results; it renders the cited lines with the
//! focus marked, passes axe, and requests nothing from any host.
//!
//! Without Chromium or the bundled host the test says so and passes, unless
//! `CAIRN_REQUIRE_BROWSER=1` / `CAIRN_REQUIRE_MCP_APPS=1` (set by `.ci/run`).

use crate::browser::Browser;
use crate::fixtures::World;
use crate::mcp::{call, runtime, stdio_client};
use rmcp::model::ReadResourceRequestParams;
use serde_json::{Value, json};
use std::path::PathBuf;

const VIEW: &str = "ui://cairn/passage.html";

fn host_page() -> Option<PathBuf> {
    let page = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/mcp-apps/host.html");
    crate::fixtures::tool_present(
        page.is_file(),
        "CAIRN_REQUIRE_MCP_APPS",
        "scripts/mcp-apps-host.sh",
    )
    .then_some(page)
}

#[test]
fn the_official_host_shows_cairn_s_cited_lines_inline() {
    let w = World::new();
    // alpha belongs to team-a: a stdio session sees it (the local user), so
    // the access check lives in the HTTP tests; here, what is rendered is
    // exactly what the tool answered.
    assert!(w.build("out", &[]).status.success());
    let (tools, view, searched, retrieved) = runtime().block_on(async {
        let client = stdio_client(&w, "out").await;
        let tools = client.list_all_tools().await.expect("tools");
        let view = client
            .read_resource(ReadResourceRequestParams::new(VIEW))
            .await
            .expect("the view");
        let searched = call(
            &client,
            "search_passages",
            json!({"query": "magnification of the model", "limit": 3}),
        )
        .await;
        let retrieved = call(
            &client,
            "retrieve",
            json!({"doc_id": "science/alpha/src/alpha/core.py", "start": 5, "end": 7}),
        )
        .await;
        // A search that finds nothing still answers (with no focus lines to read).
        let nothing = call(
            &client,
            "search_passages",
            json!({"query": "zzqxjvk", "mode": "bm25"}),
        )
        .await;
        assert_eq!(nothing.is_error, Some(false), "{nothing:?}");
        assert_eq!(
            nothing.structured_content.as_ref().expect("s")["hits"],
            json!([])
        );
        client.cancel().await.expect("close");
        (tools, view, searched, retrieved)
    });
    for t in &tools {
        let named = t
            .meta
            .as_ref()
            .and_then(|m| m.0.get("ui"))
            .and_then(|ui| ui.get("resourceUri"))
            .and_then(Value::as_str);
        match ["search_passages", "retrieve", "fetch"].contains(&t.name.as_ref()) {
            true => assert_eq!(named, Some(VIEW), "{}", t.name),
            false => assert_eq!(named, None, "{}", t.name),
        }
    }
    let view = serde_json::to_value(&view).expect("json");
    let contents = &view["contents"][0];
    assert_eq!(
        contents["mimeType"], "text/html;profile=mcp-app",
        "{contents}"
    );
    assert_eq!(contents["_meta"]["ui"]["csp"]["connectDomains"], json!([]));
    assert_eq!(contents["_meta"]["ui"]["csp"]["resourceDomains"], json!([]));
    let html = contents["text"].as_str().expect("html").to_owned();

    let Some(page) = host_page() else {
        return;
    };
    let Some(mut browser) = Browser::launch() else {
        return;
    };
    let axe = std::env::var("CAIRN_AXE_JS")
        .ok()
        .map(|p| std::fs::read_to_string(p).expect("CAIRN_AXE_JS readable"));
    for (what, input, result) in [
        (
            "search_passages",
            json!({"query": "magnification of the model"}),
            &searched,
        ),
        (
            "retrieve",
            json!({"doc_id": "science/alpha/src/alpha/core.py", "start": 5, "end": 7}),
            &retrieved,
        ),
    ] {
        browser.open(&format!("file://{}", page.display()));
        let result_json = serde_json::to_value(result).expect("json");
        browser.eval(&format!(
            "startHost({}, {}, {}).then(() => true)",
            json!(html),
            input,
            result_json
        ));
        browser.until("window.hostState === 'rendered'");
        let doc = "document.querySelector('iframe').contentDocument";
        let shown = browser.eval(&format!(
            "Array.from({doc}.querySelectorAll('.hit')).map(h => ({{link: h.querySelector('h2 a').getAttribute('href'), title: h.querySelector('h2').textContent, rows: Array.from(h.querySelectorAll('tr')).map(r => ({{n: r.querySelector('.ln').textContent, code: r.querySelector('code').textContent, focus: r.classList.contains('focus')}}))}}))"
        ));
        let shown = shown.as_array().cloned().unwrap_or_default();
        let answer = result.structured_content.as_ref().expect("structured");
        if what == "search_passages" {
            let hits = answer["hits"].as_array().expect("hits");
            assert_eq!(shown.len(), hits.len(), "{what}: {shown:?}");
            for (s, h) in shown.iter().zip(hits) {
                assert_eq!(s["link"], h["permalink"], "{what}");
                let label = format!(
                    "{}:{}-{}",
                    h["doc_id"].as_str().expect("doc"),
                    h["focus_start"],
                    h["focus_end"]
                );
                assert!(
                    s["title"].as_str().is_some_and(|t| t.starts_with(&label)),
                    "{what}: {s} vs {label}"
                );
                let rows = s["rows"].as_array().expect("rows");
                assert!(
                    !rows.is_empty() && rows.iter().all(|r| r["focus"] == true),
                    "{what}: focus marked: {s}"
                );
                assert_eq!(rows[0]["n"], h["focus_start"].to_string(), "{what}");
            }
        } else {
            let rows = shown[0]["rows"].as_array().expect("rows");
            let numbers: Vec<&str> = rows.iter().filter_map(|r| r["n"].as_str()).collect();
            assert_eq!(numbers, ["5", "6", "7"], "{shown:?}");
            assert_eq!(rows[0]["code"], "def fit_model(data, t_E=1.0):");
            assert_eq!(shown[0]["link"], answer["permalink"]);
        }
        if let Some(axe) = &axe {
            // Into the view's own document, as a script element: its policy
            // allows inline script, not eval.
            browser.eval(&format!(
                "(() => {{ const d = {doc}; const s = d.createElement('script'); s.textContent = {}; d.head.append(s); return true; }})()",
                json!(axe)
            ));
            let v = browser.eval(&format!(
                "document.querySelector('iframe').contentWindow.axe.run({doc}, {{runOnly: ['wcag2a', 'wcag2aa', 'best-practice']}}).then(r => r.violations.map(v => v.id + ': ' + v.nodes[0].html))"
            ));
            assert_eq!(v, json!([]), "{what}: axe");
        }
    }
    // Nothing but the host's own files was requested: the view loads nothing.
    let fetched: Vec<&String> = browser
        .requests
        .iter()
        .filter(|u| {
            !u.starts_with("file://") && !u.starts_with("about:") && !u.starts_with("data:")
        })
        .collect();
    assert!(fetched.is_empty(), "the view requested {fetched:?}");
}
