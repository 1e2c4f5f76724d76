//! What an installed binary tells about itself: `--version` (the commit and
//! the index format it reads), shell completions and the man page.

use crate::fixtures::{cairn, stdout};

#[test]
fn version_names_the_commit_and_the_index_format() {
    let o = cairn(&["--version"]);
    assert!(o.status.success());
    let v = stdout(&o);
    let want = format!("cairn {} (commit ", env!("CARGO_PKG_VERSION"));
    assert!(v.starts_with(&want), "{v}");
    assert!(
        v.trim_end().ends_with(&format!(
            ", index format {})",
            cairn_index::manifest::FORMAT_VERSION
        )),
        "{v}"
    );
}

#[test]
fn completions_and_the_man_page_come_from_the_argument_types() {
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let o = cairn(&["completions", shell]);
        assert!(o.status.success(), "{shell}");
        let script = stdout(&o);
        // Every subcommand is offered.
        for sub in ["build", "search", "serve", "eval", "completions"] {
            assert!(script.contains(sub), "{shell} lacks {sub}");
        }
    }
    let o = cairn(&["completions", "tcsh"]);
    assert_eq!(o.status.code(), Some(2), "an unknown shell is bad input");
    let o = cairn(&["man"]);
    assert!(o.status.success());
    let page = stdout(&o);
    assert!(
        page.contains(".TH cairn 1") && page.contains(".SH SUBCOMMANDS"),
        "{page}"
    );
}

#[test]
fn doctor_checks_the_index_the_model_and_the_tokens_file() {
    use std::os::unix::fs::PermissionsExt;
    let w = crate::fixtures::World::new();
    let built = w.build("out", &[]);
    assert!(
        built.status.success(),
        "{}",
        crate::fixtures::stderr(&built)
    );
    let (idx, model, tokens) = (w.path("out"), w.model.clone(), w.path("tokens.json"));
    let doctor = || {
        cairn(&[
            "doctor",
            "--index",
            idx.to_str().expect("utf8"),
            "--model-dir",
            model.to_str().expect("utf8"),
            "--tokens",
            tokens.to_str().expect("utf8"),
            "--json",
        ])
    };
    let status_of = |out: &std::process::Output, name: &str| -> String {
        let v: serde_json::Value = serde_json::from_str(&stdout(out)).expect("json");
        v.as_array()
            .and_then(|a| a.iter().find(|c| c["name"] == name))
            .map(|c| format!("{} {}", c["status"].as_str().unwrap_or(""), c["detail"]))
            .unwrap_or_default()
    };
    let o = doctor();
    assert!(o.status.success(), "{}", stdout(&o));
    assert!(status_of(&o, "index").starts_with("ok"), "{}", stdout(&o));
    assert!(
        status_of(&o, "model").contains("the index was built with it"),
        "{}",
        stdout(&o)
    );
    assert!(status_of(&o, "cpu").starts_with("ok"));
    // A build without the `cuda` feature says so rather than looking for a GPU.
    let gpu = status_of(&o, "gpu");
    if cfg!(feature = "cuda") {
        assert!(!gpu.is_empty(), "{}", stdout(&o));
    } else {
        assert!(
            gpu.starts_with("ok") && gpu.contains("no `cuda` feature"),
            "{gpu}"
        );
    }
    // A tokens file others can read fails the check, and the command.
    let t = cairn(&[
        "token",
        "add",
        "bot",
        "--tokens",
        tokens.to_str().expect("utf8"),
    ]);
    assert!(t.status.success(), "{}", crate::fixtures::stderr(&t));
    std::fs::set_permissions(&tokens, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let o = doctor();
    assert_eq!(o.status.code(), Some(1));
    assert!(
        status_of(&o, "tokens").starts_with("fail")
            && status_of(&o, "tokens").contains("chmod 600"),
        "{}",
        stdout(&o)
    );
    std::fs::set_permissions(&tokens, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    // A CURRENT naming no version fails, and says why.
    std::fs::write(idx.join("CURRENT"), "0123456789abcdef\n").expect("write");
    let o = doctor();
    assert_eq!(o.status.code(), Some(1));
    assert!(
        status_of(&o, "index").contains("does not exist"),
        "{}",
        stdout(&o)
    );
}

/// The release path without GitHub: the archive `scripts/package.sh` makes,
/// installed by `scripts/install.sh` from a `file://` base, sha256 checked.
#[test]
fn the_installer_installs_a_packed_release_and_refuses_a_corrupt_one() {
    let dir = tempfile::tempdir().expect("tmp");
    let (dist, bin) = (dir.path().join("dist"), dir.path().join("bin"));
    let root = env!("CARGO_MANIFEST_DIR");
    let target = match std::env::consts::ARCH {
        "aarch64" => "aarch64-unknown-linux-gnu",
        _ => "x86_64-unknown-linux-gnu",
    };
    let packed = std::process::Command::new(format!("{root}/scripts/package.sh"))
        .args([env!("CARGO_BIN_EXE_cairn"), target])
        .arg(&dist)
        .output()
        .expect("package.sh");
    assert!(
        packed.status.success(),
        "{}",
        String::from_utf8_lossy(&packed.stderr)
    );
    // The archive ships the agent skill beside the docs.
    let listed = std::process::Command::new("tar")
        .arg("-tzf")
        .arg(dist.join(format!("cairn-{target}.tar.gz")))
        .output()
        .expect("tar");
    let listed = String::from_utf8_lossy(&listed.stdout);
    assert!(
        listed.contains(&format!("cairn-{target}/skills/cairn/SKILL.md")),
        "{listed}"
    );
    let install = || {
        std::process::Command::new("sh")
            .arg(format!("{root}/scripts/install.sh"))
            .env("CAIRN_INSTALL_BASE", format!("file://{}", dist.display()))
            .env("CAIRN_INSTALL_DIR", &bin)
            .output()
            .expect("install.sh")
    };
    let o = install();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v = std::process::Command::new(bin.join("cairn"))
        .arg("--version")
        .output()
        .expect("run");
    assert!(String::from_utf8_lossy(&v.stdout).contains("index format"));
    // A corrupted archive is refused before anything is installed.
    std::fs::remove_file(bin.join("cairn")).expect("rm");
    let archive = dist.join(format!("cairn-{target}.tar.gz"));
    let mut bytes = std::fs::read(&archive).expect("read");
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    std::fs::write(&archive, bytes).expect("write");
    let o = install();
    assert!(!o.status.success());
    assert!(!bin.join("cairn").exists());
}

/// `--device cuda` in a build without the `cuda` feature stops before any
/// work with one line saying so, and publishes nothing.
#[test]
fn device_cuda_without_the_feature_is_one_clear_line() {
    if cfg!(feature = "cuda") {
        return;
    }
    let w = crate::fixtures::World::new();
    let o = w.build("out", &["--device", "cuda"]);
    assert_eq!(o.status.code(), Some(1));
    let err = crate::fixtures::stderr(&o);
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(
        lines[0].contains("--device cuda: this cairn was built without the 'cuda' feature"),
        "{err}"
    );
    assert!(!w.path("out").join("CURRENT").exists());
}
