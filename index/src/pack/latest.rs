//! `latest.json`: which pack of a folder is the newest, as the nightly
//! release and `cairn watch --pack-to` publish it and `cairn pull` reads it
//! (`{index_version, pack, sha256}`, the pack named relative to the file).

use super::{
    PackError, checksum_path, io_err, is_pack_name, pack, pack_name, remove_dead_partials,
};
use crate::ids::IndexVersion;
use crate::layout::IndexRoot;
use serde::{Deserialize, Serialize};
use std::fs;
use std::path::{Path, PathBuf};

/// The file's name.
pub const LATEST_FILE: &str = "latest.json";

/// What `latest.json` says.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Latest {
    /// The newest version.
    pub index_version: String,
    /// Its pack's file name, beside `latest.json`.
    pub pack: String,
    /// The pack's sha256.
    pub sha256: String,
}

/// Packs `version` into `dir` (unless its pack is already there), then
/// points `dir/latest.json` at it (by rename: a reader sees the old file or
/// the new one, and never a name whose pack is not whole), then keeps only
/// the `keep` newest packs there besides the one it names.
pub fn publish_latest(
    root: &IndexRoot,
    version: &IndexVersion,
    dir: &Path,
    keep: usize,
) -> Result<Latest, PackError> {
    fs::create_dir_all(dir).map_err(io_err(dir))?;
    let name = pack_name(version);
    let out = dir.join(&name);
    let sums = checksum_path(&out);
    let sha256 = match (out.is_file(), fs::read_to_string(&sums)) {
        (true, Ok(line)) => line.split_whitespace().next().unwrap_or("").to_owned(),
        _ => pack(root, version, &out)?.sha256,
    };
    let latest = Latest {
        index_version: version.to_string(),
        pack: name.clone(),
        sha256,
    };
    let path = dir.join(LATEST_FILE);
    let tmp = dir.join(format!(".{LATEST_FILE}.tmp"));
    let body = serde_json::to_vec(&latest).map_err(|e| io_err(&tmp)(e.into()))?;
    fs::write(&tmp, body).map_err(io_err(&tmp))?;
    fs::rename(&tmp, &path).map_err(io_err(&path))?;
    prune_packs(dir, &name, keep);
    Ok(latest)
}

/// Removes all but the `keep` (at least two) newest packs of `dir` (and
/// their checksums), never `named`, the one latest.json names.
fn prune_packs(dir: &Path, named: &str, keep: usize) {
    remove_dead_partials(dir);
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let mut packs: Vec<(std::time::SystemTime, PathBuf)> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| is_pack_name(p) && p.file_name().is_some_and(|n| n != named))
        .filter_map(|p| Some((fs::metadata(&p).and_then(|m| m.modified()).ok()?, p)))
        .collect();
    packs.sort_by(|a, b| b.cmp(a));
    // `named` counts as one of the `keep`; the one named before it always
    // stays too, for a replica that read the previous latest.json just now.
    for (_, p) in packs.into_iter().skip(keep.max(2) - 1) {
        let _ = fs::remove_file(checksum_path(&p));
        let _ = fs::remove_file(&p);
    }
}
