//! The embedding stage: one vector per row (each chunk, then its subchunks),
//! from the cache when it has them, else from the model. A subchunk's vector
//! is made as the settings say ([`SubchunkVectors`]): from its own text, or
//! pooled from its chunk's forward pass ("late chunking").

use super::chunking::{Assembled, embed_text};
use super::error::BuildError;
use super::plan::EMBED_CALL;
use crate::chunk::ChunkDraft;
use crate::embed_cache::{EmbedCache, TextKey, text_key};
use crate::part::PartStats;
use crate::report::Reporter;
use cairn_embed::Embedder;
use cairn_index::rows::{Row, order};
use cairn_index::{DocRecord, Rows};
use std::path::Path;
use std::time::Instant;

use crate::chunk::SubchunkDraft;
use crate::config::SubchunkVectors;
use cairn_embed::SpanText;
use std::collections::{HashMap, HashSet};
use std::ops::Range;

/// Every row's vector ([`ChunkDraft::embedded_rows`]), and the cache to save them to.
pub(super) struct Embedded {
    pub(super) vectors: Rows,
    pub(super) stats: PartStats,
    pub(super) cache: Option<(EmbedCache, Vec<TextKey>)>,
}

impl Embedded {
    /// The cache only matters for the next build; failing to save it loses nothing published.
    pub(super) fn save_cache(&self, reporter: &dyn Reporter) {
        if let Some((cache, keys)) = &self.cache
            && let Err(e) = cache.save(keys.iter().zip(self.vectors.iter()))
        {
            reporter.note(&format!("could not save the embedding cache: {e}"));
        }
    }
}

/// How one row's vector is made.
enum Job {
    /// This text through the model.
    Text(String),
    /// Late chunk `chunk`'s whole vector (`None`) or its span `Some(k)`.
    Late { chunk: usize, span: Option<usize> },
}

/// One row: its cache key, the model tokens it costs, and its job.
struct RowPlan {
    key: TextKey,
    tokens: u32,
    job: Job,
}

/// A chunk embedded once for itself and its subchunks.
struct LateChunk {
    text: String,
    tokens: u32,
    lines: Option<ChunkLines>,
    spans: Vec<Vec<Range<usize>>>,
}

/// The key of a late-chunked span: it depends on the chunk's text and on
/// the span's bytes, never only on the subchunk's own text.
fn late_key(text: &str, span: &[Range<usize>]) -> TextKey {
    let ranges: Vec<String> = span
        .iter()
        .map(|r| format!("{}-{}", r.start, r.end))
        .collect();
    text_key(&format!("late-v1\0{}\0{text}", ranges.join(",")))
}

/// Where a chunk's lines start in the text the model sees (its header, then
/// its text), found once per chunk for all its subchunks.
struct ChunkLines {
    header: usize,
    starts: Vec<usize>,
    first: u32,
    last: u32,
    text_len: usize,
}

impl ChunkLines {
    /// `None` when the chunk's text does not split into its span's lines.
    fn of(embedded: &str, chunk: &ChunkDraft) -> Option<Self> {
        let header = embedded.len().checked_sub(chunk.text.len())?;
        let mut starts = vec![0usize];
        starts.extend(chunk.text.match_indices('\n').map(|(i, _)| i + 1));
        (starts.len() as u32 == chunk.span.end - chunk.span.start + 1).then_some(Self {
            header,
            starts,
            first: chunk.span.start,
            last: chunk.span.end,
            text_len: chunk.text.len(),
        })
    }

    /// The byte ranges whose tokens `sub` pools: the header, and the lines
    /// it shares with the chunk (`None` when it shares none).
    fn ranges(&self, sub: &SubchunkDraft) -> Option<Vec<Range<usize>>> {
        let first = sub.span.start.max(self.first);
        let last = sub.span.end.min(self.last);
        if first > last {
            return None;
        }
        let a = self.starts[(first - self.first) as usize];
        let b = self
            .starts
            .get((last - self.first + 1) as usize)
            .map_or(self.text_len, |next| next - 1);
        let h = self.header;
        Some(vec![0..h, h + a..h + b])
    }
}

/// Each row's plan, in row order ([`cairn_index::rows`]), and the chunks to
/// run whole when subchunks are late-chunked.
fn plan_rows(set: &Assembled, mode: SubchunkVectors) -> (Vec<RowPlan>, Vec<LateChunk>) {
    let (mut rows, mut late) = (Vec::new(), Vec::<LateChunk>::new());
    for (d, chunks) in set.drafts.iter().enumerate() {
        let doc = &set.docs[d];
        for row in order(chunks, |c| &c.subchunks) {
            let plan = match (row, mode) {
                (Row::Chunk(c), _) => {
                    let text = embed_text(doc, &c.title, &c.text);
                    let tokens = set.model_tokens(c.tokens);
                    let key = text_key(&text);
                    let job = match mode {
                        SubchunkVectors::Independent => Job::Text(text),
                        SubchunkVectors::Late => {
                            late.push(LateChunk {
                                lines: ChunkLines::of(&text, c),
                                text,
                                tokens,
                                spans: Vec::new(),
                            });
                            Job::Late {
                                chunk: late.len() - 1,
                                span: None,
                            }
                        }
                    };
                    RowPlan { key, tokens, job }
                }
                (Row::Subchunk(s), SubchunkVectors::Late) => {
                    let lc = late.len() - 1;
                    match late[lc].lines.as_ref().and_then(|l| l.ranges(s)) {
                        Some(ranges) => {
                            let key = late_key(&late[lc].text, &ranges);
                            late[lc].spans.push(ranges);
                            RowPlan {
                                key,
                                tokens: 0,
                                job: Job::Late {
                                    chunk: lc,
                                    span: Some(late[lc].spans.len() - 1),
                                },
                            }
                        }
                        None => independent(set, doc, s),
                    }
                }
                (Row::Subchunk(s), SubchunkVectors::Independent) => independent(set, doc, s),
            };
            rows.push(plan);
        }
    }
    (rows, late)
}

/// A subchunk embedded from its own text.
fn independent(set: &Assembled, doc: &DocRecord, s: &SubchunkDraft) -> RowPlan {
    let text = embed_text(doc, &s.title, &s.text);
    RowPlan {
        key: text_key(&text),
        tokens: set.model_tokens(s.tokens),
        job: Job::Text(text),
    }
}

/// Embeds every row the cache lacks, each distinct text once.
pub(super) fn embed_all(
    set: &Assembled,
    embedder: &dyn Embedder,
    mode: SubchunkVectors,
    cache_dir: &Path,
    reporter: &dyn Reporter,
) -> Result<Embedded, BuildError> {
    let (rows, late) = plan_rows(set, mode);
    let cache = EmbedCache::open(
        cache_dir,
        &set.model.weights_sha256,
        &embedder.model().forward,
        set.model.dim,
    );
    let pending = Pending::of(&rows, &cache);
    let todo = pending.run_late.len() + pending.texts.len();
    reporter.stage("embedding chunks and subchunks", Some(todo as u64));
    let started = Instant::now();
    let mut fresh = Fresh {
        embedder,
        reporter,
        vectors: HashMap::new(),
    };
    fresh.texts(&pending.texts)?;
    fresh.late(&rows, &late, &pending.run_late)?;
    let embed_seconds = started.elapsed().as_secs_f64();
    reporter.finish(&format!(
        "embedded {todo} texts for {} rows ({} rows from cache) in {embed_seconds:.1}s",
        pending.missing.len(),
        rows.len() - pending.missing.len()
    ));
    let mut vectors = Rows::new(set.model.dim);
    for r in &rows {
        let v = fresh.vectors.get(&r.key).or_else(|| cache.get(&r.key));
        vectors.push(v.map_or(&[], Vec::as_slice));
    }
    Ok(Embedded {
        vectors,
        stats: PartStats {
            embedded: todo,
            cached: rows.len() - pending.missing.len(),
            embedded_tokens: pending.tokens(&late),
            embed_seconds,
        },
        cache: Some((cache, rows.iter().map(|r| r.key).collect())),
    })
}

/// What the model must run: the rows the cache lacks, as late chunks and texts.
struct Pending<'a> {
    /// The rows the cache lacks, each distinct key once.
    missing: Vec<&'a RowPlan>,
    /// The late chunks to run, each once, in order.
    run_late: Vec<usize>,
    /// The missing rows embedded from their own text.
    texts: Vec<&'a RowPlan>,
}

impl<'a> Pending<'a> {
    /// What of `rows` the cache lacks.
    fn of(rows: &'a [RowPlan], cache: &EmbedCache) -> Self {
        let mut seen = HashSet::new();
        let missing: Vec<&RowPlan> = rows
            .iter()
            .filter(|r| cache.get(&r.key).is_none() && seen.insert(r.key))
            .collect();
        // A late chunk runs when any of its rows is missing; texts run on their own.
        let mut run_late: Vec<usize> = missing
            .iter()
            .filter_map(|r| match r.job {
                Job::Late { chunk, .. } => Some(chunk),
                Job::Text(_) => None,
            })
            .collect();
        run_late.sort_unstable();
        run_late.dedup();
        let texts: Vec<&RowPlan> = missing
            .iter()
            .copied()
            .filter(|r| matches!(r.job, Job::Text(_)))
            .collect();
        Self {
            missing,
            run_late,
            texts,
        }
    }

    /// The model tokens the run costs.
    fn tokens(&self, late: &[LateChunk]) -> u64 {
        self.texts.iter().map(|r| u64::from(r.tokens)).sum::<u64>()
            + self
                .run_late
                .iter()
                .map(|&c| u64::from(late[c].tokens))
                .sum::<u64>()
    }
}

/// The vectors the model makes, by key, batch by batch (each batch reported).
struct Fresh<'a> {
    embedder: &'a dyn Embedder,
    reporter: &'a dyn Reporter,
    vectors: HashMap<TextKey, Vec<f32>>,
}

impl Fresh<'_> {
    /// Embeds each text row from its own text.
    fn texts(&mut self, texts: &[&RowPlan]) -> Result<(), BuildError> {
        for batch in texts.chunks(EMBED_CALL) {
            let batch_texts: Vec<&str> = batch
                .iter()
                .map(|r| match &r.job {
                    Job::Text(t) => t.as_str(),
                    Job::Late { .. } => "",
                })
                .collect();
            for (r, v) in batch.iter().zip(self.embedder.embed(&batch_texts)?) {
                self.vectors.insert(r.key, v);
            }
            self.reporter.advance(batch.len() as u64);
        }
        Ok(())
    }

    /// Runs each of `run_late` whole, its vector and its spans' pooled ones
    /// landing on their rows.
    fn late(
        &mut self,
        rows: &[RowPlan],
        late: &[LateChunk],
        run_late: &[usize],
    ) -> Result<(), BuildError> {
        // The late rows' keys, by chunk, so each pooled vector lands on its row.
        let late_keys: HashMap<(usize, Option<usize>), TextKey> = rows
            .iter()
            .filter_map(|r| match r.job {
                Job::Late { chunk, span } => Some(((chunk, span), r.key)),
                _ => None,
            })
            .collect();
        for batch in run_late.chunks(EMBED_CALL) {
            let items: Vec<SpanText<'_>> = batch
                .iter()
                .map(|&c| SpanText {
                    text: &late[c].text,
                    spans: late[c].spans.clone(),
                })
                .collect();
            for (&c, v) in batch.iter().zip(self.embedder.embed_spans(&items)?) {
                for (k, part) in v.parts.into_iter().enumerate() {
                    // A span whose tokens were all cut off stands in with its chunk's vector.
                    let part = part.unwrap_or_else(|| v.whole.clone());
                    if let Some(key) = late_keys.get(&(c, Some(k))) {
                        self.vectors.insert(*key, part);
                    }
                }
                if let Some(key) = late_keys.get(&(c, None)) {
                    self.vectors.insert(*key, v.whole);
                }
            }
            self.reporter.advance(batch.len() as u64);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cairn_index::LineSpan;

    fn chunk(start: u32, text: &str) -> ChunkDraft {
        ChunkDraft {
            span: LineSpan {
                start,
                end: start + text.matches('\n').count() as u32,
            },
            title: String::new(),
            text: text.to_owned(),
            tokens: 0,
            symbols: Vec::new(),
            subchunks: Vec::new(),
        }
    }

    fn sub(start: u32, end: u32) -> SubchunkDraft {
        SubchunkDraft {
            span: LineSpan { start, end },
            title: String::new(),
            text: String::new(),
            tokens: 0,
        }
    }

    #[test]
    fn a_subchunk_pools_the_header_and_its_lines_within_the_chunk() {
        let c = chunk(10, "alpha\nbeta\ngamma");
        let embedded = format!("repo path\n{}", c.text);
        let h = embedded.len() - c.text.len();
        let lines = ChunkLines::of(&embedded, &c).expect("lines");
        let r = lines.ranges(&sub(11, 12)).expect("inside");
        assert_eq!(r, [0..h, h + 6..h + 16]);
        assert_eq!(&embedded[r[1].clone()], "beta\ngamma");
        // Crossing the chunk's end: only the lines it shares.
        let r = lines.ranges(&sub(12, 20)).expect("overlaps");
        assert_eq!(&embedded[r[1].clone()], "gamma");
        assert_eq!(lines.ranges(&sub(20, 25)), None, "no shared line");
        // A text that does not split into the span's lines is not guessed at.
        let odd = ChunkDraft {
            text: "one line with\nan inner newline\nand more".to_owned(),
            ..chunk(1, "a\nb")
        };
        assert!(ChunkLines::of(&odd.text, &odd).is_none());
    }
}
