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
use std::cell::Cell;
use std::fs::{self, File};
use std::io::{self, BufReader, BufWriter, Write};
use std::path::{Component, Path, PathBuf};
use std::rc::Rc;

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
        // The manifest first: an adopter reads it before anything else and
        // bounds every later entry by it (see `unpack`).
        let mut rels = files_under(dir.path())?;
        rels.sort_by_key(|r| r != MANIFEST);
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

/// Whether adopting a pack may make an older version current.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rollback {
    /// A pack built before CURRENT's version is not adopted (the default
    /// everywhere the server acts on its own).
    Refuse,
    /// The operator asked for this pack whatever its age.
    Allow,
}

/// What adopting one pack did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unpacked {
    /// The version inside the pack.
    pub version: IndexVersion,
    /// Whether CURRENT now names it (false: it was older than CURRENT and
    /// rollbacks were refused, so nothing changed).
    pub current: bool,
    /// When the pack's version was built.
    pub built_at: String,
    /// When the version CURRENT named before was built (empty: none).
    pub previous_built_at: String,
}

/// Checks `pack` against its `.sha256`, unpacks it into `root`, verifies it,
/// publishes it and points CURRENT at it, unless it is older than CURRENT's
/// version (by `built_at`) and `rollback` refuses that.
///
/// A pack is untrusted bytes until verified, so nothing is written that its
/// manifest did not announce: the manifest must be the first entry (at most
/// [`MAX_MANIFEST_BYTES`]); every later entry must be a file it lists, of
/// the size it lists; the total must fit [`MAX_UNPACKED_BYTES`] and the free
/// disk. A pack named for a version must hold that version. When the version
/// is already published, the copy on disk decides its age, never the pack.
pub fn unpack(pack: &Path, root: &IndexRoot, rollback: Rollback) -> Result<Unpacked, PackError> {
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
    let file = File::open(pack).map_err(io_err(pack))?;
    let zst = zstd::Decoder::new(file).map_err(io_err(pack))?;
    // Every decompressed byte counts, headers and the tar's own extension
    // records included (tar reads those whole, before any entry is seen):
    // first against the manifest's limit, then against what it lists.
    let budget = Rc::new(Cell::new(MAX_MANIFEST_BYTES + TAR_SLACK));
    let mut archive = tar::Archive::new(Budgeted {
        inner: zst,
        left: Rc::clone(&budget),
    });
    let mut entries = archive.entries().map_err(io_err(pack))?;
    let (version, manifest_bytes) = match entries.next() {
        Some(first) => read_manifest_entry(first.map_err(io_err(pack))?, &bad)?,
        None => return Err(bad("is empty".to_owned())),
    };
    if let Some(named) = version_from_name(pack)
        && named != version
    {
        return Err(bad(format!(
            "is named for version {named} but holds version {version}"
        )));
    }
    let claimed = crate::layout::parse_manifest(&manifest_bytes, pack)?;
    if claimed.index_version != version {
        return Err(bad(format!(
            "its manifest says version {}, its folder {version}",
            claimed.index_version
        )));
    }
    let published = root.version_dir(&version);
    let decide = |manifest: &crate::Manifest| -> Result<Unpacked, PackError> {
        let previous = root
            .current()
            .ok()
            .and_then(|v| root.version_dir(&v).read_manifest().ok());
        let older = previous
            .as_ref()
            .is_some_and(|p| manifest.built_time() < p.built_time());
        Ok(Unpacked {
            version: version.clone(),
            current: !older || rollback == Rollback::Allow,
            built_at: manifest.built_at.clone(),
            previous_built_at: previous.map(|m| m.built_at).unwrap_or_default(),
        })
    };
    if published.path().is_dir() {
        // Already published: the verified copy on disk is the version, and
        // its own manifest says how old it is, whatever the pack claims.
        let u = decide(&published.read_manifest()?)?;
        if u.current {
            root.set_current(&version)?;
        }
        return Ok(u);
    }
    let total = claimed
        .files
        .values()
        .map(|f| f.size)
        .fold(manifest_bytes.len() as u64, u64::saturating_add);
    check_room(root, total).map_err(bad)?;
    let headers = (claimed.files.len() as u64 + 2).saturating_mul(4 * TAR_BLOCK);
    budget.set(total.saturating_add(headers).saturating_add(TAR_SLACK));
    let scratch = root.scratch_dir("unpack")?;
    let result = (|| {
        let dir = scratch.join(version.as_str());
        fs::create_dir_all(&dir).map_err(io_err(&dir))?;
        let target = dir.join(MANIFEST);
        write_synced(&target, &mut &manifest_bytes[..])?;
        // The manifest is written already; a second copy must not replace it.
        let mut seen = std::collections::BTreeSet::from([MANIFEST.to_owned()]);
        for entry in entries {
            let entry = entry.map_err(io_err(pack))?;
            let rel = entry_path(&entry, &version, &bad)?;
            let Some(declared) = claimed.files.get(&rel) else {
                return Err(bad(format!("entry {rel:?} is not in its manifest")));
            };
            if !seen.insert(rel.clone()) {
                return Err(bad(format!("entry {rel:?} comes twice")));
            }
            let size = entry.header().size().map_err(io_err(pack))?;
            // An extension record may set another size than the header's: both must agree.
            if size != declared.size || entry.size() != size {
                return Err(bad(format!(
                    "entry {rel:?} is {size} bytes, its manifest says {}",
                    declared.size
                )));
            }
            let target = dir.join(&rel);
            if let Some(parent) = target.parent() {
                fs::create_dir_all(parent).map_err(io_err(parent))?;
            }
            // Bounded by the manifest whatever the header said.
            let written = write_synced(&target, &mut io::Read::take(entry, declared.size))?;
            if written != declared.size {
                return Err(bad(format!(
                    "entry {rel:?} ends after {written} of {} bytes",
                    declared.size
                )));
            }
        }
        let unpacked = VersionDir::at(dir);
        let report = verify_version(&unpacked, &version)?;
        if !report.ok() {
            return Err(PackError::Verify {
                path: pack.to_owned(),
                problems: report.problems.join("; "),
            });
        }
        let u = decide(&unpacked.read_manifest()?)?;
        if u.current {
            root.adopt(&unpacked, &version)?;
            root.set_current(&version)?;
        }
        Ok(u)
    })();
    // The scratch folder holds nothing anyone needs once adopted or refused.
    let _ = fs::remove_dir_all(&scratch);
    result
}

/// A tar block: headers and extension records come in these.
const TAR_BLOCK: u64 = 512;
/// Decompressed bytes allowed beyond what the manifest accounts for (the
/// archive's end blocks, padding).
const TAR_SLACK: u64 = 1 << 20;

/// A reader that fails once it has given `left` bytes: the decompressed
/// size of a pack is bounded before tar sees a byte of it.
struct Budgeted<R> {
    inner: R,
    left: Rc<Cell<u64>>,
}

impl<R: io::Read> io::Read for Budgeted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let left = self.left.get();
        if left == 0 {
            return Err(io::Error::other(
                "the pack decompresses to more than its manifest lists",
            ));
        }
        let cap = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..cap])?;
        self.left.set(left - n as u64);
        Ok(n)
    }
}

/// The manifest's name inside a version folder.
const MANIFEST: &str = crate::layout::files::MANIFEST;

/// The largest manifest a pack may carry (the shared corpus's is well under 1 MiB).
pub const MAX_MANIFEST_BYTES: u64 = 64 << 20;
/// The most a pack may unpack to, whatever the disk has free.
pub const MAX_UNPACKED_BYTES: u64 = 256 << 30;
/// Disk left free after unpacking, for the server's own writes.
const DISK_RESERVE: u64 = 256 << 20;

/// Reads the first entry, which must be `<version>/manifest.json` of a sane size.
fn read_manifest_entry<R: io::Read>(
    entry: tar::Entry<'_, R>,
    bad: &impl Fn(String) -> PackError,
) -> Result<(IndexVersion, Vec<u8>), PackError> {
    let path = entry.path().map_err(|e| bad(e.to_string()))?.into_owned();
    let mut parts = path.components();
    let (Some(Component::Normal(top)), Some(Component::Normal(name)), None) =
        (parts.next(), parts.next(), parts.next())
    else {
        return Err(bad(format!(
            "its first entry is {path:?}, not the version's manifest (packs list {MANIFEST} first)"
        )));
    };
    if name != MANIFEST || entry.header().entry_type() != tar::EntryType::Regular {
        return Err(bad(format!(
            "its first entry is {path:?}, not the version's manifest (packs list {MANIFEST} first)"
        )));
    }
    let top = top.to_string_lossy();
    let version = IndexVersion::parse(&top)
        .map_err(|_| bad(format!("top folder {top:?} is not a version")))?;
    let size = entry.header().size().map_err(|e| bad(e.to_string()))?;
    if size > MAX_MANIFEST_BYTES {
        return Err(bad(format!(
            "its manifest is {size} bytes, over the {MAX_MANIFEST_BYTES}-byte limit"
        )));
    }
    let mut bytes = Vec::with_capacity(size as usize);
    io::Read::read_to_end(&mut io::Read::take(entry, size), &mut bytes)
        .map_err(|e| bad(e.to_string()))?;
    Ok((version, bytes))
}

/// The path of `entry` inside `version`'s folder, `/`-separated; refuses
/// anything but a plain file under that one folder.
fn entry_path<R: io::Read>(
    entry: &tar::Entry<'_, R>,
    version: &IndexVersion,
    bad: &impl Fn(String) -> PackError,
) -> Result<String, PackError> {
    if entry.header().entry_type() != tar::EntryType::Regular {
        return Err(bad("holds something other than plain files".to_owned()));
    }
    let path = entry.path().map_err(|e| bad(e.to_string()))?.into_owned();
    let mut parts = path.components();
    match parts.next() {
        Some(Component::Normal(top)) if top.to_string_lossy() == version.as_str() => {}
        Some(Component::Normal(_)) => return Err(bad("holds more than one version".to_owned())),
        _ => {
            return Err(bad(format!(
                "entry {path:?} is not inside a version folder"
            )));
        }
    }
    let rest: Vec<String> = parts
        .map(|c| match c {
            Component::Normal(p) => Some(p.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect::<Option<_>>()
        .ok_or_else(|| bad(format!("entry {path:?} has an unsafe path")))?;
    if rest.is_empty() {
        return Err(bad(format!("entry {path:?} has an unsafe path")));
    }
    Ok(rest.join("/"))
}

/// Refuses a pack that would unpack past [`MAX_UNPACKED_BYTES`] or into less
/// than [`DISK_RESERVE`] of free disk.
fn check_room(root: &IndexRoot, total: u64) -> Result<(), String> {
    if total > MAX_UNPACKED_BYTES {
        return Err(format!(
            "its manifest lists {total} bytes, over the {MAX_UNPACKED_BYTES}-byte limit"
        ));
    }
    let _ = fs::create_dir_all(root.path());
    if let Ok(free) = fs4::available_space(root.path())
        && total.saturating_add(DISK_RESERVE) > free
    {
        return Err(format!(
            "it unpacks to {total} bytes and {} has {free} bytes free",
            root.path().display()
        ));
    }
    Ok(())
}

/// Copies `from` into a new file at `path`, synced; returns the bytes written.
fn write_synced(path: &Path, from: &mut impl io::Read) -> Result<u64, PackError> {
    let mut out = File::create(path).map_err(io_err(path))?;
    let n = io::copy(from, &mut out).map_err(io_err(path))?;
    out.sync_all().map_err(io_err(path))?;
    Ok(n)
}

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

/// Whether `path` is named like a pack (`cairn-index-*.tar.zst`), whatever version it names.
fn is_pack_name(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with(PACK_PREFIX) && n.ends_with(PACK_SUFFIX))
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
