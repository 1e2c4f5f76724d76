//! Packs dropped into `<root>/packs/` (a pull, a copy): each adopted once,
//! set aside when it fails, and the folder pruned; `drop_pack` writes one
//! there, hashed on the way in.

use super::unpack::DISK_RESERVE;
use super::{
    PACK_PREFIX, PACK_SUFFIX, PackError, Rollback, Unpacked, checksum_path, io_err, is_pack_name,
    pack_name, unpack, version_from_name,
};
use crate::ids::IndexVersion;
use crate::layout::IndexRoot;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::{fs, io};

/// Where packs go once tried: `<root>/packs/adopted/` and `<root>/packs/rejected/`.
pub const PACKS_DIR: &str = "packs";

/// What happened to one dropped pack.
#[derive(Debug)]
pub enum Dropped {
    /// Adopted: its version is CURRENT.
    Adopted(Unpacked),
    /// Not adopted, and why: older than CURRENT, already published, or a
    /// failed check (the error).
    Refused(String),
}

/// Adopts the packs (`cairn-index-*.tar.zst`) lying in the root's own folder,
/// oldest first. Each is tried exactly once: afterwards it and its checksum
/// are moved to `packs/adopted/` or `packs/rejected/`, where nothing looks
/// for packs, so a pruned or rolled-back version never comes back by itself.
/// A pack waits while its `.sha256` has not arrived; a pack older than
/// CURRENT's version, or whose version is already published, changes
/// nothing. Afterwards only the `keep` newest versions (and CURRENT) and the
/// `keep` newest packs of each folder remain.
pub fn adopt_dropped_packs(root: &IndexRoot, keep: usize) -> Vec<(PathBuf, Dropped)> {
    let Ok(entries) = fs::read_dir(root.path()) else {
        return Vec::new();
    };
    let mut packs: Vec<(std::time::SystemTime, PathBuf)> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file() && is_pack_name(p) && checksum_path(p).is_file())
        .filter_map(|p| Some((fs::metadata(&p).and_then(|m| m.modified()).ok()?, p)))
        .collect();
    if packs.is_empty() {
        return Vec::new();
    }
    // Oldest first, so the newest pack ends up CURRENT.
    packs.sort();
    let mut outcomes = Vec::new();
    for (_, pack) in packs {
        let named = version_from_name(&pack);
        let outcome = match named {
            Some(v) if root.version_dir(&v).path().is_dir() => {
                Dropped::Refused(format!("version {v} is already published"))
            }
            None => Dropped::Refused(format!(
                "not named for a version ({PACK_PREFIX}<16 hex digits>{PACK_SUFFIX})"
            )),
            // Moved out of the root before it is read: a pack that kills the
            // process while being tried is never tried again at the restart.
            Some(_) => match set_aside(root, &pack, "trying") {
                Err(e) => Dropped::Refused(format!("could not move it aside to try it: {e}")),
                Ok(trying) => {
                    let outcome = match unpack(&trying, root, Rollback::Refuse) {
                        Ok(u) if u.current => Dropped::Adopted(u),
                        Ok(u) => Dropped::Refused(format!(
                            "version {} was built at {}, before CURRENT's {}",
                            u.version, u.built_at, u.previous_built_at
                        )),
                        Err(e) => Dropped::Refused(e.to_string()),
                    };
                    outcomes.push((pack, outcome));
                    let tried = outcomes.last().map(|(_, o)| o);
                    let folder = match tried {
                        Some(Dropped::Adopted(_)) => "adopted",
                        _ => "rejected",
                    };
                    if let Err(e) = set_aside(root, &trying, folder) {
                        tracing::error!(pack = %trying.display(), error = %e, "could not move a tried pack aside");
                    }
                    continue;
                }
            },
        };
        if let Err(e) = set_aside(root, &pack, "rejected") {
            tracing::error!(pack = %pack.display(), error = %e, "could not move a tried pack aside");
        }
        outcomes.push((pack, outcome));
    }
    if outcomes
        .iter()
        .any(|(_, o)| matches!(o, Dropped::Adopted(_)))
        && let Err(e) = root.prune(keep)
    {
        tracing::error!(error = %e, "pruning old versions failed");
    }
    for folder in ["adopted", "rejected", "trying"] {
        prune_packs(&root.path().join(PACKS_DIR).join(folder), keep);
    }
    outcomes
}

/// Moves a pack and its checksum into `packs/<folder>/`; returns where the pack is now.
fn set_aside(root: &IndexRoot, pack: &Path, folder: &str) -> io::Result<PathBuf> {
    let dir = root.path().join(PACKS_DIR).join(folder);
    fs::create_dir_all(&dir)?;
    for from in [checksum_path(pack), pack.to_owned()] {
        if let Some(name) = from.file_name() {
            match fs::rename(&from, dir.join(name)) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
                _ => {}
            }
        }
    }
    Ok(dir.join(pack.file_name().unwrap_or_default()))
}

/// Keeps the `keep` newest packs (with their checksums) in `dir`.
fn prune_packs(dir: &Path, keep: usize) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let mut packs: Vec<(std::time::SystemTime, PathBuf)> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| is_pack_name(p))
        .filter_map(|p| Some((fs::metadata(&p).and_then(|m| m.modified()).ok()?, p)))
        .collect();
    packs.sort_by(|a, b| b.cmp(a));
    for (_, p) in packs.into_iter().skip(keep.max(1)) {
        let _ = fs::remove_file(checksum_path(&p));
        let _ = fs::remove_file(&p);
    }
}

/// Writes a pack that arrives as a stream (a download) into `root` for
/// adoption: the bytes go to a scratch file while they are hashed, and only
/// when they hash to `expected_sha256` do the `.sha256` and then the pack
/// (by an atomic rename) appear in the root, as a dropped pack must. A
/// mismatch, or more than `max_bytes`, leaves nothing behind. Returns the
/// dropped pack's path.
pub fn drop_pack(
    root: &IndexRoot,
    version: &IndexVersion,
    bytes: impl io::Read,
    expected_sha256: &str,
    max_bytes: u64,
) -> Result<PathBuf, PackError> {
    let name = pack_name(version);
    let dir = root.path();
    fs::create_dir_all(dir).map_err(io_err(dir))?;
    let part = dir.join(format!(".{name}.part"));
    // The download stops at the limit or where the disk would fill, whichever is first.
    let free = fs4::available_space(dir).map_or(u64::MAX, |f| f.saturating_sub(DISK_RESERVE));
    let limit = max_bytes.min(free);
    let too_large = || PackError::BadPack {
        path: dir.join(&name),
        reason: match limit == max_bytes {
            true => format!("is larger than the {max_bytes}-byte limit; nothing was dropped"),
            false => format!(
                "is larger than the {limit} bytes {} can take; nothing was dropped",
                dir.display()
            ),
        },
    };
    let written = (|| {
        let mut out = BufWriter::new(File::create(&part)?);
        let mut hasher = HashingReader::new(bytes.take(limit.saturating_add(1)));
        let n = io::copy(&mut hasher, &mut out)?;
        out.into_inner()
            .map_err(io::IntoInnerError::into_error)?
            .sync_all()?;
        Ok::<_, io::Error>((n, hasher.finish()))
    })();
    let written = match written {
        Ok((n, _)) if n > limit => {
            let _ = fs::remove_file(&part);
            return Err(too_large());
        }
        other => other.map(|(_, sha)| sha),
    };
    let actual = match written {
        Ok(sha) => sha,
        Err(e) => {
            let _ = fs::remove_file(&part);
            return Err(io_err(&part)(e));
        }
    };
    let pack = dir.join(&name);
    if !actual.eq_ignore_ascii_case(expected_sha256.trim()) {
        let _ = fs::remove_file(&part);
        return Err(PackError::ChecksumMismatch {
            path: pack,
            expected: expected_sha256.trim().to_owned(),
            actual,
        });
    }
    let sums = checksum_path(&pack);
    fs::write(&sums, format!("{actual}  {name}\n")).map_err(io_err(&sums))?;
    fs::rename(&part, &pack).map_err(io_err(&pack))?;
    Ok(pack)
}

/// A reader that hashes what passes through it.
struct HashingReader<R> {
    inner: R,
    hasher: sha2::Sha256,
}

impl<R: io::Read> HashingReader<R> {
    fn new(inner: R) -> Self {
        Self {
            inner,
            hasher: <sha2::Sha256 as sha2::Digest>::new(),
        }
    }

    fn finish(self) -> String {
        hex::encode(sha2::Digest::finalize(self.hasher))
    }
}

impl<R: io::Read> io::Read for HashingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        sha2::Digest::update(&mut self.hasher, &buf[..n]);
        Ok(n)
    }
}
