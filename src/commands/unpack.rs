//! `cairn unpack`: a pack checked, added to an index root and made CURRENT.

use crate::cli::UnpackArgs;
use cairn_index::IndexRoot;
use cairn_index::pack::Rollback;
use std::process::ExitCode;

/// Unpacks and switches CURRENT.
pub fn run(a: UnpackArgs) -> anyhow::Result<ExitCode> {
    // Naming the pack on the command line is the operator asking for it, whatever its age.
    let index = crate::cli::index_out(a.index.as_deref());
    let u = cairn_index::pack::unpack(&a.pack, &IndexRoot::new(&index), Rollback::Allow)?;
    println!("{} is CURRENT in {}", u.version, index.display());
    Ok(ExitCode::SUCCESS)
}
