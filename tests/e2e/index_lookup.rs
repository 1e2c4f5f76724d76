//! An index found without a path (issue 61): `--index`, then `CAIRN_INDEX`,
//! then `./.cairn/index`, then the user's data folder
//! (`$XDG_DATA_HOME/cairn/index`); `cairn build` outside a project writes
//! to the data folder and says so; a reader that finds none, and `cairn
//! doctor`, name every place looked. Each run has its own data folder and
//! working folder, so no test touches the real ones.

use crate::fixtures::{World, stderr, stdout};
use std::path::Path;
use std::process::{Command, Output};

/// `cairn args` run in `cwd` with `data` as its data folder.
fn cairn_in(cwd: &Path, data: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(args)
        .current_dir(cwd)
        .env("CAIRN_LOG", "warn")
        .env("XDG_DATA_HOME", data)
        .env_remove("CAIRN_INDEX")
        .output()
        .expect("run cairn")
}

#[test]
fn an_index_is_found_in_the_project_then_the_data_folder() {
    let w = World::new();
    let data = tempfile::tempdir().expect("data");
    let elsewhere = tempfile::tempdir().expect("a client's folder");
    let user_index = data.path().join("cairn/index");
    let model = w.model.to_str().expect("utf8").to_owned();
    let search = |cwd: &Path| {
        cairn_in(
            cwd,
            data.path(),
            &["search", "fit_model", "--json", "--model-dir", &model],
        )
    };

    // Nothing anywhere: the error names both places.
    let o = search(elsewhere.path());
    assert!(!o.status.success());
    let said = stderr(&o);
    assert!(
        said.contains("no index found: looked in .cairn/index, ")
            && said.contains(&user_index.display().to_string()),
        "{said}"
    );
    let o = cairn_in(elsewhere.path(), data.path(), &["doctor", "--json"]);
    let checks: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
    let index = checks
        .as_array()
        .and_then(|a| a.iter().find(|c| c["name"] == "index"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(index["status"], "warn", "{checks}");
    assert!(
        index["detail"]
            .as_str()
            .is_some_and(|d| d.contains(&user_index.display().to_string())),
        "{index}"
    );

    // Built outside a project: into the data folder, said on stderr.
    let config = w.path("config/repositories.yml");
    let cache = w.path("cache");
    let o = cairn_in(
        elsewhere.path(),
        data.path(),
        &[
            "build",
            "--config",
            config.to_str().expect("utf8"),
            "--cache",
            cache.to_str().expect("utf8"),
            "--model-dir",
            &model,
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!("the index goes to {}", user_index.display())),
        "{}",
        stderr(&o)
    );
    assert!(user_index.join("CURRENT").is_file());

    // Any folder now finds it, as a desktop client's `cairn mcp` would.
    let o = search(elsewhere.path());
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("core.py"), "{}", stdout(&o));
    let o = cairn_in(elsewhere.path(), data.path(), &["verify"]);
    assert!(o.status.success(), "{}", stderr(&o));

    // A project's own index comes first; CAIRN_INDEX and --index before it.
    let project = tempfile::tempdir().expect("project");
    std::fs::write(project.path().join("repositories.yml"), "{}\n").expect("write");
    let o = cairn_in(
        project.path(),
        data.path(),
        &["search", "fit_model", "--model-dir", &model],
    );
    assert!(
        o.status.success(),
        "the data folder's, the project having none: {}",
        stderr(&o)
    );
    let built = w.build("out", &[]);
    assert!(built.status.success(), "{}", stderr(&built));
    crate::serve_process::copy_dir(&w.path("out"), &project.path().join(".cairn/index"));
    std::fs::remove_dir_all(&user_index).expect("remove");
    let o = search(project.path());
    assert!(o.status.success(), "the project's: {}", stderr(&o));
    let o = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(["search", "fit_model", "--model-dir", &model])
        .current_dir(elsewhere.path())
        .env("XDG_DATA_HOME", data.path())
        .env("CAIRN_INDEX", project.path().join(".cairn/index"))
        .output()
        .expect("run");
    assert!(o.status.success(), "CAIRN_INDEX: {}", stderr(&o));
    let missing = elsewhere.path().join("nothing");
    let o = search_at(elsewhere.path(), data.path(), &missing, &model);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains(&missing.display().to_string()),
        "{}",
        stderr(&o)
    );
}

/// `cairn search` with `--index root`.
fn search_at(cwd: &Path, data: &Path, root: &Path, model: &str) -> Output {
    cairn_in(
        cwd,
        data,
        &[
            "search",
            "fit_model",
            "--index",
            root.to_str().expect("utf8"),
            "--model-dir",
            model,
        ],
    )
}
