//! Adopting a pack: its sha256 checked, unpacked under `tmp/` within a
//! budget of bytes and disk, every file verified, then renamed into
//! `versions/` and made CURRENT.

use super::{PackError, checksum_path, hash_file, io_err, version_from_name};
use crate::ids::IndexVersion;
use crate::layout::IndexRoot;
use crate::layout::VersionDir;
use crate::manifest::Manifest;
use crate::verify::verify_version;
use std::cell::Cell;
use std::fs::File;
use std::path::{Component, Path};
use std::rc::Rc;
use std::{fs, io};

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
    check_pack_sum(pack)?;
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
    let claimed = read_claimed(pack, entries.next(), &bad)?;
    let target = Target { root, rollback };
    let published = root.version_dir(&claimed.version);
    if published.path().is_dir() {
        // Already published: the verified copy on disk is the version, and
        // its own manifest says how old it is, whatever the pack claims.
        let u = target.decide(&claimed.version, &published.read_manifest()?);
        if u.current {
            root.set_current(&claimed.version)?;
        }
        return Ok(u);
    }
    budget.set(unpack_budget(root, &claimed).map_err(bad)?);
    let scratch = root.scratch_dir("unpack")?;
    let result = unpack_into(&scratch, entries, &claimed, &target, pack, &bad);
    // The scratch folder holds nothing anyone needs once adopted or refused.
    let _ = fs::remove_dir_all(&scratch);
    result
}

/// What a pack's first entry announced, checked against the pack's name and its own version.
struct Claimed {
    version: IndexVersion,
    manifest_bytes: Vec<u8>,
    manifest: Manifest,
}

/// Where a pack is adopted and whether it may make an older version current.
struct Target<'a> {
    root: &'a IndexRoot,
    rollback: Rollback,
}

impl Target<'_> {
    /// Whether `version`, built as `manifest` says, should replace what CURRENT names now.
    fn decide(&self, version: &IndexVersion, manifest: &Manifest) -> Unpacked {
        let root = self.root;
        let previous = root
            .current()
            .ok()
            .and_then(|v| root.version_dir(&v).read_manifest().ok());
        let older = previous
            .as_ref()
            .is_some_and(|p| manifest.built_time() < p.built_time());
        Unpacked {
            version: version.clone(),
            current: !older || self.rollback == Rollback::Allow,
            built_at: manifest.built_at.clone(),
            previous_built_at: previous.map(|m| m.built_at).unwrap_or_default(),
        }
    }
}

/// Refuses a pack without a `.sha256` beside it or whose bytes do not hash to it.
fn check_pack_sum(pack: &Path) -> Result<(), PackError> {
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
    Ok(())
}

/// Reads the manifest from the `first` entry; name, folder and manifest must agree on the version.
fn read_claimed<R: io::Read>(
    pack: &Path,
    first: Option<io::Result<tar::Entry<'_, R>>>,
    bad: &impl Fn(String) -> PackError,
) -> Result<Claimed, PackError> {
    let (version, manifest_bytes) = match first {
        Some(first) => read_manifest_entry(first.map_err(io_err(pack))?, bad)?,
        None => return Err(bad("is empty".to_owned())),
    };
    if let Some(named) = version_from_name(pack)
        && named != version
    {
        return Err(bad(format!(
            "is named for version {named} but holds version {version}"
        )));
    }
    let manifest = crate::layout::parse_manifest(&manifest_bytes, pack)?;
    if manifest.index_version != version {
        return Err(bad(format!(
            "its manifest says version {}, its folder {version}",
            manifest.index_version
        )));
    }
    Ok(Claimed {
        version,
        manifest_bytes,
        manifest,
    })
}

/// The decompressed bytes the pack may take, once what its manifest lists fits limit and disk.
fn unpack_budget(root: &IndexRoot, claimed: &Claimed) -> Result<u64, String> {
    let total = claimed
        .manifest
        .files
        .values()
        .map(|f| f.size)
        .fold(claimed.manifest_bytes.len() as u64, u64::saturating_add);
    check_room(root, total)?;
    let headers = (claimed.manifest.files.len() as u64 + 2).saturating_mul(4 * TAR_BLOCK);
    Ok(total.saturating_add(headers).saturating_add(TAR_SLACK))
}

/// Writes the version into `scratch`, verifies it, and adopts it if `target` decides so.
fn unpack_into<R: io::Read>(
    scratch: &Path,
    entries: tar::Entries<'_, R>,
    claimed: &Claimed,
    target: &Target<'_>,
    pack: &Path,
    bad: &impl Fn(String) -> PackError,
) -> Result<Unpacked, PackError> {
    let version = &claimed.version;
    let dir = scratch.join(version.as_str());
    fs::create_dir_all(&dir).map_err(io_err(&dir))?;
    write_synced(&dir.join(MANIFEST), &mut &claimed.manifest_bytes[..])?;
    write_entries(&dir, entries, claimed, pack, bad)?;
    let unpacked = VersionDir::at(dir);
    let report = verify_version(&unpacked, version)?;
    if !report.ok() {
        return Err(PackError::Verify {
            path: pack.to_owned(),
            problems: report.problems.join("; "),
        });
    }
    let u = target.decide(version, &unpacked.read_manifest()?);
    if u.current {
        target.root.adopt(&unpacked, version)?;
        target.root.set_current(version)?;
    }
    Ok(u)
}

/// Writes the entries after the manifest, each a file the manifest lists, once, at its size.
fn write_entries<R: io::Read>(
    dir: &Path,
    entries: tar::Entries<'_, R>,
    claimed: &Claimed,
    pack: &Path,
    bad: &impl Fn(String) -> PackError,
) -> Result<(), PackError> {
    // The manifest is written already; a second copy must not replace it.
    let mut seen = std::collections::BTreeSet::from([MANIFEST.to_owned()]);
    for entry in entries {
        let entry = entry.map_err(io_err(pack))?;
        let rel = entry_path(&entry, &claimed.version, bad)?;
        let Some(declared) = claimed.manifest.files.get(&rel) else {
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
    Ok(())
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
pub(super) const MANIFEST: &str = crate::layout::files::MANIFEST;

/// The largest manifest a pack may carry (the shared corpus's is well under 1 MiB).
pub const MAX_MANIFEST_BYTES: u64 = 64 << 20;
/// The most a pack may unpack to, whatever the disk has free.
pub const MAX_UNPACKED_BYTES: u64 = 256 << 30;
/// Disk left free after unpacking, for the server's own writes.
pub(super) const DISK_RESERVE: u64 = 256 << 20;

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
