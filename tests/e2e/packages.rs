//! The packages clients install from (issue 61), checked with each
//! ecosystem's own tool: the Claude Code plugin and its marketplace
//! (`claude plugin validate`), the Gemini CLI extension (`gemini extensions
//! validate`), and the MCP bundle `scripts/package.sh` makes (validated and
//! packed by the official `mcpb` CLI, then unpacked and its server started
//! as a host would start it); the registry's server.json written for those
//! bundles; every version the same as the workspace's.

use crate::fixtures::{World, stderr, stdout};
use rmcp::ServiceExt;
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn json(path: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(root().join(path)).expect(path)).expect(path)
}

/// The tool `name` from scripts/client-tools.sh, when installed (or required).
fn tool(name: &str) -> Option<PathBuf> {
    let path = root().join("target/clients/node_modules/.bin").join(name);
    crate::fixtures::tool_present(
        path.is_file(),
        "CAIRN_REQUIRE_CLIENT_TOOLS",
        "scripts/client-tools.sh",
    )
    .then_some(path)
}

#[test]
fn the_plugin_marketplace_and_extension_carry_the_version_and_pass_their_validators() {
    let version = env!("CARGO_PKG_VERSION");
    let plugin = json(".claude-plugin/plugin.json");
    let market = json(".claude-plugin/marketplace.json");
    let gemini = json("gemini-extension.json");
    assert_eq!(plugin["version"], version);
    assert_eq!(
        (
            &market["metadata"]["version"],
            &market["plugins"][0]["version"]
        ),
        (&Value::from(version), &Value::from(version))
    );
    assert_eq!(gemini["version"], version);
    for servers in [&plugin["mcpServers"], &gemini["mcpServers"]] {
        assert_eq!(servers["cairn"]["command"], "cairn");
        assert_eq!(servers["cairn"]["args"], serde_json::json!(["mcp"]));
    }
    let context = gemini["contextFileName"].as_str().expect("context file");
    assert_eq!(
        std::fs::read_to_string(root().join(context)).expect("skill"),
        crate::fixtures::stdout(&crate::fixtures::cairn(&["skill"]))
    );
    let Some(claude) = tool("claude") else { return };
    let home = tempfile::tempdir().expect("home");
    for target in [root(), root().join(".claude-plugin/marketplace.json")] {
        let o = Command::new(&claude)
            .args(["plugin", "validate"])
            .arg(&target)
            .env("HOME", home.path())
            .output()
            .expect("claude");
        assert!(
            o.status.success() && stdout(&o).contains("Validation passed"),
            "{}: {}{}",
            target.display(),
            stdout(&o),
            stderr(&o)
        );
    }
    let Some(gemini_cli) = tool("gemini") else {
        return;
    };
    let o = Command::new(gemini_cli)
        .args(["extensions", "validate"])
        .arg(root())
        .env("HOME", home.path())
        .output()
        .expect("gemini");
    assert!(
        o.status.success()
            && format!("{}{}", stdout(&o), stderr(&o)).contains("successfully validated"),
        "{}{}",
        stdout(&o),
        stderr(&o)
    );
}

#[test]
fn the_mcp_bundle_is_packed_by_mcpb_and_its_server_starts_as_a_host_starts_it() {
    let Some(mcpb) = tool("mcpb") else { return };
    let dist = tempfile::tempdir().expect("dist");
    let target = "x86_64-unknown-linux-gnu";
    let o = Command::new("bash")
        .arg(root().join("scripts/package.sh"))
        .args([env!("CARGO_BIN_EXE_cairn"), target])
        .arg(dist.path())
        .env("MCPB", &mcpb)
        .env("CAIRN_REQUIRE_MCPB", "1")
        .output()
        .expect("package.sh");
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    let bundle = dist.path().join(format!("cairn-{target}.mcpb"));
    assert!(
        bundle.is_file()
            && dist
                .path()
                .join(format!("cairn-{target}.mcpb.sha256"))
                .is_file()
    );
    let unpacked = dist.path().join("unpacked");
    let o = Command::new(&mcpb)
        .arg("unpack")
        .arg(&bundle)
        .arg(&unpacked)
        .output()
        .expect("mcpb unpack");
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    let manifest: Value = serde_json::from_str(
        &std::fs::read_to_string(unpacked.join("manifest.json")).expect("manifest"),
    )
    .expect("json");
    assert_eq!(
        (
            manifest["version"].as_str(),
            manifest["server"]["type"].as_str()
        ),
        (Some(env!("CARGO_PKG_VERSION")), Some("binary"))
    );

    // The host's substitutions, then the server it starts, with a real client.
    let w = World::new();
    assert!(w.build("out", &[]).status.success());
    let sub = |s: &str| {
        s.replace("${__dirname}", unpacked.to_str().expect("utf8"))
            .replace(
                "${user_config.index}",
                w.path("out").to_str().expect("utf8"),
            )
    };
    let config = &manifest["server"]["mcp_config"];
    let command = sub(config["command"].as_str().expect("command"));
    let args: Vec<String> = config["args"]
        .as_array()
        .expect("args")
        .iter()
        .filter_map(Value::as_str)
        .map(sub)
        .collect();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&command)
            .expect("binary")
            .permissions()
            .mode();
        assert!(mode & 0o100 != 0, "the bundled binary is executable");
    }
    let mut line = vec![command];
    line.extend(args);
    serves_over_stdio(&line, &w.model);

    // The registry's server.json for these bundles, as its format documents it.
    let o = Command::new("python3")
        .arg(root().join("scripts/registry-json.py"))
        .arg(dist.path())
        .output()
        .expect("python3");
    assert!(o.status.success(), "{}", stderr(&o));
    let server: Value = serde_json::from_str(
        &std::fs::read_to_string(dist.path().join("server.json")).expect("server.json"),
    )
    .expect("json");
    check_server_json(&server, &bundle);
}

/// The registry's documented rules for server.json: a reverse-DNS name
/// with one slash, a description of 1 to 100 characters, a version that is
/// not a range or `latest`, and each package's type, identifier, transport
/// and (for a bundle) its file's sha256.
fn check_server_json(server: &Value, bundle: &Path) {
    let name = server["name"].as_str().expect("name");
    let (namespace, short) = name.split_once('/').expect("one slash");
    assert!(
        namespace.starts_with("io.github.") && !short.is_empty() && !short.contains('/'),
        "{name}"
    );
    let description = server["description"].as_str().expect("description");
    assert!(
        (1..=100).contains(&description.chars().count()),
        "{description}"
    );
    assert_eq!(server["version"], env!("CARGO_PKG_VERSION"));
    assert!(
        server["$schema"]
            .as_str()
            .is_some_and(|s| s.ends_with("/server.schema.json"))
    );
    let packages = server["packages"].as_array().expect("packages");
    let mine = packages
        .iter()
        .find(|p| {
            p["identifier"]
                .as_str()
                .is_some_and(|i| i.ends_with(&*bundle.file_name().expect("name").to_string_lossy()))
        })
        .expect("the bundle is a package");
    assert_eq!(
        (
            mine["registryType"].as_str(),
            mine["transport"]["type"].as_str()
        ),
        (Some("mcpb"), Some("stdio"))
    );
    assert!(
        mine["identifier"]
            .as_str()
            .is_some_and(|i| i.starts_with("https://github.com/")),
        "{mine}"
    );
    let sha = sha2::Digest::finalize(<sha2::Sha256 as sha2::Digest>::new_with_prefix(
        std::fs::read(bundle).expect("bundle"),
    ));
    assert_eq!(mine["fileSha256"], hex::encode(sha));
}

/// Starts `line` (a command and its arguments, as a client's configuration
/// names them) with the fixture model, as an MCP client would, and checks
/// that it answers `tools/list` with `search_passages`.
pub fn serves_over_stdio(line: &[String], model: &std::path::Path) {
    crate::mcp::runtime().block_on(async {
        let cmd = tokio::process::Command::new(&line[0]).configure(|c| {
            c.args(&line[1..])
                .env("CAIRN_MODEL_DIR", model)
                .env("CAIRN_LOG", "warn")
                .current_dir(std::env::temp_dir())
                .stderr(std::process::Stdio::null());
        });
        let client =
            ().serve(TokioChildProcess::new(cmd).expect("spawn"))
                .await
                .expect("initialize");
        let tools = client.list_all_tools().await.expect("tools/list");
        assert!(
            tools.iter().any(|t| t.name == "search_passages"),
            "{line:?}"
        );
        client.cancel().await.expect("close");
    });
}
