//! Records the git commit the binary is built from, for `cairn --version`
//! (`CAIRN_GIT_COMMIT` in the environment wins: a build from a source archive
//! or a container has no `.git`).

use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=CAIRN_GIT_COMMIT");
    // Every commit and checkout appends to the HEAD log.
    for path in [".git/HEAD", ".git/logs/HEAD"] {
        if std::path::Path::new(path).exists() {
            println!("cargo:rerun-if-changed={path}");
        }
    }
    let commit = std::env::var("CAIRN_GIT_COMMIT").ok().or_else(|| {
        Command::new("git")
            .args(["rev-parse", "--short=12", "HEAD"])
            .output()
            .ok()
            .filter(|o| o.status.success())
            .and_then(|o| String::from_utf8(o.stdout).ok())
            .map(|s| s.trim().to_owned())
    });
    println!(
        "cargo:rustc-env=CAIRN_GIT_COMMIT={}",
        commit
            .filter(|c| !c.is_empty())
            .unwrap_or_else(|| "unknown".to_owned())
    );
}
