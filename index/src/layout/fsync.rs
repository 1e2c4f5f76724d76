//! Durable writes: a file written and synced, a folder synced (its entries
//! made durable), a whole tree synced before it is renamed into place.

use super::{LayoutError, io_err};
use std::fs::{self, File};
use std::io::Write;
use std::path::Path;

/// Writes `bytes` to `path` and syncs the file.
pub(super) fn write_synced(path: &Path, bytes: &[u8]) -> Result<(), LayoutError> {
    let mut f = File::create(path).map_err(io_err(path))?;
    f.write_all(bytes).map_err(io_err(path))?;
    f.sync_all().map_err(io_err(path))
}

/// Syncs the folder `path` (its entries).
pub(super) fn sync_dir(path: &Path) -> Result<(), LayoutError> {
    File::open(path)
        .and_then(|d| d.sync_all())
        .map_err(io_err(path))
}

/// Syncs every file and folder under `dir`.
pub(super) fn sync_tree(dir: &Path) -> Result<(), LayoutError> {
    for entry in fs::read_dir(dir).map_err(io_err(dir))? {
        let path = entry.map_err(io_err(dir))?.path();
        if path.is_dir() {
            sync_tree(&path)?;
        } else {
            File::open(&path)
                .and_then(|f| f.sync_all())
                .map_err(io_err(&path))?;
        }
    }
    sync_dir(dir)
}
