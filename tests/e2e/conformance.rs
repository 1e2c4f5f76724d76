//! The official MCP conformance suite (`@modelcontextprotocol/conformance`,
//! npm) against `cairn serve`'s `/mcp` on the fixture index: every active
//! server scenario passes except those listed, with their reasons, in
//! tests/mcp-conformance-expected-failures.yml (the suite's own fixture
//! tools), and no tool schema draws a validator's warning.
//!
//! `scripts/mcp-conformance.sh` installs the suite and Node 22 under
//! target/conformance. Without them the test says so and passes, unless
//! `CAIRN_REQUIRE_MCP_CONFORMANCE=1` (set by `.ci/run`) makes that a failure.

use crate::fixtures::World;
use crate::serve_process::Server;
use std::path::PathBuf;
use std::process::Command;

fn suite() -> Option<PathBuf> {
    let bin =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/conformance/node_modules/.bin");
    let found = bin.join("conformance").is_file() && bin.join("node").is_file();
    crate::fixtures::tool_present(
        found,
        "CAIRN_REQUIRE_MCP_CONFORMANCE",
        "scripts/mcp-conformance.sh",
    )
    .then_some(bin)
}

#[test]
fn the_official_mcp_conformance_scenarios_pass() {
    let Some(bin) = suite() else {
        return;
    };
    let w = World::new();
    assert!(w.build("out", &[]).status.success());
    // The suite connects without credentials, and fast: public reads, no
    // anonymous budget.
    let s = Server::start(&w, "out", &["--public-read", "--anonymous-rate-limit", "0"]);
    let expected = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/mcp-conformance-expected-failures.yml");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let o = Command::new(bin.join("conformance"))
        .args(["server", "--url", &s.url("/mcp"), "--expected-failures"])
        .arg(&expected)
        .arg("--output-dir")
        .arg(w.path("conformance"))
        .env("PATH", path)
        .output()
        .expect("run the conformance suite");
    let out = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.status.success(), "conformance failed:\n{out}");
    for must_pass in [
        "server-initialize",
        "logging-set-level",
        "ping",
        "tools-list",
        "resources-list",
    ] {
        assert!(
            out.lines()
                .any(|l| l.contains(must_pass) && l.contains("✓")),
            "{must_pass} did not pass:\n{out}"
        );
    }
    assert!(!out.contains("unknown format"), "a schema warning:\n{out}");
}
