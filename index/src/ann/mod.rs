//! Approximate nearest neighbours over a version's vectors: inverted lists
//! (IVF) of int8 rows, written once by the builder next to the f32 vectors
//! and memory-mapped by readers. Each row sits in the list of its nearest
//! centroid (spherical k-means); a search scores the centroids, scans the
//! lists of the nearest ones with the caller's filter applied to every row
//! (one pass for several filters), and orders what it keeps by the query
//! in f32 against the int8 rows; callers re-score the head of that order
//! with the f32 rows.
//!
//! One pair of files (chunks, subchunks) per set of access groups the
//! documents carry: a caller scans only the lists of documents it may see,
//! and each pair's centroids are trained on its own rows, so a hidden
//! document moves no centroid and no list a caller reads (hidden equals
//! absent, as for the exact scan); a caller whose filters keep few of a
//! partition's rows scans just those rows exactly instead.
//!
//! Why lists and not a graph (usearch's HNSW until session 18): near
//! duplicates (forks, vendored copies, the scale benchmark's copies) fill a
//! graph node's few links with copies of itself, and a walk stays in one
//! cluster of them (recall@10 0.595 at 100x the corpus); a list holds all
//! copies of a passage together. Building is k-means, parallel and yet
//! deterministic (every row's assignment is computed alone; sums run in row
//! order), where a graph had to be built on one thread to be reproducible.
//! And a scan reads whole lists in order, so only the lists searched are
//! paged in. docs/CHOICES.md has the measurements.
//!
//! File (`ann-<i>-chunks.ivf`, little-endian): `CAIRNIVF`, then u32s format,
//! dim, rows, lists; the centroids (`lists × dim` f32); the lists' offsets
//! (`lists + 1` u32); each row's number, list by list, ascending within a
//! list (`rows` u32); each row's int8 scale (`rows` f32); the int8 rows.

mod search;
mod train;

use train::{list_count, nearest, quantise, train};

use crate::records::DocRecord;
use crate::vectors::Vectors;
use memmap2::Mmap;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

const MAGIC: &[u8; 8] = b"CAIRNIVF";
const FORMAT: u32 = 1;
const HEADER: usize = 8 + 4 * 4;
/// Lists each search scans at least (more when the filter leaves fewer
/// than the candidates asked for). Of the √rows lists at 100× the corpus,
/// 64 gave recall@10 0.9945 against the exact scan (0.9955 for a caller
/// who sees 5 %) and 32 gave 0.990: docs/log/benchmarks.md.
pub const DEFAULT_PROBES: usize = 64;
/// Vector rows (chunks and subchunks) from which the lists pay: an exact
/// scan of fewer takes about 7 ms of one core. The builder's default for
/// writing them and search's for using them.
pub const DEFAULT_MIN_ROWS: usize = 100_000;
/// What the version id records for a version with an approximate index:
/// the structure and its format, so a version with HNSW graphs (before
/// session 18) never shares an id with one with lists.
pub const KIND: &str = "ivf-int8-1";
/// The partitions' list, in a version folder that has the lists.
pub const PARTITIONS: &str = "ann.json";

/// Why the lists could not be built or opened.
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

/// One opened inverted-list file: the centroids, offsets, row numbers and
/// scales in memory, the int8 rows mapped.
pub struct Ivf {
    dim: usize,
    centroids: Vec<f32>,
    offsets: Vec<u32>,
    keys: Vec<u32>,
    scales: Vec<f32>,
    map: Mmap,
    codes_at: usize,
    probes: usize,
}

/// The lists over the rows of the documents that share one set of groups.
pub struct Partition {
    /// The groups (empty: public), as the documents carry them.
    pub groups: Vec<String>,
    /// Over their chunk vectors (keys are chunk numbers).
    pub chunks: Ivf,
    /// Over their subchunk vectors (keys are subchunk numbers).
    pub subchunks: Ivf,
    /// Its chunk numbers, ascending.
    pub chunk_keys: Vec<u32>,
    /// Its subchunk numbers, ascending.
    pub subchunk_keys: Vec<u32>,
}

/// A version's approximate index: its partitions.
pub struct AnnIndex {
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

/// The file names of partition `i`'s two list files.
pub fn partition_files(i: usize) -> [String; 2] {
    [
        format!("ann-{i}-chunks.ivf"),
        format!("ann-{i}-subchunks.ivf"),
    ]
}

/// The file bytes of the lists over rows `keys` of `rows` (keys stay row numbers).
fn build(rows: &[f32], dim: usize, keys: &[u32], path: &Path) -> Result<Vec<u8>, AnnError> {
    if dim == 0 {
        return Err(err(path, "rows of no dimensions"));
    }
    if let Some(&k) = keys.iter().find(|&&k| (k as usize + 1) * dim > rows.len()) {
        return Err(err(path, format!("row {k} is past the vectors")));
    }
    let row = |k: u32| &rows[k as usize * dim..(k as usize + 1) * dim];
    let lists = list_count(keys.len());
    let centroids = match keys.is_empty() {
        true => Vec::new(),
        false => train(rows, dim, keys, lists),
    };
    let lists = centroids.len() / dim;
    let assigned: Vec<u32> = keys
        .par_iter()
        .map(|&k| nearest(&centroids, dim, row(k)))
        .collect();
    // Rows list by list, in key order within each (a stable counting sort).
    let mut offsets = vec![0u32; lists + 1];
    for &l in &assigned {
        offsets[l as usize + 1] += 1;
    }
    for l in 0..lists {
        offsets[l + 1] += offsets[l];
    }
    let mut next: Vec<u32> = offsets[..lists].to_vec();
    let mut order = vec![0u32; keys.len()];
    for (&k, &l) in keys.iter().zip(&assigned) {
        order[next[l as usize] as usize] = k;
        next[l as usize] += 1;
    }
    let quantised: Vec<(Vec<i8>, f32)> = order.par_iter().map(|&k| quantise(row(k))).collect();
    let mut out = Vec::with_capacity(HEADER + 4 * (centroids.len() + lists + 1 + 2 * keys.len()));
    out.extend_from_slice(MAGIC);
    for n in [FORMAT, dim as u32, keys.len() as u32, lists as u32] {
        out.extend_from_slice(&n.to_le_bytes());
    }
    crate::vectors::encode_into(&mut out, &centroids);
    offsets
        .iter()
        .chain(&order)
        .for_each(|n| out.extend_from_slice(&n.to_le_bytes()));
    crate::vectors::encode_into(&mut out, &quantised.iter().map(|q| q.1).collect::<Vec<_>>());
    for (codes, _) in &quantised {
        out.extend(codes.iter().map(|&c| c as u8));
    }
    Ok(out)
}

/// Writes the approximate index of a version into `dir`: [`PARTITIONS`]
/// and, per partition, its two list files. `chunk_doc` names each chunk's
/// document, `subchunk_chunk` each subchunk's chunk; the rows are `dim`-wide.
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
        for (name, rows, keys) in [
            (partition_files(i)[0].clone(), chunk_rows, &chunks),
            (partition_files(i)[1].clone(), subchunk_rows, &subchunks),
        ] {
            let path = dir.join(name);
            let bytes = build(rows, dim, keys, &path)?;
            std::fs::write(&path, bytes).map_err(|e| err(&path, e))?;
        }
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

/// Opens the approximate index in `dir` over `chunks` and `subchunks`
/// (`None` when the version has none), checking each file holds the rows
/// its record says, that together they hold every row exactly once, and
/// that each partition's subchunks belong to its chunks (`chunk_of` names
/// a subchunk's chunk): search reads a partition the caller may see whole
/// without looking its rows up, so a subchunk of another partition would
/// show that partition's chunk. `probes`: lists each search scans at least.
pub fn open(
    dir: &Path,
    chunks: &Vectors,
    subchunks: &Vectors,
    chunk_of: impl Fn(u32) -> Option<u32>,
    probes: usize,
) -> Result<Option<AnnIndex>, AnnError> {
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
        let [cf, sf] = partition_files(i);
        let c = Ivf::open(&dir.join(cf), chunks.dim(), r.chunks, chunks.len(), probes)?;
        let s = Ivf::open(
            &dir.join(sf),
            subchunks.dim(),
            r.subchunks,
            subchunks.len(),
            probes,
        )?;
        let (chunk_keys, subchunk_keys) = (c.sorted_keys(), s.sorted_keys());
        let strays = subchunk_keys
            .iter()
            .filter(|&&s| chunk_of(s).is_none_or(|c| chunk_keys.binary_search(&c).is_err()))
            .count();
        if strays > 0 {
            return Err(err(
                &path,
                format!("partition {i} holds {strays} subchunks of chunks it does not hold"),
            ));
        }
        for (keys, seen) in [
            (&chunk_keys, &mut seen_chunks),
            (&subchunk_keys, &mut seen_subchunks),
        ] {
            for &k in keys {
                if std::mem::replace(&mut seen[k as usize], true) {
                    return Err(err(&path, format!("row {k} is in two lists")));
                }
            }
        }
        partitions.push(Partition {
            chunks: c,
            subchunks: s,
            groups: r.groups,
            chunk_keys,
            subchunk_keys,
        });
    }
    if seen_chunks.iter().chain(&seen_subchunks).any(|s| !s) {
        return Err(err(&path, "some rows are in no list"));
    }
    Ok(Some(AnnIndex { partitions }))
}

/// Reads `n` little-endian u32s at `at` (the caller checked the length).
fn u32s(bytes: &[u8], at: usize, n: usize) -> Vec<u32> {
    bytes[at..at + 4 * n]
        .chunks_exact(4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::train::normalise;
    use super::*;
    use crate::vectors::dot;

    /// A seeded stream of uniform numbers in [-0.5, 0.5).
    struct Lcg(u64);
    impl Lcg {
        fn next(&mut self) -> f32 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((self.0 >> 33) as f32 / (1u64 << 31) as f32) - 0.5
        }
    }

    fn unit(mut row: Vec<f32>) -> Vec<f32> {
        normalise(&mut row);
        row
    }

    fn unit_rows(n: usize, dim: usize, seed: u64) -> Vec<f32> {
        let mut g = Lcg(seed);
        (0..n)
            .flat_map(|_| unit((0..dim).map(|_| g.next()).collect()))
            .collect()
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

    /// The `k` nearest of `keys` by exact inner product.
    fn exact(rows: &[f32], dim: usize, q: &[f32], k: usize) -> Vec<u32> {
        let mut all: Vec<(u32, f32)> = rows
            .chunks_exact(dim)
            .enumerate()
            .map(|(i, r)| (i as u32, dot(r, q)))
            .collect();
        all.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        all.into_iter().take(k).map(|h| h.0).collect()
    }

    #[test]
    fn lists_are_deterministic_partitioned_by_groups_and_find_neighbours() {
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
        let files = [partition_files(0), partition_files(1)];
        for f in files.iter().flatten().chain([&PARTITIONS.to_owned()]) {
            let bytes = std::fs::read(a.join(f)).expect("written");
            assert_eq!(Some(bytes), std::fs::read(b.join(f)).ok(), "{f}");
        }
        let cv = vectors(tmp.path(), "c.f32", &rows, dim);
        let sv = vectors(tmp.path(), "s.f32", &subs, dim);
        let chunk_of = |s: u32| Some(s / 2);
        let g = open(&a, &cv, &sv, chunk_of, 4)
            .expect("open")
            .expect("lists");
        assert_eq!(g.partitions.len(), 2);
        assert_eq!(
            (
                g.partitions[0].groups.len(),
                g.partitions[1].groups[0].as_str()
            ),
            (0, "team-a")
        );
        assert_eq!(
            g.partitions[1].chunk_keys,
            (0..n as u32).filter(|c| c % 3 == 2).collect::<Vec<_>>()
        );
        // A public row finds itself in the public lists, never a team-a row.
        let public = &g.partitions[0];
        assert_eq!(
            public
                .chunks
                .search(cv.row(123), 5, |_| true)
                .first()
                .map(|h| h.0),
            Some(123)
        );
        assert!(
            public
                .chunks
                .search(cv.row(125), 20, |_| true)
                .iter()
                .all(|(c, _)| c % 3 != 2)
        );
        // The filter applies to every row, and more lists are read until
        // enough rows pass it.
        let rare = public.chunks.search(cv.row(123), 5, |k| k % 50 == 0);
        assert!(
            rare.len() == 5 && rare.iter().all(|(k, _)| k % 50 == 0),
            "{rare:?}"
        );
        // Lists over other rows are refused.
        let short = vectors(tmp.path(), "o.f32", &rows[..dim * 10], dim);
        assert!(open(&a, &short, &sv, chunk_of, 4).is_err());
        // Subchunks said to belong to another partition's chunks are refused.
        // (chunk 2 is team-a's; every subchunk said to be its).
        assert!(open(&a, &cv, &sv, |_| Some(2), 4).is_err());
        assert!(open(&a, &cv, &sv, |_| None, 4).is_err());
        assert!(
            open(tmp.path(), &cv, &sv, chunk_of, 4)
                .expect("none")
                .is_none()
        );
    }

    /// The reason for lists over a graph: 40 near copies of each of 100
    /// passages, as forks and vendored files make. A question's ten nearest
    /// rows are copies of two passages, and the lists find them.
    #[test]
    fn near_duplicates_are_found_across_their_copies() {
        let (base, copies, dim) = (100, 40, 48);
        let originals = unit_rows(base, dim, 11);
        let mut g = Lcg(12);
        let rows: Vec<f32> = (0..copies)
            .flat_map(|_| {
                originals
                    .chunks_exact(dim)
                    .flat_map(|r| unit(r.iter().map(|x| x + 0.03 * g.next()).collect()))
                    .collect::<Vec<_>>()
            })
            .collect();
        let keys: Vec<u32> = (0..(base * copies) as u32).collect();
        let tmp = tempfile::tempdir().expect("tempdir");
        let path = tmp.path().join("x.ivf");
        std::fs::write(&path, build(&rows, dim, &keys, &path).expect("build")).expect("write");
        let ivf = Ivf::open(&path, dim, keys.len(), keys.len(), 8).expect("open");
        let (mut found, mut wanted) = (0, 0);
        // A question between two passages: its ten nearest rows are copies
        // of both, in two clusters.
        let original = |i: usize| &originals[i * dim..(i + 1) * dim];
        for i in 0..20 {
            let q = unit(
                original(i)
                    .iter()
                    .zip(original(i + 20))
                    .map(|(a, b)| a + 0.8 * b)
                    .collect(),
            );
            let want = exact(&rows, dim, &q, 10);
            // As search does: int8 candidates, re-scored with the f32 rows.
            let mut got: Vec<(u32, f32)> = ivf
                .search(&q, 40, |_| true)
                .iter()
                .map(|&(k, _)| (k, dot(&rows[k as usize * dim..(k as usize + 1) * dim], &q)))
                .collect();
            got.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            let got: Vec<u32> = got.iter().take(10).map(|h| h.0).collect();
            found += want.iter().filter(|k| got.contains(k)).count();
            wanted += want.len();
        }
        assert!(found * 100 >= wanted * 95, "recall@10 {found}/{wanted}");
    }

    /// One pass for several filters gives each the answer a search with it
    /// alone gives: a wide filter that stops after the first lists, a narrow
    /// one that reads on to find k rows, and candidates past the trim size.
    #[test]
    fn one_pass_for_several_filters_answers_each_as_alone() {
        let (n, dim) = (12_000, 16);
        let rows = unit_rows(n, dim, 21);
        let keys: Vec<u32> = (0..n as u32).collect();
        let tmp = tempfile::tempdir().expect("tempdir");
        let path = tmp.path().join("x.ivf");
        std::fs::write(&path, build(&rows, dim, &keys, &path).expect("build")).expect("write");
        let (wide, narrow, none) = (|_: u32| true, |k: u32| k.is_multiple_of(97), |_: u32| false);
        // 80 lists of about 110 rows: past the trim size for the wide filter.
        for (probes, i, q) in [4, 80].into_iter().flat_map(|p| {
            let qs = unit_rows(10, dim, 22);
            (0..10).map(move |i| (p, i, qs[i * dim..(i + 1) * dim].to_vec()))
        }) {
            let q = &q[..];
            let ivf = Ivf::open(&path, dim, n, n, probes).expect("open");
            for k in [10, 1500] {
                let keeps: [&dyn Fn(u32) -> bool; 3] = [&wide, &narrow, &none];
                let together = ivf.search_scopes(q, k, &keeps);
                let alone: Vec<_> = keeps.iter().map(|f| ivf.search(q, k, f)).collect();
                assert_eq!(together, alone, "probes {probes}, query {i}, k {k}");
                assert_eq!(together[0].len(), k);
                assert!(
                    together[1].iter().all(|(r, _)| r.is_multiple_of(97))
                        && !together[1].is_empty()
                );
                assert!(together[2].is_empty());
            }
        }
    }

    #[test]
    fn damaged_files_are_refused_not_read() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dim = 8;
        let rows = unit_rows(50, dim, 3);
        let keys: Vec<u32> = (0..50).collect();
        let path = tmp.path().join("x.ivf");
        let good = build(&rows, dim, &keys, &path).expect("build");
        let cases: Vec<(&str, Vec<u8>)> = vec![
            ("empty", Vec::new()),
            ("short", good[..5].to_vec()),
            ("header only", good[..HEADER].to_vec()),
            ("cut", good[..good.len() - 1].to_vec()),
            ("magic", [b"NOTANIVF".as_slice(), &good[8..]].concat()),
            ("rows", {
                let mut b = good.clone();
                b[16..20].copy_from_slice(&49u32.to_le_bytes());
                b
            }),
            ("lists", {
                let mut b = good.clone();
                b[20..24].copy_from_slice(&u32::MAX.to_le_bytes());
                b
            }),
        ];
        for (what, bytes) in cases {
            std::fs::write(&path, bytes).expect("write");
            assert!(Ivf::open(&path, dim, 50, 50, 4).is_err(), "{what}");
        }
        std::fs::write(&path, &good).expect("write");
        assert!(Ivf::open(&path, dim, 50, 50, 4).is_ok());
        // A row number past the version's rows is refused.
        assert!(Ivf::open(&path, dim, 50, 40, 4).is_err());
    }
}
