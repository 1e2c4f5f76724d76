//! Ranking, by job: candidate lists (lexical ones in [`lexical`], vector
//! ones in [`candidates`]) scored with caller-scoped
//! BM25 statistics ([`stats`]) from the analyzed query ([`query`]), fused by
//! reciprocal rank ([`fusion`]), multiplied by named priors ([`priors`]), and
//! shown as snippets ([`snippets`]); `pipeline.rs` runs them as the stages
//! the search call (`passages/`) calls once each ([`Ranker`]).

mod candidates;
mod fusion;
mod lexical;
mod pipeline;
mod priors;
mod query;
mod scopes;
mod snippets;
mod stats;

pub use candidates::*;
pub use fusion::*;
pub use lexical::*;
pub(crate) use pipeline::{Ask, Ranker};
pub use priors::*;
pub use query::*;
pub use scopes::*;
pub use snippets::*;
pub use stats::*;
