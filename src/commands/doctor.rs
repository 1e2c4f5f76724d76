//! `cairn doctor`: checks a machine before it builds or serves — the model
//! and its sha256, the index root and CURRENT, the tokens file's permissions,
//! free disk, the CPU features the embedder uses, and the GPU `--device cuda`
//! would use, and the configured model (`--llm-url`): that it answers, and
//! lists the model where it lists any. Each check says ok, warn or FAIL with what to do; any FAIL
//! exits 1.

use crate::cli::{DoctorArgs, LlmArgs};
use crate::commands::print_json;
use cairn_embed::{ModelSpec, Precision};
use cairn_index::layout::IndexRoot;
use cairn_index::manifest::{FORMAT_VERSION, Manifest};
use serde::Serialize;
use std::path::Path;
use std::process::ExitCode;

/// Below this much free disk at the index root a build may not fit (a
/// version of the shared corpus is about 0.5 GB, and a build writes a new
/// one beside the old).
const LOW_DISK_BYTES: u64 = 2 << 30;

/// One check's outcome.
#[derive(Serialize)]
#[serde(rename_all = "lowercase")]
enum Status {
    Ok,
    Warn,
    Fail,
}

/// One check.
#[derive(Serialize)]
struct Check {
    name: &'static str,
    status: Status,
    detail: String,
}

fn check(name: &'static str, status: Status, detail: impl Into<String>) -> Check {
    Check {
        name,
        status,
        detail: detail.into(),
    }
}

/// Runs every check.
pub fn run(a: DoctorArgs) -> anyhow::Result<ExitCode> {
    let mut checks = Vec::new();
    // The index named, or the first found; else every place looked is named.
    let root = match cairn_index::layout::find_root(a.open.index.as_deref()) {
        Ok(root) => root,
        Err(none) => {
            checks.push(check("index", Status::Warn, none.to_string()));
            cairn_index::layout::write_root(None).0
        }
    };
    let manifest = match checks.is_empty() {
        true => index_checks(&root, &mut checks),
        false => None,
    };
    model_check(a.open.model_dir.as_deref(), manifest.as_ref(), &mut checks);
    checks.push(tokens_check(&a.tokens));
    checks.push(disk_check(&root));
    checks.push(cpu_check());
    checks.push(gpu_check());
    if let Some(c) = llm_check(&a.llm) {
        checks.push(c);
    }
    let failed = checks.iter().any(|c| matches!(c.status, Status::Fail));
    if a.json {
        print_json(&checks)?;
    } else {
        for c in &checks {
            let tag = match c.status {
                Status::Ok => "ok  ",
                Status::Warn => "warn",
                Status::Fail => "FAIL",
            };
            println!("{tag}  {:8} {}", c.name, c.detail);
        }
    }
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// The index root and CURRENT; the current version's manifest when it reads.
fn index_checks(root: &Path, checks: &mut Vec<Check>) -> Option<Manifest> {
    if !root.is_dir() {
        checks.push(check(
            "index",
            Status::Warn,
            format!(
                "{} does not exist yet: `cairn build --out {}` makes it (or `cairn unpack`)",
                root.display(),
                root.display()
            ),
        ));
        return None;
    }
    if let Err(e) = std::fs::read_dir(root) {
        checks.push(check(
            "index",
            Status::Fail,
            format!("{} is not readable: {e}", root.display()),
        ));
        return None;
    }
    let layout = IndexRoot::new(root);
    let version = match layout.current() {
        Ok(v) => v,
        Err(e) => {
            checks.push(check("index", Status::Fail, format!("{e}")));
            return None;
        }
    };
    match layout.version_dir(&version).read_manifest() {
        Ok(m) => {
            checks.push(check(
                "index",
                Status::Ok,
                format!(
                    "{}: CURRENT is {version} (format {}, this binary reads {FORMAT_VERSION}), {} docs, built {}",
                    root.display(),
                    m.format_version,
                    m.counts.docs,
                    m.built_at
                ),
            ));
            Some(m)
        }
        Err(e) => {
            checks.push(check(
                "index",
                Status::Fail,
                format!("CURRENT is {version}, but {e}"),
            ));
            None
        }
    }
}

/// The model the index was built with (or `--model-dir`, or the default):
/// its files, and its weights' sha256 against the index's.
fn model_check(dir: Option<&Path>, manifest: Option<&Manifest>, checks: &mut Vec<Check>) {
    let spec = match (dir, manifest) {
        (Some(d), _) => ModelSpec::Dir(d.to_path_buf()),
        (None, Some(m)) => ModelSpec::recorded(&m.model.id, &m.model.revision),
        (None, None) => ModelSpec::default_hub(),
    };
    let files = match spec.locate() {
        Ok(f) => f,
        Err(e) => {
            checks.push(check(
                "model",
                Status::Fail,
                format!("{e}; run scripts/fetch-model.sh (or pass --model-dir). Search still answers in bm25 mode without it"),
            ));
            return;
        }
    };
    let sha = match std::fs::File::open(&files.weights).and_then(cairn_index::sha256_reader) {
        Ok((s, _)) => s,
        Err(e) => {
            checks.push(check(
                "model",
                Status::Fail,
                format!("{}: {e}", files.weights.display()),
            ));
            return;
        }
    };
    let (status, note) = match manifest {
        Some(m) if m.model.weights_sha256 == sha => {
            (Status::Ok, " — the index was built with it".to_owned())
        }
        Some(m) => (
            Status::Fail,
            format!(
                " — but the index was built with weights {}: queries would not match its vectors",
                m.model.weights_sha256
            ),
        ),
        None => (Status::Ok, String::new()),
    };
    checks.push(check(
        "model",
        status,
        format!(
            "{} at {}, weights sha256 {sha}{note}",
            files.id,
            files.weights.display()
        ),
    ));
}

/// The tokens file: absent is fine (no tokens yet); readable by others is not.
fn tokens_check(path: &Path) -> Check {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(_) => {
            return check(
                "tokens",
                Status::Ok,
                format!(
                    "{} does not exist (no tokens yet; `cairn token add NAME` makes it, mode 0600)",
                    path.display()
                ),
            );
        }
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = meta.permissions().mode() & 0o777;
        if mode & 0o077 != 0 {
            return check(
                "tokens",
                Status::Fail,
                format!(
                    "{} is mode {mode:o}: others may read the token hashes; chmod 600 it",
                    path.display()
                ),
            );
        }
        check(
            "tokens",
            Status::Ok,
            format!("{} (mode {mode:o})", path.display()),
        )
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        check("tokens", Status::Ok, format!("{}", path.display()))
    }
}

/// Free disk where the index lives (or would).
fn disk_check(root: &Path) -> Check {
    let at = root
        .ancestors()
        .find(|p| p.exists())
        .map_or_else(|| Path::new(".").to_path_buf(), Path::to_path_buf);
    match fs4::available_space(&at) {
        Ok(free) => {
            let gib = free as f64 / f64::from(1u32 << 30);
            let status = if free < LOW_DISK_BYTES {
                Status::Warn
            } else {
                Status::Ok
            };
            check(
                "disk",
                status,
                format!("{gib:.1} GiB free at {}", at.display()),
            )
        }
        Err(e) => check(
            "disk",
            Status::Warn,
            format!("free space at {} unknown: {e}", at.display()),
        ),
    }
}

/// What the CPU pass will run on this machine.
fn cpu_check() -> Check {
    let (precision, why) = match Precision::chosen() {
        Ok(chosen) => chosen,
        Err(e) => return check("cpu", Status::Fail, e.to_string()),
    };
    #[cfg(target_arch = "x86_64")]
    let features = {
        let f = [
            ("avx2", std::arch::is_x86_feature_detected!("avx2")),
            ("fma", std::arch::is_x86_feature_detected!("fma")),
            ("avx512f", std::arch::is_x86_feature_detected!("avx512f")),
            ("avx512bf16", Precision::Bf16.available()),
            ("amx-bf16", Precision::Amx.available()),
        ];
        f.iter()
            .map(|(n, on)| format!("{n} {}", if *on { "yes" } else { "no" }))
            .collect::<Vec<_>>()
            .join(", ")
    };
    #[cfg(not(target_arch = "x86_64"))]
    let features = std::env::consts::ARCH.to_owned();
    check(
        "cpu",
        Status::Ok,
        format!(
            "{} cores; the embedder's CPU pass runs in {}: {why} ({features})",
            std::thread::available_parallelism().map_or(1, |n| n.get()),
            precision.name()
        ),
    )
}

/// The GPU `--device cuda` would embed on, or why there is none. Never a
/// failure: builds and searches run on the CPU without one.
fn gpu_check() -> Check {
    if !cairn_embed::CUDA_BUILT {
        return check(
            "gpu",
            Status::Ok,
            "none used: this build has no `cuda` feature, so the model runs on the CPU \
             (`--device cuda` needs `cargo build --release --features cuda`)",
        );
    }
    match cairn_embed::gpu_info(0) {
        Ok(g) => {
            let gib = |b: u64| b as f64 / f64::from(1u32 << 30);
            check(
                "gpu",
                Status::Ok,
                format!(
                    "{}: compute capability {}.{}, {:.1} GiB ({:.1} GiB free); `--device cuda` embeds on it",
                    g.name,
                    g.compute_capability.0,
                    g.compute_capability.1,
                    gib(g.total_bytes),
                    gib(g.free_bytes)
                ),
            )
        }
        Err(e) => check(
            "gpu",
            Status::Warn,
            format!("{e}; builds run on the CPU (`--device cpu`)"),
        ),
    }
}

/// The configured model, when there is one: its configuration, then a
/// one-word completion (and its model list, where the endpoint has one).
fn llm_check(args: &LlmArgs) -> Option<Check> {
    use cairn_serve::llm::LlmClient;
    let config = match args.config() {
        Ok(Some(config)) => config,
        Ok(None) => return None,
        Err(e) => return Some(check("llm", Status::Fail, e.to_string())),
    };
    let what = format!("{} at {}", config.model, config.url);
    Some(match LlmClient::new(config).probe() {
        Ok(p) if p.listed == Some(false) => check(
            "llm",
            Status::Warn,
            format!(
                "{what} answered in {} ms, but its model list does not name it: check --llm-model",
                p.latency.as_millis()
            ),
        ),
        Ok(p) => check(
            "llm",
            Status::Ok,
            format!(
                "{what} answered in {} ms ({} tokens)",
                p.latency.as_millis(),
                p.tokens
            ),
        ),
        Err(e) => check("llm", Status::Fail, e.to_string()),
    })
}
