//! Test fixtures: git repositories made on the spot with git2, and a
//! sandbox of two repositories, their config and the tiny model, for tests
//! of the real sync and build code paths (this crate's and the workspace's).
//! Compiled only for tests and the `test-fixtures` feature.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::build::BuildOptions;
use cairn_embed::DevicePref;
use git2::{IndexAddOption, Oid, Repository, RepositoryInitOptions, Signature};
use std::path::{Path, PathBuf};

/// A new repository at `path` whose HEAD is `branch`.
pub fn init_repo(path: &Path, branch: &str) -> Repository {
    let mut opts = RepositoryInitOptions::new();
    opts.initial_head(branch);
    Repository::init_opts(path, &opts).expect("init")
}

/// Writes `files` into the repo's work tree and commits them on HEAD (at a
/// fixed time, so the same files give the same commit).
pub fn commit(repo: &Repository, files: &[(&str, Vec<u8>)], message: &str) -> Oid {
    let sig = Signature::new(
        "Fixture",
        "fixture@example.org",
        &git2::Time::new(1_700_000_000, 0),
    )
    .expect("sig");
    commit_by(repo, files, message, &sig)
}

/// [`commit`], authored and committed by `sig`.
pub fn commit_by(
    repo: &Repository,
    files: &[(&str, Vec<u8>)],
    message: &str,
    sig: &Signature<'_>,
) -> Oid {
    let root = repo.workdir().expect("work tree").to_owned();
    for (path, bytes) in files {
        let p = root.join(path);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, bytes).expect("write");
    }
    let mut index = repo.index().expect("index");
    index
        .add_all(["*"], IndexAddOption::DEFAULT, None)
        .expect("add");
    index.write().expect("write index");
    let tree = repo
        .find_tree(index.write_tree().expect("tree"))
        .expect("find tree");
    let parent = repo.head().ok().and_then(|h| h.peel_to_commit().ok());
    let parents: Vec<&git2::Commit> = parent.iter().collect();
    repo.commit(Some("HEAD"), sig, sig, message, &tree, &parents)
        .expect("commit")
}

/// A tree of `depth` folders named `d`, one in another, the innermost
/// holding `leaf.py` (blob `leaf`): a hostile repository's shape.
pub fn nested_tree(repo: &Repository, depth: usize, leaf: Oid) -> Oid {
    let mut t = repo.treebuilder(None).expect("builder");
    t.insert("leaf.py", leaf, 0o100644).expect("insert");
    let mut tree = t.write().expect("tree");
    for _ in 0..depth {
        let mut t = repo.treebuilder(None).expect("builder");
        t.insert("d", tree, 0o040000).expect("insert");
        tree = t.write().expect("tree");
    }
    tree
}

/// Files of a fixture repository: (path, bytes).
pub type Files<'a> = &'a [(&'a str, Vec<u8>)];

/// Two repositories in a temp folder, `science/alpha` (branch `main`, seen
/// only by `alpha_groups` when any are given) and `tools/beta` (branch
/// `master`), their repositories.yml, and the tiny model.
pub struct Sandbox {
    dir: tempfile::TempDir,
}

impl Sandbox {
    /// Commits `alpha` and `beta` and writes the config and the model.
    pub fn new(alpha: Files<'_>, beta: Files<'_>, alpha_groups: &[&str]) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        commit(
            &init_repo(&root.join("repos/alpha"), "main"),
            alpha,
            "first",
        );
        commit(
            &init_repo(&root.join("repos/beta"), "master"),
            beta,
            "first",
        );
        let groups = match alpha_groups {
            [] => String::new(),
            g => format!("    groups: [{}]\n", g.join(", ")),
        };
        std::fs::create_dir_all(root.join("config")).expect("mkdir");
        std::fs::write(
            root.join("config/repositories.yml"),
            format!(
                "science:\n  - name: alpha\n    url: ../repos/alpha\n    web_url: https://github.com/example/alpha\n{groups}tools:\n  - name: beta\n    url: ../repos/beta\n    web_url: https://github.com/example/beta\n"
            ),
        )
        .expect("config");
        cairn_embed::fixtures::write_tiny_bert(&root.join("model")).expect("tiny model");
        Self { dir }
    }

    /// A path inside the sandbox.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// Options building the sandbox's config into `out` with the tiny model.
    pub fn options(&self, out: &str) -> BuildOptions {
        BuildOptions {
            config: self.path("config/repositories.yml"),
            weights: None,
            settings: None,
            out: self.path(out),
            cache: self.path("cache"),
            model_dir: Some(self.path("model")),
            device: DevicePref::Cpu,
            keep: cairn_index::layout::DEFAULT_KEEP,
            keep_going: false,
            arxiv_url: crate::articles::DEFAULT_ARXIV_URL.to_owned(),
            pdf_helper: None,
        }
    }
}

/// A PDF whose pages hold `pages`' lines in Helvetica, top down. A line
/// starting `@rot ` is drawn turned 90° with each word placed on its own (as
/// a landscape table's cells are), and `@image` stands for a page with a
/// drawn shape and no text.
pub fn pdf(pages: &[&[&str]]) -> Vec<u8> {
    use lopdf::content::{Content, Operation};
    use lopdf::{Document, Object, Stream, dictionary};
    let mut doc = Document::with_version("1.5");
    let pages_id = doc.new_object_id();
    let font = doc.add_object(dictionary! {
        "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica",
    });
    let resources = doc.add_object(dictionary! { "Font" => dictionary! { "F1" => font } });
    let at = |a: i64, b: i64, c: i64, d: i64, x: i64, y: i64| {
        Operation::new(
            "Tm",
            vec![a.into(), b.into(), c.into(), d.into(), x.into(), y.into()],
        )
    };
    let mut kids: Vec<Object> = Vec::new();
    for lines in pages {
        let mut ops = vec![
            Operation::new("BT", vec![]),
            Operation::new("Tf", vec!["F1".into(), 11.into()]),
        ];
        for (i, line) in lines.iter().enumerate() {
            let i = i as i64;
            if *line == "@image" {
                ops.push(Operation::new("ET", vec![]));
                ops.push(Operation::new(
                    "re",
                    vec![100.into(), 100.into(), 300.into(), 300.into()],
                ));
                ops.push(Operation::new("f", vec![]));
                ops.push(Operation::new("BT", vec![]));
            } else if let Some(words) = line.strip_prefix("@rot ") {
                let mut along = 100;
                for w in words.split_whitespace() {
                    ops.push(at(0, 1, -1, 0, 100 + 14 * i, along));
                    ops.push(Operation::new("Tj", vec![Object::string_literal(w)]));
                    along += 7 * w.len() as i64 + 12;
                }
            } else {
                ops.push(at(1, 0, 0, 1, 72, 750 - 14 * i));
                ops.push(Operation::new("Tj", vec![Object::string_literal(*line)]));
            }
        }
        ops.push(Operation::new("ET", vec![]));
        let content = Content { operations: ops }.encode().expect("content");
        let contents = doc.add_object(Stream::new(dictionary! {}, content));
        kids.push(
            doc.add_object(dictionary! {
                "Type" => "Page", "Parent" => pages_id, "Contents" => contents,
            })
            .into(),
        );
    }
    finish(doc, pages_id, kids, Some(resources))
}

/// Writes the page tree (`kids`, A4, sharing `resources`) and the catalog,
/// and saves the document.
fn finish(
    mut doc: lopdf::Document,
    pages_id: lopdf::ObjectId,
    kids: Vec<lopdf::Object>,
    resources: Option<lopdf::ObjectId>,
) -> Vec<u8> {
    use lopdf::{Object, dictionary};
    let mut pages = dictionary! {
        "Type" => "Pages", "Count" => kids.len() as i64, "Kids" => kids,
        "MediaBox" => vec![0.into(), 0.into(), 595.into(), 842.into()],
    };
    if let Some(r) = resources {
        pages.set("Resources", r);
    }
    doc.objects.insert(pages_id, Object::Dictionary(pages));
    let catalog = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
    doc.trailer.set("Root", catalog);
    let mut out = Vec::new();
    doc.save_to(&mut out).expect("save");
    out
}

/// `pdf(pages)` with an `/Encrypt` entry in its trailer: a reader asks for a password.
pub fn encrypted_pdf(pages: &[&[&str]]) -> Vec<u8> {
    use lopdf::{Document, dictionary};
    let mut doc = Document::load_mem(&pdf(pages)).expect("reload");
    let encrypt = doc.add_object(dictionary! {
        "Filter" => "Standard", "V" => 2, "R" => 3, "Length" => 128, "P" => -44,
        "O" => lopdf::Object::string_literal(vec![7u8; 32]),
        "U" => lopdf::Object::string_literal(vec![9u8; 32]),
    });
    doc.trailer.set("Encrypt", encrypt);
    doc.trailer.set(
        "ID",
        vec![
            lopdf::Object::string_literal(vec![1u8; 16]),
            lopdf::Object::string_literal(vec![1u8; 16]),
        ],
    );
    let mut out = Vec::new();
    doc.save_to(&mut out).expect("save");
    out
}

/// A PDF whose page draws a form that draws itself, forever: an
/// interpreter without a depth guard overflows its stack on it.
pub fn self_drawing_pdf() -> Vec<u8> {
    use lopdf::{Document, Object, Stream, dictionary};
    let mut doc = Document::with_version("1.5");
    let pages_id = doc.new_object_id();
    let form_id = doc.new_object_id();
    let resources = doc.add_object(dictionary! {
        "XObject" => dictionary! { "X0" => form_id },
    });
    doc.objects.insert(
        form_id,
        Object::Stream(Stream::new(
            dictionary! {
                "Type" => "XObject", "Subtype" => "Form",
                "BBox" => vec![0.into(), 0.into(), 100.into(), 100.into()],
            },
            b"/X0 Do".to_vec(),
        )),
    );
    let contents = doc.add_object(Stream::new(dictionary! {}, b"/X0 Do".to_vec()));
    let page = doc.add_object(dictionary! {
        "Type" => "Page", "Parent" => pages_id, "Contents" => contents,
        "Resources" => resources,
    });
    finish(doc, pages_id, vec![page.into()], None)
}
