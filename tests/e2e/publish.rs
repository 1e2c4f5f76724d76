//! Publishing is atomic: a build killed at any point leaves CURRENT loadable;
//! verify catches tampering.

use crate::fixtures::{World, cairn, commit, current_dir, stderr, stdout};
use cairn_index::{FORMAT_VERSION, IndexRoot, OLDEST_READABLE_FORMAT, VersionWriter};
use std::process::Command;
use std::time::Duration;

#[test]
fn interrupted_publish_leaves_current_untouched() {
    let w = World::new();
    assert!(w.build("out", &[]).status.success());
    let root = IndexRoot::new(w.path("out"));
    let live = root.current().expect("current");

    // A writer that dies before sealing: its scratch folder is invisible.
    let writer = VersionWriter::create(&root).expect("writer");
    writer
        .write_bytes("content.bin", b"half a version")
        .expect("write");
    drop(writer);
    assert_eq!(root.current().expect("current"), live);
    assert!(cairn_index::verify(&root).expect("verify").ok());

    // A real build killed at several points along the way.
    commit(
        &w.alpha_repo(),
        &[("docs/new.md", b"# New\n\nnew text\n".repeat(50))],
        "more",
    );
    for delay_ms in [5u64, 40, 120, 300] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_cairn"))
            .args(["build", "--config"])
            .arg(w.path("config/repositories.yml"))
            .arg("--out")
            .arg(w.path("out"))
            .arg("--cache")
            .arg(w.path("cache"))
            .arg("--model-dir")
            .arg(&w.model)
            .env("CAIRN_LOG", "error")
            .spawn()
            .expect("spawn");
        std::thread::sleep(Duration::from_millis(delay_ms));
        let _ = child.kill();
        let _ = child.wait();
        let now = root.current().expect("CURRENT still names a version");
        let report = cairn_index::verify(&root).expect("verify");
        assert!(
            report.ok(),
            "after a kill at {delay_ms} ms, {now}: {:?}",
            report.problems
        );
    }
    // The next build cleans up and publishes.
    let o = w.build("out", &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_ne!(root.current().expect("current"), live);
}

#[test]
fn verify_catches_one_flipped_byte() {
    let w = World::new();
    assert!(w.build("out", &[]).status.success());
    let content = current_dir(&w.path("out")).join("content.bin");
    let mut bytes = std::fs::read(&content).expect("read");
    bytes[10] ^= 0x01;
    // Published files are read-only by promise, not by permission; tamper on purpose.
    std::fs::write(&content, bytes).expect("write");
    let o = cairn(&["verify", "--index", w.path("out").to_str().expect("utf8")]);
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    assert!(
        out.contains("content.bin") && out.contains("FAILED"),
        "{out}"
    );
}

#[test]
fn verify_refuses_a_newer_or_an_unreadable_older_format() {
    let w = World::new();
    assert!(w.build("out", &[]).status.success());
    let manifest = current_dir(&w.path("out")).join("manifest.json");
    let text = std::fs::read_to_string(&manifest).expect("read");
    std::fs::write(
        &manifest,
        text.replacen(
            &format!("\"format_version\": {FORMAT_VERSION}"),
            "\"format_version\": 99",
            1,
        ),
    )
    .expect("write");
    let o = cairn(&["verify", "--index", w.path("out").to_str().expect("utf8")]);
    assert_ne!(o.status.code(), Some(0));
    assert!(stderr(&o).contains("upgrade cairn"), "{}", stderr(&o));
    // An index older than this build reads is refused too, with the remedy.
    std::fs::write(
        &manifest,
        text.replacen(
            &format!("\"format_version\": {FORMAT_VERSION}"),
            &format!("\"format_version\": {}", OLDEST_READABLE_FORMAT - 1),
            1,
        ),
    )
    .expect("write");
    let o = cairn(&["verify", "--index", w.path("out").to_str().expect("utf8")]);
    assert_ne!(o.status.code(), Some(0));
    assert!(stderr(&o).contains("rebuild"), "{}", stderr(&o));
}

/// A manifest (or a pack's) naming a dimension no model has is refused with
/// its field named: every vector size is a product with it, and 2^62 would
/// overflow them (before: a panic on the server's watcher thread, or a
/// version adopted whose every vector search panicked).
#[test]
fn verify_refuses_a_dimension_no_model_has() {
    let w = World::new();
    assert!(w.build("out", &[]).status.success());
    let manifest = current_dir(&w.path("out")).join("manifest.json");
    let text = std::fs::read_to_string(&manifest).expect("read");
    let at = text.find("\"dim\": ").expect("dim") + "\"dim\": ".len();
    let end = at + text[at..].find(|c: char| !c.is_ascii_digit()).expect("end");
    for dim in ["0", "4611686018427387904", "4611686018427387905", "100000"] {
        std::fs::write(&manifest, format!("{}{dim}{}", &text[..at], &text[end..])).expect("write");
        let o = cairn(&["verify", "--index", w.path("out").to_str().expect("utf8")]);
        assert_ne!(o.status.code(), Some(0), "{dim}");
        assert_ne!(o.status.code(), Some(101), "{dim}: no panic");
        assert!(stderr(&o).contains("model.dim"), "{dim}: {}", stderr(&o));
    }
}
