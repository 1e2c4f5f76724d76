//! Ranking, by job: candidate lists ([`candidates`]) scored with caller-scoped
//! BM25 statistics ([`stats`]) from the analyzed query ([`query`]), fused by
//! reciprocal rank ([`fusion`]), multiplied by named priors ([`priors`]), and
//! shown as snippets ([`snippets`]). The search call (`passages/`) runs
//! these steps in order; each file is one of them.

mod candidates;
mod fusion;
mod priors;
mod query;
mod snippets;
mod stats;

pub use candidates::*;
pub use fusion::*;
pub use priors::*;
pub use query::*;
pub use snippets::*;
pub use stats::*;
