//! Fixture repositories, configs and the tiny model, built fresh in a temp folder.

use git2::Repository;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A fixture world: two git repos, a config, a tiny model, output and cache folders.
pub struct World {
    pub dir: tempfile::TempDir,
    pub alpha: PathBuf,
    pub beta: PathBuf,
    pub model: PathBuf,
}

/// A notebook with markdown, code with an output, an escaped quote, a
/// non-ASCII character and a cell whose source is one string, not a list.
pub const NOTEBOOK: &str = r##"{
 "cells": [
  {
   "cell_type": "markdown",
   "metadata": {},
   "source": [
    "# Fitting a light curve\n",
    "Load the data, then fit."
   ]
  },
  {
   "cell_type": "code",
   "execution_count": 1,
   "metadata": {},
   "outputs": [
    {
     "name": "stdout",
     "output_type": "stream",
     "text": ["0.5\n"]
    }
   ],
   "source": [
    "import alpha\n",
    "model = alpha.fit_model(data)\n",
    "print(\"t_E ≈ 1 day\")"
   ]
  },
  {
   "cell_type": "code",
   "execution_count": null,
   "metadata": {},
   "outputs": [],
   "source": "curve = model.magnification(0.5)\ncurve"
  }
 ],
 "metadata": {},
 "nbformat": 4,
 "nbformat_minor": 5
}
"##;

fn alpha_files() -> Vec<(&'static str, Vec<u8>)> {
    let mut big = String::new();
    while big.len() < 30_000 {
        big.push_str("this line makes the file larger than the cap of the fixture build\n");
    }
    vec![
        ("README.md", b"# Alpha\n\nAlpha fits light curves.\n\n## Install\n\npip install alpha\n\n## Usage\n\nCall fit_model on your data.\nIt returns a Model.\n".to_vec()),
        ("src/alpha/core.py", b"\"\"\"Core of alpha.\"\"\"\nimport math\n\n\ndef fit_model(data, t_E=1.0):\n    \"\"\"Fit a point lens model to data.\"\"\"\n    return [math.sqrt(x) for x in data]\n\n\nclass Model:\n    def __init__(self, t_0, u_0):\n        self.t_0 = t_0\n        self.u_0 = u_0\n\n    def magnification(self, time):\n        return 1.0 + self.u_0 * time\n".to_vec()),
        ("docs/guide.rst", b"Guide\n=====\n\nHow to use alpha.\n\nParameters\n----------\n\nThe parameters are t_0, u_0 and t_E.\nEach is a float.\n".to_vec()),
        ("src/alpha/nofinal.py", b"def last():\n    return 'no newline at the end'".to_vec()),
        ("docs/crlf.txt", b"first line\r\nsecond line\r\nthird line\r\n".to_vec()),
        ("notebooks/demo.ipynb", NOTEBOOK.as_bytes().to_vec()),
        ("data/blob.bin", vec![0u8, 1, 2, 3, 0, 255]),
        ("data/latin1.txt", b"caf\xe9 au lait\n".to_vec()),
        ("data/big.txt", big.into_bytes()),
        ("data/lightcurve.dat", b"version https://git-lfs.github.com/spec/v1\noid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\nsize 12345\n".to_vec()),
    ]
}

fn beta_files() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        ("README.md", b"# Beta\n\nBeta computes binary lens magnification in C++.\n".to_vec()),
        ("lib/beta.cpp", b"#include <cmath>\n\n// Binary lens magnification.\ndouble BinaryMag(double s, double q) {\n    return std::sqrt(s * q);\n}\n\nint main() {\n    return 0;\n}\n".to_vec()),
    ]
}

pub use cairn_pipeline::fixtures::commit;
use cairn_pipeline::fixtures::init_repo as init;

impl World {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let alpha = dir.path().join("repos/alpha");
        let beta = dir.path().join("repos/beta");
        let a = init(&alpha, "main");
        let first = commit(&a, &alpha_files(), "first");
        a.tag_lightweight("v1", &a.find_object(first, None).expect("obj"), false)
            .expect("tag");
        let b = init(&beta, "master");
        commit(&b, &beta_files(), "first");
        let model = dir.path().join("model");
        cairn_embed::fixtures::write_tiny_bert(&model).expect("tiny model");
        let w = Self {
            dir,
            alpha,
            beta,
            model,
        };
        w.write_config("");
        w
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// Writes config/repositories.yml (with `alpha_extra` lines added to alpha's entry) and build.yaml.
    pub fn write_config(&self, alpha_extra: &str) {
        let yml = format!(
            "science:\n  - name: alpha\n    url: ../repos/alpha\n    web_url: https://github.com/example/alpha\n    description: Alpha fits light curves\n{alpha_extra}tools:\n  - name: beta\n    url: {}\n    web_url: https://github.com/example/beta\n",
            self.beta.display()
        );
        self.write("config/repositories.yml", &yml);
        self.write(
            "config/build.yaml",
            "max_file_bytes: 20000\nchunk_max_lines: 30\n",
        );
    }

    pub fn write(&self, rel: &str, text: &str) {
        let p = self.path(rel);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, text).expect("write");
    }

    pub fn alpha_repo(&self) -> Repository {
        Repository::open(&self.alpha).expect("open alpha")
    }

    /// `cairn build` of beta alone into `out`, with the same settings: the
    /// index a caller outside alpha's groups must be answered as if by.
    pub fn build_without_alpha(&self, out: &str) -> Output {
        let yml = format!(
            "tools:\n  - name: beta\n    url: {}\n    web_url: https://github.com/example/beta\n",
            self.beta.display()
        );
        self.write("config/absent.yml", &yml);
        let path = |rel: &str| self.path(rel).to_str().expect("utf8").to_owned();
        cairn(&[
            "build",
            "--config",
            &path("config/absent.yml"),
            "--settings",
            &path("config/build.yaml"),
            "--out",
            &path(out),
            "--cache",
            &path("cache"),
            "--model-dir",
            self.model.to_str().expect("utf8"),
        ])
    }

    /// A reading command (`search`, `retrieve`, `history` …) over the index in
    /// `out` with the tiny model, as JSON; it must succeed.
    pub fn json(&self, out: &str, args: &[&str]) -> serde_json::Value {
        let (index, model) = (self.path(out), self.model.clone());
        let mut all: Vec<&str> = args.to_vec();
        all.extend([
            "--index",
            index.to_str().expect("utf8"),
            "--model-dir",
            model.to_str().expect("utf8"),
            "--json",
        ]);
        let o = cairn(&all);
        assert!(o.status.success(), "{all:?}: {}", stderr(&o));
        serde_json::from_str(&stdout(&o)).expect("json")
    }

    /// `cairn build` into `out` with the tiny model and the shared cache; `extra` args appended.
    pub fn build(&self, out: &str, extra: &[&str]) -> Output {
        self.build_with(out, "cache", Some(&self.model), extra)
    }

    /// `cairn build` into `out` with `cache`, and the model in `model` (None: the hub cache).
    pub fn build_with(
        &self,
        out: &str,
        cache: &str,
        model: Option<&Path>,
        extra: &[&str],
    ) -> Output {
        let config = self.path("config/repositories.yml");
        let (out, cache) = (self.path(out), self.path(cache));
        let mut args = vec![
            "build",
            "--config",
            config.to_str().expect("utf8"),
            "--out",
            out.to_str().expect("utf8"),
            "--cache",
            cache.to_str().expect("utf8"),
        ];
        if let Some(m) = model {
            args.extend(["--model-dir", m.to_str().expect("utf8")]);
        }
        args.extend(extra);
        cairn(&args)
    }
}

/// Runs the cairn binary.
pub fn cairn(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(args)
        .env("CAIRN_LOG", "warn")
        .output()
        .expect("run cairn")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The published version folder CURRENT names under `out`.
pub fn current_dir(out: &Path) -> PathBuf {
    let v = std::fs::read_to_string(out.join("CURRENT")).expect("CURRENT");
    out.join("versions").join(v.trim())
}

pub fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).expect("read json")).expect("parse json")
}

/// A manifest's skipped files: path → reason.
pub fn skip_reasons(manifest: &serde_json::Value) -> std::collections::BTreeMap<String, String> {
    manifest["skipped"]
        .as_array()
        .expect("skipped")
        .iter()
        .map(|s| {
            (
                s["path"].as_str().expect("path").to_owned(),
                s["reason"].as_str().expect("reason").to_owned(),
            )
        })
        .collect()
}

/// Whether a tool an optional test needs is `present`; when it is not, the
/// test says how to get it (`install`) and is skipped, unless the variable
/// `require` is `1` (as `.ci/run` sets it, after installing the tool).
pub fn tool_present(present: bool, require: &str, install: &str) -> bool {
    if !present {
        cairn_embed::fixtures::skip_unless_required(require, install);
    }
    present
}
