//! Approximate nearest neighbours over a version's vectors: HNSW graphs
//! (usearch) of int8 rows, written once by the builder next to the f32
//! vectors and memory-mapped by readers. A search walks the graphs with
//! the caller's filter applied during the walk; callers re-score what it
//! returns with the exact f32 rows, so scores stay those of the exact scan.
//!
//! One pair of graphs (chunks, subchunks) per set of access groups the
//! documents carry, each with the list of its rows (`.keys`): a caller
//! walks only the graphs of documents it may see, so a hidden document is
//! in no graph it walks and changes nothing it can reach (hidden equals
//! absent, as for the exact scan), and a caller whose filters keep few of a
//! partition's rows can scan just those rows instead of walking.
//!
//! Deterministic: rows are added in order on one thread, and usearch draws
//! each node's level from a fixed-seed generator, so the same vectors give
//! the same files with the same toolchain (a test checks the bytes; the
//! levels go through the C++ library's `log`, so another libm may differ).

use crate::records::DocRecord;
use crate::vectors::Vectors;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;
use usearch::{Index, IndexOptions, MetricKind, ScalarKind};

/// Graph degree: edges per node on the upper levels (twice that on level 0).
const CONNECTIVITY: usize = 16;
/// Candidates kept while inserting (higher: a better graph, a slower build).
const EXPANSION_ADD: usize = 128;
/// Candidates each search keeps (usearch's `ef`) unless the opener asks for
/// another: search asks for 400 per list and keeps the 200 best after exact
/// re-scoring; 1,600 gave recall@10 0.992 at 10x the corpus, 800 gave 0.974.
pub const DEFAULT_EXPANSION: usize = 1600;
/// Vector rows (chunks and subchunks) from which graphs pay: an exact scan
/// of fewer takes about 7 ms of one core. The builder's default for
/// writing graphs and search's for walking them.
pub const DEFAULT_MIN_ROWS: usize = 100_000;
/// The partitions' list, in a version folder that has graphs.
pub const PARTITIONS: &str = "ann.json";

/// Why the graphs could not be built or opened.
#[derive(Debug, thiserror::Error)]
#[error("approximate index {path}: {message}")]
pub struct AnnError {
    /// The file at fault.
    pub path: String,
    /// What went wrong.
    pub message: String,
}

fn err(path: &Path, message: impl ToString) -> AnnError {
    AnnError {
        path: path.display().to_string(),
        message: message.to_string(),
    }
}

/// One opened (memory-mapped) graph.
pub struct Ann {
    index: Index,
}

/// The graphs over the rows of the documents that share one set of groups.
pub struct Partition {
    /// The groups (empty: public), as the documents carry them.
    pub groups: Vec<String>,
    /// Over their chunk vectors (keys are chunk numbers).
    pub chunks: Ann,
    /// Over their subchunk vectors (keys are subchunk numbers).
    pub subchunks: Ann,
    /// Its chunk numbers, ascending.
    pub chunk_keys: Vec<u32>,
    /// Its subchunk numbers, ascending.
    pub subchunk_keys: Vec<u32>,
}

/// A version's graphs.
pub struct Graphs {
    /// One per set of access groups.
    pub partitions: Vec<Partition>,
}

/// `ann.json`: each partition's groups and row counts, in file order.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartitionRecord {
    /// The groups its documents carry.
    pub groups: Vec<String>,
    /// Its chunk rows.
    pub chunks: usize,
    /// Its subchunk rows.
    pub subchunks: usize,
}

/// The file names of partition `i`'s two graphs.
pub fn partition_files(i: usize) -> [String; 2] {
    [
        format!("ann-{i}-chunks.usearch"),
        format!("ann-{i}-subchunks.usearch"),
    ]
}

/// The file names of partition `i`'s row lists (ascending little-endian u32s).
pub fn key_files(i: usize) -> [String; 2] {
    [
        format!("ann-{i}-chunks.keys"),
        format!("ann-{i}-subchunks.keys"),
    ]
}

fn write_keys(path: &Path, keys: &[u32]) -> Result<(), AnnError> {
    let bytes: Vec<u8> = keys.iter().flat_map(|k| k.to_le_bytes()).collect();
    std::fs::write(path, bytes).map_err(|e| err(path, e))
}

fn read_keys(path: &Path, want: usize, rows: usize) -> Result<Vec<u32>, AnnError> {
    let bytes = std::fs::read(path).map_err(|e| err(path, e))?;
    let keys: Vec<u32> = bytes
        .chunks_exact(4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    let ascending = keys.windows(2).all(|w| w[0] < w[1]);
    let in_range = keys.last().is_none_or(|&k| (k as usize) < rows);
    if bytes.len() != want * 4 || !ascending || !in_range {
        return Err(err(
            path,
            format!("expected {want} ascending row numbers below {rows}"),
        ));
    }
    Ok(keys)
}

fn options(dim: usize) -> IndexOptions {
    IndexOptions {
        dimensions: dim,
        // Rows are unit vectors: inner product is cosine, and cheaper.
        metric: MetricKind::IP,
        quantization: ScalarKind::I8,
        connectivity: CONNECTIVITY,
        expansion_add: EXPANSION_ADD,
        expansion_search: DEFAULT_EXPANSION,
        multi: false,
    }
}

/// Builds the graph of rows `keys` of `rows` (keys stay row numbers) at `path`.
fn build(rows: &[f32], dim: usize, keys: &[u32], path: &Path) -> Result<(), AnnError> {
    let index = Index::new(&options(dim)).map_err(|e| err(path, e))?;
    // One thread: insertion order, and so the graph, is the same every build.
    index
        .reserve_capacity_and_threads(keys.len(), 1)
        .map_err(|e| err(path, e))?;
    for &k in keys {
        let k = k as usize;
        let row = rows
            .get(k * dim..(k + 1) * dim)
            .ok_or_else(|| err(path, format!("row {k} is past the vectors")))?;
        index.add(k as u64, row).map_err(|e| err(path, e))?;
    }
    let name = path.to_str().ok_or_else(|| err(path, "not a UTF-8 path"))?;
    index.save(name).map_err(|e| err(path, e))
}

/// Writes the graphs of a version into `dir`: [`PARTITIONS`] and, per
/// partition, two graphs and their row lists. `chunk_doc` names each
/// chunk's document, `subchunk_chunk` each subchunk's chunk; the rows are
/// `dim`-wide.
pub fn write(
    dir: &Path,
    docs: &[DocRecord],
    chunk_doc: &[u32],
    subchunk_chunk: &[u32],
    chunk_rows: &[f32],
    subchunk_rows: &[f32],
    dim: usize,
) -> Result<(), AnnError> {
    let groups_of = |chunk: u32| {
        let doc = chunk_doc.get(chunk as usize).copied().unwrap_or(u32::MAX);
        let mut g = docs
            .get(doc as usize)
            .map(|d| d.groups.clone())
            .unwrap_or_default();
        g.sort();
        g
    };
    // Partitions in the order of their group lists: the same docs, the same files.
    let mut parts: BTreeMap<Vec<String>, (Vec<u32>, Vec<u32>)> = BTreeMap::new();
    for c in 0..chunk_doc.len() as u32 {
        parts.entry(groups_of(c)).or_default().0.push(c);
    }
    for (s, &c) in subchunk_chunk.iter().enumerate() {
        parts.entry(groups_of(c)).or_default().1.push(s as u32);
    }
    let mut records = Vec::new();
    for (i, (groups, (chunks, subchunks))) in parts.into_iter().enumerate() {
        let [cg, sg] = partition_files(i);
        build(chunk_rows, dim, &chunks, &dir.join(cg))?;
        build(subchunk_rows, dim, &subchunks, &dir.join(sg))?;
        let [ck, sk] = key_files(i);
        write_keys(&dir.join(ck), &chunks)?;
        write_keys(&dir.join(sk), &subchunks)?;
        records.push(PartitionRecord {
            groups,
            chunks: chunks.len(),
            subchunks: subchunks.len(),
        });
    }
    let path = dir.join(PARTITIONS);
    let bytes = serde_json::to_vec_pretty(&records).map_err(|e| err(&path, e))?;
    std::fs::write(&path, bytes).map_err(|e| err(&path, e))
}

/// Opens the graphs in `dir` over `chunks` and `subchunks` (`None` when the
/// version has none), checking each holds the rows its record says and that
/// their row lists hold every row exactly once. `threads`: concurrent
/// searches each graph serves; `expansion`: candidates each search keeps.
pub fn open(
    dir: &Path,
    chunks: &Vectors,
    subchunks: &Vectors,
    threads: usize,
    expansion: usize,
) -> Result<Option<Graphs>, AnnError> {
    let path = dir.join(PARTITIONS);
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(err(&path, e)),
    };
    let records: Vec<PartitionRecord> =
        serde_json::from_slice(&bytes).map_err(|e| err(&path, e))?;
    let mut seen_chunks = vec![false; chunks.len()];
    let mut seen_subchunks = vec![false; subchunks.len()];
    let mut partitions = Vec::new();
    for (i, r) in records.into_iter().enumerate() {
        let ([cg, sg], [ck, sk]) = (partition_files(i), key_files(i));
        let chunk_keys = read_keys(&dir.join(ck), r.chunks, chunks.len())?;
        let subchunk_keys = read_keys(&dir.join(sk), r.subchunks, subchunks.len())?;
        for (keys, seen) in [
            (&chunk_keys, &mut seen_chunks),
            (&subchunk_keys, &mut seen_subchunks),
        ] {
            for &k in keys {
                if std::mem::replace(&mut seen[k as usize], true) {
                    return Err(err(&path, format!("row {k} is in two partitions")));
                }
            }
        }
        partitions.push(Partition {
            chunks: Ann::open(&dir.join(cg), chunks.dim(), r.chunks, threads, expansion)?,
            subchunks: Ann::open(
                &dir.join(sg),
                subchunks.dim(),
                r.subchunks,
                threads,
                expansion,
            )?,
            groups: r.groups,
            chunk_keys,
            subchunk_keys,
        });
    }
    if seen_chunks.iter().chain(&seen_subchunks).any(|s| !s) {
        return Err(err(&path, "some rows are in no partition"));
    }
    Ok(Some(Graphs { partitions }))
}

impl Ann {
    /// Maps the graph at `path`, checking it holds `rows` rows of `dim` dimensions.
    fn open(
        path: &Path,
        dim: usize,
        rows: usize,
        threads: usize,
        expansion: usize,
    ) -> Result<Self, AnnError> {
        let name = path.to_str().ok_or_else(|| err(path, "not a UTF-8 path"))?;
        let index = Index::new(&options(dim)).map_err(|e| err(path, e))?;
        index.view(name).map_err(|e| err(path, e))?;
        if index.size() != rows || index.dimensions() != dim {
            return Err(err(
                path,
                format!(
                    "{} rows of {} dimensions, expected {rows} of {dim}",
                    index.size(),
                    index.dimensions()
                ),
            ));
        }
        // Each concurrent search takes one of these slots.
        index
            .reserve_capacity_and_threads(index.size(), threads.max(1))
            .map_err(|e| err(path, e))?;
        // Set once, before any search: searches only read it.
        index.change_expansion_search(expansion.max(1));
        Ok(Self { index })
    }

    /// Up to `k` rows nearest `query` among those `keep` accepts, nearest
    /// first, with approximate (int8) inner products. An error (every
    /// search slot taken, say) is for the caller to answer exactly instead.
    pub fn search(
        &self,
        query: &[f32],
        k: usize,
        keep: impl Fn(u32) -> bool,
    ) -> Result<Vec<(u32, f32)>, String> {
        if self.index.size() == 0 {
            return Ok(Vec::new());
        }
        let m = self
            .index
            .filtered_search(query, k, |key| u32::try_from(key).is_ok_and(&keep))
            .map_err(|e| e.to_string())?;
        // usearch's IP distance is 1 - dot (of the int8 rows).
        Ok(m.keys
            .iter()
            .zip(&m.distances)
            .filter_map(|(k, d)| Some((u32::try_from(*k).ok()?, 1.0 - d)))
            .collect())
    }

    /// Rows in the graph.
    pub fn len(&self) -> usize {
        self.index.size()
    }

    /// Whether the graph is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit_rows(n: usize, dim: usize, seed: u64) -> Vec<f32> {
        let mut s = seed;
        let mut next = || {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 33) as f32 / (1u64 << 31) as f32) - 0.5
        };
        let mut out = Vec::with_capacity(n * dim);
        for _ in 0..n {
            let row: Vec<f32> = (0..dim).map(|_| next()).collect();
            let norm = row.iter().map(|x| x * x).sum::<f32>().sqrt();
            out.extend(row.iter().map(|x| x / norm));
        }
        out
    }

    fn vectors(dir: &Path, name: &str, rows: &[f32], dim: usize) -> Vectors {
        let mut bytes = Vec::new();
        crate::vectors::encode_into(&mut bytes, rows);
        let path = dir.join(name);
        std::fs::write(&path, bytes).expect("write");
        Vectors::open(&path, dim).expect("vectors")
    }

    fn doc(groups: &[&str]) -> DocRecord {
        let mut d: DocRecord = serde_json::from_value(serde_json::json!({
            "doc_id": "c/r/a.py", "repo": "r", "category": "c", "toolkit": "r", "path": "a.py",
            "doctype": "code", "language": "python", "sha256": "00", "size": 1,
            "line_count": 1, "content_offset": 0
        }))
        .expect("doc");
        d.groups = groups.iter().map(|g| g.to_string()).collect();
        d
    }

    #[test]
    fn graphs_are_deterministic_partitioned_by_groups_and_find_neighbours() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let (n, dim) = (1200, 32);
        let rows = unit_rows(n, dim, 7);
        let subs = unit_rows(2 * n, dim, 8);
        // Documents 0 and 1 are public, 2 is team-a's; chunk c is in doc c % 3.
        let docs = [doc(&[]), doc(&[]), doc(&["team-a"])];
        let chunk_doc: Vec<u32> = (0..n as u32).map(|c| c % 3).collect();
        let sub_chunk: Vec<u32> = (0..2 * n as u32).map(|s| s / 2).collect();
        let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
        for d in [&a, &b] {
            std::fs::create_dir_all(d).expect("mkdir");
            write(d, &docs, &chunk_doc, &sub_chunk, &rows, &subs, dim).expect("write");
        }
        let files = [
            partition_files(0),
            partition_files(1),
            key_files(0),
            key_files(1),
        ];
        for f in files.iter().flatten() {
            assert_eq!(
                std::fs::read(a.join(f)).ok(),
                std::fs::read(b.join(f)).ok(),
                "{f}"
            );
        }
        let cv = vectors(tmp.path(), "c.f32", &rows, dim);
        let sv = vectors(tmp.path(), "s.f32", &subs, dim);
        let g = open(&a, &cv, &sv, 2, 64).expect("open").expect("graphs");
        assert_eq!(g.partitions.len(), 2);
        assert_eq!(
            (
                g.partitions[0].groups.len(),
                g.partitions[1].groups[0].as_str()
            ),
            (0, "team-a")
        );
        // A public row finds itself in the public graph, never a team-a row.
        let public = &g.partitions[0];
        assert_eq!(
            public
                .chunks
                .search(cv.row(123), 5, |_| true)
                .expect("search")
                .first()
                .map(|h| h.0),
            Some(123)
        );
        assert!(
            public
                .chunks
                .search(cv.row(125), 20, |_| true)
                .expect("search")
                .iter()
                .all(|(c, _)| c % 3 != 2)
        );
        let even = public
            .chunks
            .search(cv.row(123), 5, |k| k % 2 == 0)
            .expect("search");
        assert!(
            even.len() == 5 && even.iter().all(|(k, _)| k % 2 == 0),
            "{even:?}"
        );
        // Graphs over other rows are refused.
        let short = vectors(tmp.path(), "o.f32", &rows[..dim * 10], dim);
        assert!(open(&a, &short, &sv, 1, 64).is_err());
        assert!(
            open(tmp.path(), &cv, &sv, 1, 64)
                .expect("no graphs")
                .is_none()
        );
    }
}
