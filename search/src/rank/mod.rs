//! Ranking, by job: candidate lists (lexical ones in [`lexical`], vector
//! ones in [`candidates`]) scored with caller-scoped
//! BM25 statistics ([`stats`]) from the analyzed query ([`query`]), fused by
//! reciprocal rank ([`fusion`]), multiplied by named priors ([`priors`]), and
//! shown as snippets ([`snippets`]); `ranker.rs` runs them as the stages
//! the search call (`passages/`) calls once each ([`Ranker`]).

mod candidates;
mod fusion;
mod lexical;
mod priors;
mod query;
mod ranker;
mod scopes;
mod snippets;
mod stats;

pub use candidates::{
    EXACT_TOP, VectorLists, VectorRows, VectorSearch, best_first, chunk_cosines, dot, mask_rows,
    subchunk_cosines, top, uses_ann, vector_lists,
};
pub use fusion::{Fused, FusionShares, RankedList, Source, fuse};
pub use lexical::{Bm25Query, bm25, bm25_exhaustive, identifier_lists};
pub use priors::{Prior, Priors, QuestionForm, brevity, form_prior, question_form};
pub use query::{QueryWords, mentioned_toolkits};
pub(crate) use ranker::{Ask, Ranker};
pub use scopes::ScopeCache;
pub use snippets::{snippet, unmark};
pub use stats::{Bm25Tables, ScopedStats, Visible};
