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
