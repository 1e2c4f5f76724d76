//! Shippable packs: one published version as `cairn-index-<version>.tar.zst`
//! with a `sha256sum`-style `.sha256` file beside it, and adopting a pack
//! into an index root.
//!
//! Adopting checks the pack's sha256, unpacks it under `tmp/`, verifies every
//! file against the version's own manifest, and only then renames it into
//! `versions/` and points CURRENT at it: a damaged or forged pack never
//! becomes visible, and the version serving before keeps serving.

use crate::layout::{LayoutError, VersionDir};
use crate::{IndexRoot, IndexVersion, verify_version};
use sha2::{Digest, Sha256};
use std::fs::{self, File};
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::{Component, Path, PathBuf};

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

fn checksum_path(pack: &Path) -> PathBuf {
    let mut name = pack.as_os_str().to_owned();
    name.push(".sha256");
    PathBuf::from(name)
}

fn hash_file(path: &Path) -> Result<String, PackError> {
    let mut f = BufReader::new(File::open(path).map_err(io_err(path))?);
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = f.read(&mut buf).map_err(io_err(path))?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(hex::encode(h.finalize()))
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
    let tmp = out.with_extension("partial");
    {
        let file = File::create(&tmp).map_err(io_err(&tmp))?;
        let zst = zstd::Encoder::new(BufWriter::new(file), 10).map_err(io_err(&tmp))?;
        let mut tar = tar::Builder::new(zst);
        for rel in files_under(dir.path())? {
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

/// Checks `pack` against its `.sha256`, unpacks it into `root`, verifies it,
/// publishes it and points CURRENT at it. Returns the version now current.
pub fn unpack(pack: &Path, root: &IndexRoot) -> Result<IndexVersion, PackError> {
    let sums = checksum_path(pack);
    let expected = match fs::read_to_string(&sums) {
        Ok(t) => t
            .split_whitespace()
            .next()
            .unwrap_or("")
            .to_ascii_lowercase(),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(PackError::NoChecksum(pack.to_owned()));
        }
        Err(e) => return Err(io_err(&sums)(e)),
    };
    let actual = hash_file(pack)?;
    if expected != actual {
        return Err(PackError::ChecksumMismatch {
            path: pack.to_owned(),
            expected,
            actual,
        });
    }
    let bad = |reason: String| PackError::BadPack {
        path: pack.to_owned(),
        reason,
    };
    let scratch = root.scratch_dir("unpack")?;
    let result = (|| {
        let file = File::open(pack).map_err(io_err(pack))?;
        let zst = zstd::Decoder::new(file).map_err(io_err(pack))?;
        let mut archive = tar::Archive::new(zst);
        let mut version: Option<IndexVersion> = None;
        for entry in archive.entries().map_err(io_err(pack))? {
            let mut entry = entry.map_err(io_err(pack))?;
            if entry.header().entry_type() != tar::EntryType::Regular {
                return Err(bad("holds something other than plain files".to_owned()));
            }
            let path = entry.path().map_err(io_err(pack))?.into_owned();
            let mut parts = path.components();
            let top = match parts.next() {
                Some(Component::Normal(top)) => top.to_string_lossy().into_owned(),
                _ => {
                    return Err(bad(format!(
                        "entry {path:?} is not inside a version folder"
                    )));
                }
            };
            let v = IndexVersion::parse(&top)
                .map_err(|_| bad(format!("top folder {top:?} is not a version")))?;
            if version.as_ref().is_some_and(|known| *known != v) {
                return Err(bad("holds more than one version".to_owned()));
            }
            if !parts.clone().all(|c| matches!(c, Component::Normal(_))) || parts.next().is_none() {
                return Err(bad(format!("entry {path:?} has an unsafe path")));
            }
            let target = scratch.join(&path);
            if let Some(parent) = target.parent() {
                fs::create_dir_all(parent).map_err(io_err(parent))?;
            }
            let mut out = File::create(&target).map_err(io_err(&target))?;
            io::copy(&mut entry, &mut out).map_err(io_err(&target))?;
            out.sync_all().map_err(io_err(&target))?;
            version = Some(v);
        }
        let version = version.ok_or_else(|| bad("is empty".to_owned()))?;
        let unpacked = VersionDir::at(scratch.join(version.as_str()));
        let report = verify_version(&unpacked, &version)?;
        if !report.ok() {
            return Err(PackError::Verify {
                path: pack.to_owned(),
                problems: report.problems.join("; "),
            });
        }
        root.adopt(&unpacked, &version)?;
        root.set_current(&version)?;
        Ok(version)
    })();
    // The scratch folder holds nothing anyone needs once adopted or refused.
    let _ = fs::remove_dir_all(&scratch);
    result
}

/// Adopts every pack named `cairn-index-<version>.tar.zst` lying in the
/// root's own folder whose version is not published yet (a nightly job drops
/// them there: checksum first, then the pack by an atomic rename). A pack
/// whose checksum has not arrived yet waits; one that fails is renamed
/// `<pack>.rejected`, so it is not tried again. Returns what happened to
/// each pack tried.
pub fn adopt_dropped_packs(root: &IndexRoot) -> Vec<(PathBuf, Result<IndexVersion, PackError>)> {
    let Ok(entries) = fs::read_dir(root.path()) else {
        return Vec::new();
    };
    let mut packs: Vec<(std::time::SystemTime, PathBuf)> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .filter_map(|p| {
            let v = version_from_name(&p)?;
            let published = root.version_dir(&v).path().is_dir();
            let mtime = fs::metadata(&p).and_then(|m| m.modified()).ok()?;
            (!published).then_some((mtime, p))
        })
        .collect();
    // Oldest first, so the newest pack ends up CURRENT.
    packs.sort();
    packs
        .into_iter()
        .filter(|(_, p)| checksum_path(p).is_file())
        .map(|(_, p)| {
            let r = unpack(&p, root);
            if r.is_err() {
                let mut rejected = p.as_os_str().to_owned();
                rejected.push(".rejected");
                let _ = fs::rename(&p, PathBuf::from(rejected));
            }
            (p, r)
        })
        .collect()
}
