//! Builds that outgrow one machine (shards merged into the same index) and
//! shippable packs (checked before anything is served).

use crate::fixtures::{World, cairn, current_dir, stderr, stdout};
use crate::serve_process::{Server, get_json};
use std::path::Path;

fn build_args<'a>(
    w: &'a World,
    config: &'a str,
    model: &'a str,
    extra: &[&'a str],
) -> Vec<&'a str> {
    let mut args = vec!["build", "--config", config, "--model-dir", model];
    args.extend_from_slice(extra);
    let _ = w;
    args
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn sharded_builds_merge_into_the_single_machine_index() {
    let w = World::new();
    let config = w.path("config/repositories.yml");
    let config = config.to_str().expect("utf8");
    let model = w.model.to_str().expect("utf8");
    let path = |p: &str| w.path(p).to_str().expect("utf8").to_owned();
    let (single, one, two, merged) = (path("single"), path("part1"), path("part2"), path("merged"));
    let (c0, c1, c2) = (path("cache0"), path("cache1"), path("cache2"));

    let out = cairn(&build_args(
        &w,
        config,
        model,
        &["--out", &single, "--cache", &c0],
    ));
    assert!(out.status.success(), "{}", stderr(&out));
    // Each shard on its own machine: its own cache, its own part folder.
    // Repositories go to shards by a hash of their names: each is built once.
    let mut built = 0;
    for (shard, part, cache) in [("1/2", &one, &c1), ("2/2", &two, &c2)] {
        let out = cairn(&build_args(
            &w,
            config,
            model,
            &["--shard", shard, "--out", part, "--cache", cache, "--json"],
        ));
        assert!(out.status.success(), "{shard}: {}", stderr(&out));
        let summary: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("json");
        built += summary["repos"].as_array().map_or(0, Vec::len);
    }
    assert_eq!(built, 2, "each repository is built by exactly one shard");
    // Parts can be merged in any order.
    let out = cairn(&build_args(
        &w,
        config,
        model,
        &["--merge", &two, &one, "--out", &merged, "--cache", &c0],
    ));
    assert!(out.status.success(), "{}", stderr(&out));

    let (a, b) = (
        current_dir(Path::new(&single)),
        current_dir(Path::new(&merged)),
    );
    assert_eq!(a.file_name(), b.file_name(), "same index_version");
    for f in [
        "docs.json",
        "chunks.json",
        "content.bin",
        "vectors.f32",
        "weights.json",
        "history.json",
    ] {
        assert!(read(&a.join(f)) == read(&b.join(f)), "{f} differs");
    }
    let verify = cairn(&["verify", "--index", &merged]);
    assert!(verify.status.success(), "{}", stdout(&verify));

    // A missing shard, or a part from another config, is refused and publishes nothing.
    let lonely = path("lonely");
    let out = cairn(&build_args(
        &w,
        config,
        model,
        &["--merge", &one, "--out", &lonely],
    ));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("shard 2/2 is missing"),
        "{}",
        stderr(&out)
    );
    assert!(!w.path("lonely/CURRENT").exists());
    w.write_config("    exclude: [\"nothing/**\"]\n");
    let out = cairn(&build_args(
        &w,
        config,
        model,
        &["--merge", &one, &two, "--out", &lonely],
    ));
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("another repositories.yml"),
        "{}",
        stderr(&out)
    );
    let out = cairn(&build_args(
        &w,
        config,
        model,
        &["--shard", "3/2", "--out", &lonely],
    ));
    assert_eq!(out.status.code(), Some(1));
}

/// `cairn pack --json` of `index` into `out_dir`: what it reports.
fn pack_index(index: &Path, out_dir: &Path) -> serde_json::Value {
    let packed = cairn(&[
        "pack",
        "--index",
        index.to_str().expect("utf8"),
        "--out-dir",
        out_dir.to_str().expect("utf8"),
        "--json",
    ]);
    assert!(packed.status.success(), "{}", stderr(&packed));
    serde_json::from_str(&stdout(&packed)).expect("json")
}

#[test]
fn packs_are_checked_before_they_are_served() {
    let w = World::new();
    assert!(w.build("out", &[]).status.success());
    let out_dir = w.path("dist");
    let index = w.path("out");
    let info = pack_index(&index, &out_dir);
    let pack = std::path::PathBuf::from(info["path"].as_str().expect("path"));
    let version = info["index_version"].as_str().expect("version").to_owned();
    assert_eq!(
        pack.file_name().and_then(|n| n.to_str()),
        Some(format!("cairn-index-{version}.tar.zst").as_str())
    );
    // sha256sum can check it too.
    let sums = std::fs::read_to_string(format!("{}.sha256", pack.display())).expect("sums");
    assert!(sums.starts_with(info["sha256"].as_str().expect("sha")));

    // Unpacked into a fresh root: the same version, and it verifies.
    let fresh = w.path("fresh");
    let out = cairn(&[
        "unpack",
        pack.to_str().expect("utf8"),
        "--index",
        fresh.to_str().expect("utf8"),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        current_dir(&fresh).file_name().and_then(|n| n.to_str()),
        Some(version.as_str())
    );
    assert!(
        cairn(&["verify", "--index", fresh.to_str().expect("utf8")])
            .status
            .success()
    );

    // A flipped byte, or no checksum file: refused, nothing published.
    let bad = w.path("bad");
    let tampered = w.path("dist/tampered/cairn-index-0000000000000000.tar.zst");
    std::fs::create_dir_all(tampered.parent().expect("parent")).expect("mkdir");
    let mut bytes = read(&pack);
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x01;
    std::fs::write(&tampered, bytes).expect("write");
    std::fs::copy(
        format!("{}.sha256", pack.display()),
        format!("{}.sha256", tampered.display()),
    )
    .expect("copy sums");
    let unpack_tampered = || {
        cairn(&[
            "unpack",
            tampered.to_str().expect("utf8"),
            "--index",
            bad.to_str().expect("utf8"),
        ])
    };
    let out = unpack_tampered();
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("sha256"), "{}", stderr(&out));
    std::fs::remove_file(format!("{}.sha256", tampered.display())).expect("rm");
    let out = unpack_tampered();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("no checksum file"),
        "{}",
        stderr(&out)
    );
    assert!(!bad.join("CURRENT").exists());

    // `cairn serve --index PACK` unpacks, checks and serves it.
    let token = cairn_serve::auth::TokenStore::new(w.path("tokens.json"))
        .add("bot", &[], false)
        .expect("token");
    let served_root = w.path("served");
    let server = Server::start_at(
        &w,
        pack.to_str().expect("utf8"),
        &[
            "--unpack-into",
            served_root.to_str().expect("utf8"),
            "--watch-ms",
            "100",
        ],
    );
    assert_eq!(
        get_json(&server.url("/version"), &token).1["index_version"],
        version
    );

    // A nightly job drops a newer pack into the root: the server adopts it.
    crate::fixtures::commit(
        &w.alpha_repo(),
        &[("docs/news.md", b"# News\n\nFaster fits.\n".to_vec())],
        "news",
    );
    assert!(w.build("out", &[]).status.success());
    let newer = pack_index(&index, &served_root);
    let started = std::time::Instant::now();
    while get_json(&server.url("/version"), &token).1["index_version"] != newer["index_version"] {
        assert!(
            started.elapsed().as_secs() < 20,
            "the dropped pack was never adopted"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// A static file server (Python's) over `dir` on a free loopback port, until dropped.
struct Files(std::process::Child, u16);

impl Files {
    fn serve(dir: &Path) -> Files {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .expect("port");
        let child = std::process::Command::new("python3")
            .args([
                "-m",
                "http.server",
                &port.to_string(),
                "--bind",
                "127.0.0.1",
                "--directory",
            ])
            .arg(dir)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("python3 -m http.server");
        for _ in 0..100 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        Files(child, port)
    }
}

impl Drop for Files {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn pull_fetches_the_newest_pack_checks_it_and_drops_it_for_adoption() {
    let w = World::new();
    let built = w.build("out", &[]);
    assert!(built.status.success(), "{}", stderr(&built));
    let dist = w.path("dist");
    let info = pack_index(&w.path("out"), &dist);
    let version = info["index_version"].as_str().expect("version").to_owned();
    let name = format!("cairn-index-{version}.tar.zst");
    let latest = |sha: &str| {
        std::fs::write(
            dist.join("latest.json"),
            serde_json::json!({"index_version": version, "pack": name, "sha256": sha}).to_string(),
        )
        .expect("latest.json");
    };
    latest(info["sha256"].as_str().expect("sha"));
    let files = Files::serve(&dist);
    let base = format!("http://127.0.0.1:{}", files.1);
    let root = w.path("server-index");
    let root_s = root.to_str().expect("utf8");
    let pull = |source: &str| cairn(&["pull", source, "--index", root_s, "--allow-http"]);

    // A checksum that does not match: refused, nothing dropped.
    latest(&"0".repeat(64));
    let o = pull(&format!("{base}/latest.json"));
    assert!(!o.status.success());
    assert!(stderr(&o).contains("sha256"), "{}", stderr(&o));
    assert!(!root.join(&name).exists() && !root.join(format!("{name}.sha256")).exists());

    // The real one: dropped with its checksum, and it unpacks.
    latest(info["sha256"].as_str().expect("sha"));
    // An attestation asked for and no way to check it: refused, nothing dropped.
    if std::process::Command::new("gh")
        .arg("--version")
        .output()
        .is_err()
    {
        let o = cairn(&[
            "pull",
            &format!("{base}/latest.json"),
            "--index",
            root_s,
            "--attest-repo",
            "cairn-search/cairn",
            "--allow-http",
        ]);
        assert!(!o.status.success());
        assert!(stderr(&o).contains("GitHub CLI"), "{}", stderr(&o));
        assert!(!root.join(&name).exists());
    }
    let o = pull(&format!("{base}/latest.json"));
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(root.join(&name).is_file() && root.join(format!("{name}.sha256")).is_file());
    let o = cairn(&[
        "unpack",
        root.join(&name).to_str().expect("utf8"),
        "--index",
        root_s,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(current_dir(&root), root.join("versions").join(&version));
    // Pulled again: already there.
    let o = pull(&format!("{base}/{name}"));
    assert!(o.status.success());
    assert!(stdout(&o).contains("already holds"), "{}", stdout(&o));
    // A pack URL without its checksum is not taken.
    std::fs::remove_file(dist.join(format!("{name}.sha256"))).expect("rm");
    let o = cairn(&[
        "pull",
        &format!("{base}/{name}"),
        "--index",
        w.path("other").to_str().expect("utf8"),
        "--allow-http",
    ]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("checksum"), "{}", stderr(&o));
}
