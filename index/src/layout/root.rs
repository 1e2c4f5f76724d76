//! An index root: its versions, CURRENT, publishing and pruning, and the
//! scratch folders a killed build left.

use super::fsync::{sync_dir, sync_tree, write_synced};
use super::{LayoutError, VersionDir, io_err, owner_alive};
use crate::ids::IndexVersion;
use std::path::{Path, PathBuf};
use std::{fs, io};

/// An index root: versions, the CURRENT pointer, and a scratch area.
#[derive(Clone, Debug)]
pub struct IndexRoot {
    root: PathBuf,
}

impl IndexRoot {
    /// The root at `path` (nothing is created until a version is written).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self { root: path.into() }
    }

    /// The root folder.
    pub fn path(&self) -> &Path {
        &self.root
    }

    fn versions(&self) -> PathBuf {
        self.root.join("versions")
    }

    pub(super) fn tmp(&self) -> PathBuf {
        self.root.join("tmp")
    }

    fn current_file(&self) -> PathBuf {
        self.root.join("CURRENT")
    }

    /// The folder of a published version.
    pub fn version_dir(&self, version: &IndexVersion) -> VersionDir {
        VersionDir {
            path: self.versions().join(version.as_str()),
        }
    }

    /// The version CURRENT names.
    pub fn current(&self) -> Result<IndexVersion, LayoutError> {
        let path = self.current_file();
        let text = match fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Err(LayoutError::NoCurrent(self.root.clone()));
            }
            Err(e) => return Err(io_err(&path)(e)),
        };
        let version = IndexVersion::parse(text.trim()).map_err(|e| LayoutError::BadCurrent {
            path: path.clone(),
            reason: e.to_string(),
        })?;
        if !self.version_dir(&version).path().is_dir() {
            return Err(LayoutError::BadCurrent {
                path,
                reason: format!("versions/{version} does not exist"),
            });
        }
        Ok(version)
    }

    /// Published versions, in no particular order.
    pub fn list_versions(&self) -> Result<Vec<IndexVersion>, LayoutError> {
        let dir = self.versions();
        let entries = match fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io_err(&dir)(e)),
        };
        let mut out = Vec::new();
        for entry in entries {
            let entry = entry.map_err(io_err(&dir))?;
            if let Some(v) = entry
                .file_name()
                .to_str()
                .and_then(|n| IndexVersion::parse(n).ok())
            {
                out.push(v);
            }
        }
        Ok(out)
    }

    /// Points CURRENT at `version` atomically (write a temp file, fsync, rename, fsync the folder).
    pub fn set_current(&self, version: &IndexVersion) -> Result<(), LayoutError> {
        let tmp = self
            .root
            .join(format!("CURRENT.tmp-{}", std::process::id()));
        write_synced(&tmp, format!("{version}\n").as_bytes())?;
        let current = self.current_file();
        fs::rename(&tmp, &current).map_err(io_err(&current))?;
        sync_dir(&self.root)
    }

    /// Deletes all but the `keep` newest versions (by `built_at`), never the
    /// current one. Returns the versions removed.
    pub fn prune(&self, keep: usize) -> Result<Vec<IndexVersion>, LayoutError> {
        let current = self.current().ok();
        let mut dated: Vec<(Option<time::OffsetDateTime>, IndexVersion)> = self
            .list_versions()?
            .into_iter()
            .map(|v| {
                let built = self
                    .version_dir(&v)
                    .read_manifest()
                    .ok()
                    .and_then(|m| m.built_time());
                (built, v)
            })
            .collect();
        dated.sort_by(|a, b| b.cmp(a));
        let mut removed = Vec::new();
        for (_, v) in dated.into_iter().skip(keep.max(1)) {
            if Some(&v) == current.as_ref() {
                continue;
            }
            // Rename first so a half-deleted version is never seen under versions/.
            let doomed = self
                .tmp()
                .join(format!("delete-{}-{v}", std::process::id()));
            fs::create_dir_all(self.tmp()).map_err(io_err(&self.tmp()))?;
            let from = self.version_dir(&v).path;
            fs::rename(&from, &doomed).map_err(io_err(&from))?;
            fs::remove_dir_all(&doomed).map_err(io_err(&doomed))?;
            removed.push(v);
        }
        Ok(removed)
    }

    /// A fresh, empty folder under `tmp/` named after `what`: invisible to
    /// readers, and removed by the next build if the writer dies.
    pub fn scratch_dir(&self, what: &str) -> Result<PathBuf, LayoutError> {
        let tmp = self.tmp();
        fs::create_dir_all(&tmp).map_err(io_err(&tmp))?;
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        let path = tmp.join(format!("{what}-{}-{nanos}", std::process::id()));
        fs::create_dir(&path).map_err(io_err(&path))?;
        Ok(path)
    }

    /// Moves a complete, fsynced version folder into `versions/` under its
    /// name. If that version is already published (same inputs), the existing
    /// folder is kept untouched and `dir` is removed. CURRENT is not touched.
    pub fn adopt(
        &self,
        dir: &VersionDir,
        version: &IndexVersion,
    ) -> Result<VersionDir, LayoutError> {
        sync_tree(dir.path())?;
        let target = self.version_dir(version);
        if target.path().is_dir() {
            fs::remove_dir_all(dir.path()).map_err(io_err(dir.path()))?;
            return Ok(target);
        }
        let versions = self.versions();
        fs::create_dir_all(&versions).map_err(io_err(&versions))?;
        fs::rename(dir.path(), target.path()).map_err(io_err(target.path()))?;
        sync_dir(&versions)?;
        Ok(target)
    }

    /// Removes the leftovers of writers that died: every entry under `tmp/`
    /// whose owner (the process id in its name, `what-PID-…`) is gone. A
    /// running unpack's or build's scratch folder is left alone.
    pub fn clean_tmp(&self) -> Result<(), LayoutError> {
        let tmp = self.tmp();
        let entries = match fs::read_dir(&tmp) {
            Ok(e) => e,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(io_err(&tmp)(e)),
        };
        for entry in entries {
            let entry = entry.map_err(io_err(&tmp))?;
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if owner_alive(&name, &path) {
                continue;
            }
            let removed = if path.is_dir() {
                fs::remove_dir_all(&path)
            } else {
                fs::remove_file(&path)
            };
            match removed {
                Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(io_err(&path)(e)),
                _ => {}
            }
        }
        Ok(())
    }
}
