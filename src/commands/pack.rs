//! `cairn pack`: one version as a checked `.tar.zst` and its `.sha256`.

use crate::cli::PackArgs;
use crate::commands::print_json;
use anyhow::Context;
use cairn_index::{IndexRoot, IndexVersion};
use std::process::ExitCode;

/// Writes the pack into `--out-dir`.
pub fn run(a: PackArgs) -> anyhow::Result<ExitCode> {
    let root = IndexRoot::new(crate::cli::index_root(a.index.as_deref())?);
    let version = match a.version {
        Some(v) => IndexVersion::parse(&v)?,
        None => root.current()?,
    };
    std::fs::create_dir_all(&a.out_dir)
        .with_context(|| format!("creating {}", a.out_dir.display()))?;
    let out = a.out_dir.join(cairn_index::pack::pack_name(&version));
    let info = cairn_index::pack::pack(&root, &version, &out)?;
    if a.json {
        print_json(&info)?;
    } else {
        println!(
            "{} ({} bytes, sha256 {})\n{}",
            info.path.display(),
            info.bytes,
            info.sha256,
            info.checksum_path.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}
