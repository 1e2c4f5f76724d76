//! Bad configuration: exit code 2, `file:line:column`, nothing written.

use crate::fixtures::{World, stderr};

fn assert_rejected(w: &World, yml: &str, want_line: u32, want_text: &str) {
    w.write("config/repositories.yml", yml);
    let o = w.build("out", &[]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    let file = w.path("config/repositories.yml");
    let prefix = format!("{}:{want_line}:", file.display());
    assert!(err.contains(&prefix), "expected {prefix} in {err}");
    assert!(
        err.to_lowercase().contains(want_text),
        "expected {want_text:?} in {err}"
    );
    assert!(
        !w.path("out").exists()
            || std::fs::read_dir(w.path("out"))
                .expect("out")
                .next()
                .is_none(),
        "something was written"
    );
}

#[test]
fn unknown_key() {
    let w = World::new();
    assert_rejected(
        &w,
        "science:\n  - name: alpha\n    url: ../repos/alpha\n    web_url: https://github.com/example/alpha\n    brnach: main\n",
        5,
        "brnach",
    );
}

#[test]
fn duplicate_name() {
    let w = World::new();
    let yml = "a:\n  - name: alpha\n    url: ../repos/alpha\n    web_url: https://github.com/example/alpha\nb:\n  - name: alpha\n    url: ../repos/beta\n    web_url: https://github.com/example/beta\n";
    assert_rejected(&w, yml, 6, "duplicate");
}

#[test]
fn bad_glob() {
    let w = World::new();
    let yml = "science:\n  - name: alpha\n    url: ../repos/alpha\n    web_url: https://github.com/example/alpha\n    exclude:\n      - \"src/[\"\n";
    assert_rejected(&w, yml, 6, "glob");
}

#[test]
fn bad_url() {
    let w = World::new();
    assert_rejected(
        &w,
        "science:\n  - name: alpha\n    url: ftp://example.org/x\n    web_url: https://github.com/example/alpha\n",
        3,
        "scheme",
    );
    assert_rejected(
        &w,
        "science:\n  - name: alpha\n    url: ../repos/nowhere\n    web_url: https://github.com/example/alpha\n",
        3,
        "no such",
    );
    assert_rejected(
        &w,
        "science:\n  - name: alpha\n    url: https://gitlab.com/x/y.git\n",
        3,
        "web_url",
    );
}

#[test]
fn bad_yaml() {
    let w = World::new();
    assert_rejected(&w, "science:\n  - name: alpha\n    url: [unclosed\n", 3, "");
}
