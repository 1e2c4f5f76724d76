//! Where the indexed code raises: every raising statement of a snapshot
//! (`sites.rs`, read once per opened engine, which holds it) and the message
//! templates those statements write (`template.rs`), matched against a
//! concrete message. `explain` reads them; they depend on nothing else in
//! the crate, so the engine can hold them without depending on `explain`.

mod sites;
mod template;

pub(crate) use sites::{Site, Sites};
pub use template::{Match, Message, Piece, Syntax, Template};
