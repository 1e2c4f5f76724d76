//! Writing a version's folder: scratch space that becomes a sealed,
//! checksummed version or is removed, and the synced writes it takes.

use super::fsync::write_synced;
use super::{IndexRoot, LayoutError, VersionDir, files, io_err};
use crate::manifest::{FileRecord, Manifest};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fs::File;
use std::path::Path;
use std::{fs, io};

/// A version being written under `<root>/tmp/`; invisible until sealed,
/// and removed if dropped unsealed (a failed build leaves no scratch folder
/// to hold the disk full until the next build).
pub struct VersionWriter {
    root: IndexRoot,
    dir: VersionDir,
    sealed: bool,
}

impl VersionWriter {
    /// Starts a new version in a fresh scratch folder.
    pub fn create(root: &IndexRoot) -> Result<Self, LayoutError> {
        Ok(Self {
            root: root.clone(),
            dir: VersionDir {
                path: root.scratch_dir("build")?,
            },
            sealed: false,
        })
    }

    /// The scratch folder, for writers that need a path (tantivy).
    pub fn dir(&self) -> &VersionDir {
        &self.dir
    }

    /// Writes `value` as pretty JSON to the file `name`, streamed: a large
    /// list is never held as text in memory.
    pub fn write_json<T: Serialize>(&self, name: &str, value: &T) -> Result<(), LayoutError> {
        let path = self.dir.file(name);
        let file = File::create(&path).map_err(io_err(&path))?;
        let mut out = io::BufWriter::new(file);
        serde_json::to_writer_pretty(&mut out, value).map_err(|e| LayoutError::Io {
            path: path.clone(),
            source: io::Error::other(e),
        })?;
        let file = out
            .into_inner()
            .map_err(|e| io_err(&path)(e.into_error()))?;
        file.sync_all().map_err(io_err(&path))
    }

    /// Writes raw bytes to the file `name`.
    pub fn write_bytes(&self, name: &str, bytes: &[u8]) -> Result<(), LayoutError> {
        write_synced(&self.dir.file(name), bytes)
    }

    /// Records every file's checksum in `manifest`, writes it, fsyncs, and
    /// renames the folder into `versions/`. CURRENT is not touched.
    ///
    /// If the same version is already published (same inputs), the existing
    /// folder is kept untouched and this scratch copy is dropped.
    pub fn seal(mut self, mut manifest: Manifest) -> Result<VersionDir, LayoutError> {
        manifest.files = checksum_tree(self.dir.path())?;
        self.write_json(files::MANIFEST, &manifest)?;
        let sealed = self.root.adopt(&self.dir, &manifest.index_version)?;
        self.sealed = true;
        Ok(sealed)
    }
}

impl Drop for VersionWriter {
    fn drop(&mut self) {
        if !self.sealed {
            let _ = fs::remove_dir_all(self.dir.path());
        }
    }
}

/// sha256 and size of every file under `dir` except the manifest, by relative `/` path.
pub fn checksum_tree(dir: &Path) -> Result<BTreeMap<String, FileRecord>, LayoutError> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).map_err(io_err(&d))? {
            let entry = entry.map_err(io_err(&d))?;
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let rel = relative(dir, &path);
            if rel == files::MANIFEST {
                continue;
            }
            let (sha256, size) = File::open(&path)
                .and_then(crate::sha256_reader)
                .map_err(io_err(&path))?;
            out.insert(rel, FileRecord { sha256, size });
        }
    }
    Ok(out)
}

pub(super) fn relative(base: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(base).unwrap_or(path);
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}
