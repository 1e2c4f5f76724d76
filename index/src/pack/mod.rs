//! Shippable packs: one published version as `cairn-index-<version>.tar.zst`
//! with a `sha256sum`-style `.sha256` file beside it, and adopting a pack
//! into an index root.
//!
//! Adopting checks the pack's sha256, unpacks it under `tmp/`, verifies every
//! file against the version's own manifest, and only then renames it into
//! `versions/` and points CURRENT at it: a damaged or forged pack never
//! becomes visible, and the version serving before keeps serving.

mod dropped;
mod latest;
mod unpack;

pub use dropped::{Dropped, PACKS_DIR, adopt_dropped_packs, drop_pack};
pub use latest::{LATEST_FILE, Latest, publish_latest};
pub use unpack::{MAX_MANIFEST_BYTES, MAX_UNPACKED_BYTES, Rollback, Unpacked, unpack};

use crate::ids::IndexVersion;
use crate::layout::IndexRoot;
use crate::layout::LayoutError;
use crate::verify::verify_version;
use std::fs::{self, File};
use std::io::{self, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

/// File name prefix of packs; `cairn-index-<version>.tar.zst`.
pub const PACK_PREFIX: &str = "cairn-index-";
/// File name suffix of packs.
pub const PACK_SUFFIX: &str = ".tar.zst";

/// Why a pack could not be written or adopted.
#[derive(Debug, thiserror::Error)]
pub enum PackError {
    /// Reading or writing a file failed.
    #[error("{path}: {source}")]
    Io {
        /// The path concerned.
        path: PathBuf,
        /// The OS error.
        source: io::Error,
    },
    /// The index layout is unreadable.
    #[error(transparent)]
    Layout(#[from] LayoutError),
    /// No `.sha256` beside the pack.
    #[error("{0}: no checksum file beside the pack; refusing to unpack it unchecked")]
    NoChecksum(PathBuf),
    /// The pack's bytes do not match its checksum file.
    #[error("{path}: sha256 is {actual}, but the checksum file says {expected}")]
    ChecksumMismatch {
        /// The pack.
        path: PathBuf,
        /// What the `.sha256` file says.
        expected: String,
        /// What the bytes hash to.
        actual: String,
    },
    /// The archive is not one cairn version.
    #[error("{path}: {reason}")]
    BadPack {
        /// The pack.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The unpacked version does not match its manifest.
    #[error("{path}: the unpacked version fails verification: {problems}")]
    Verify {
        /// The pack.
        path: PathBuf,
        /// The problems, joined.
        problems: String,
    },
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> PackError + '_ {
    move |source| PackError::Io {
        path: path.to_owned(),
        source,
    }
}

/// What `pack` wrote.
#[derive(Clone, Debug, serde::Serialize)]
pub struct PackInfo {
    /// The pack file.
    pub path: PathBuf,
    /// Its checksum file.
    pub checksum_path: PathBuf,
    /// sha256 of the pack.
    pub sha256: String,
    /// The version inside.
    pub index_version: IndexVersion,
    /// Size of the pack.
    pub bytes: u64,
}

/// The pack file name for `version`.
pub fn pack_name(version: &IndexVersion) -> String {
    format!("{PACK_PREFIX}{version}{PACK_SUFFIX}")
}

/// The version a pack's file name names, if it follows [`pack_name`].
pub fn version_from_name(path: &Path) -> Option<IndexVersion> {
    let name = path.file_name()?.to_str()?;
    let v = name.strip_prefix(PACK_PREFIX)?.strip_suffix(PACK_SUFFIX)?;
    IndexVersion::parse(v).ok()
}

/// Whether `path` is named like a pack (`cairn-index-*.tar.zst`), whatever version it names.
fn is_pack_name(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with(PACK_PREFIX) && n.ends_with(PACK_SUFFIX))
}

fn checksum_path(pack: &Path) -> PathBuf {
    let mut name = pack.as_os_str().to_owned();
    name.push(".sha256");
    PathBuf::from(name)
}

fn hash_file(path: &Path) -> Result<String, PackError> {
    File::open(path)
        .and_then(|f| crate::sha256_reader(BufReader::new(f)))
        .map(|(sha, _)| sha)
        .map_err(io_err(path))
}

/// Relative paths of every file under `dir`, sorted, `/`-separated.
fn files_under(dir: &Path) -> Result<Vec<String>, PackError> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).map_err(io_err(&d))? {
            let path = entry.map_err(io_err(&d))?.path();
            if path.is_dir() {
                stack.push(path);
            } else if let Ok(rel) = path.strip_prefix(dir) {
                out.push(
                    rel.components()
                        .map(|c| c.as_os_str().to_string_lossy().into_owned())
                        .collect::<Vec<_>>()
                        .join("/"),
                );
            }
        }
    }
    out.sort();
    Ok(out)
}

/// The extension of a pack being written (`cairn-index-<v>.tar.partial`).
const PARTIAL_EXTENSION: &str = "partial";

/// Removes the partial packs in `dir` that no live writer holds (each
/// writer holds its own locked until it is renamed whole): what a deploy or
/// an OOM kill left of an interrupted pack, up to a whole pack each time.
/// Answers the paths removed.
pub fn remove_dead_partials(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut removed = Vec::new();
    for path in entries.flatten().map(|e| e.path()) {
        let partial = path.extension().is_some_and(|e| e == PARTIAL_EXTENSION)
            && path
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(PACK_PREFIX));
        if !partial {
            continue;
        }
        // The lock is dropped with the handle, after the file is gone.
        let Ok(file) = File::open(&path) else {
            continue;
        };
        if file.try_lock().is_ok() && fs::remove_file(&path).is_ok() {
            removed.push(path);
        }
    }
    removed
}

/// Writes `version` of `root` as a pack at `out` (and `out.sha256`). The
/// version is verified first: a broken version is never shipped. The archive
/// is deterministic (sorted entries, zeroed times and owners).
pub fn pack(root: &IndexRoot, version: &IndexVersion, out: &Path) -> Result<PackInfo, PackError> {
    let dir = root.version_dir(version);
    let report = verify_version(&dir, version)?;
    if !report.ok() {
        return Err(PackError::Verify {
            path: dir.path().to_owned(),
            problems: report.problems.join("; "),
        });
    }
    let tmp = out.with_extension(PARTIAL_EXTENSION);
    if let Some(dir) = out.parent() {
        remove_dead_partials(dir);
    }
    {
        // Held locked while it is written: a partial file nobody holds is
        // what an interrupted pack left, and the next pack or prune removes it.
        let file = fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(&tmp)
            .map_err(io_err(&tmp))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(fs::TryLockError::WouldBlock) => {
                return Err(PackError::Io {
                    path: tmp.clone(),
                    source: io::Error::new(
                        io::ErrorKind::WouldBlock,
                        "another process is writing this pack now",
                    ),
                });
            }
            Err(fs::TryLockError::Error(e)) => return Err(io_err(&tmp)(e)),
        }
        file.set_len(0).map_err(io_err(&tmp))?;
        let zst = zstd::Encoder::new(BufWriter::new(file), 10).map_err(io_err(&tmp))?;
        let mut tar = tar::Builder::new(zst);
        // The manifest first: an adopter reads it before anything else and
        // bounds every later entry by it (see `unpack`).
        let mut rels = files_under(dir.path())?;
        rels.sort_by_key(|r| r != crate::layout::files::MANIFEST);
        for rel in rels {
            let path = dir.path().join(&rel);
            let mut f = File::open(&path).map_err(io_err(&path))?;
            let len = f.metadata().map_err(io_err(&path))?.len();
            let mut header = tar::Header::new_ustar();
            header.set_size(len);
            header.set_mode(0o644);
            header.set_mtime(0);
            header.set_uid(0);
            header.set_gid(0);
            header.set_entry_type(tar::EntryType::Regular);
            tar.append_data(&mut header, format!("{version}/{rel}"), &mut f)
                .map_err(io_err(&tmp))?;
        }
        let zst = tar.into_inner().map_err(io_err(&tmp))?;
        let mut w = zst.finish().map_err(io_err(&tmp))?;
        w.flush().map_err(io_err(&tmp))?;
        w.get_ref().sync_all().map_err(io_err(&tmp))?;
    }
    // The checksum goes first and the pack appears whole by rename, so a
    // server watching this folder never sees a pack without its checksum.
    let sha256 = hash_file(&tmp)?;
    let name = out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let checksum_path = checksum_path(out);
    fs::write(&checksum_path, format!("{sha256}  {name}\n")).map_err(io_err(&checksum_path))?;
    fs::rename(&tmp, out).map_err(io_err(out))?;
    Ok(PackInfo {
        bytes: fs::metadata(out).map_err(io_err(out))?.len(),
        path: out.to_owned(),
        checksum_path,
        sha256,
        index_version: version.clone(),
    })
}
