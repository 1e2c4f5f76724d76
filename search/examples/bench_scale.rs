//! How the vector stage of a search grows with the corpus, exact scan
//! against the inverted lists (`cairn_index::ann`), at a multiple of a real
//! index's rows. Run by `scripts/bench-scale.sh`; three steps, each its own
//! process so each one's peak memory is its own:
//!
//! ```text
//! bench_scale make INDEX FACTOR DIR      synthetic rows and their lists
//! bench_scale run DIR GOLDEN MODE        MODE: exact or ann; prints one JSON object
//! bench_scale version INDEX FACTOR ROOT  a whole version of FACTOR copies, under index root ROOT
//! ```
//!
//! `version` writes what `cairn build` would for FACTOR copies of every
//! repository (copy c's are `<name>-cNNN`; every twentieth copy public, the
//! others in group `staff`), through the same `VersionBuilder` (tantivy,
//! content, trigrams, the approximate index), so `cairn serve` and the
//! engine can be measured on it; no text is embedded, each copy's vectors
//! are the original's with the same noise as `make`'s. (A real build of
//! renamed copies would embed every text again: the repository's name is
//! in what the model reads.) A chunk's BM25 body is its lines; the names it
//! defines are not kept in a version, so that field is empty in the copies.
//!
//! `make` copies every chunk and subchunk vector FACTOR times (copy 0 is the
//! real row; the others add seeded Gaussian noise, σ = SIGMA a dimension,
//! 0.01 by default, then renormalise: cosine ≈ 0.98 to the original), as FACTOR synthetic
//! repositories; one document in twenty is public and the rest belong to a
//! group, so a restricted caller without groups sees 5 % of the documents,
//! and builds the lists as a version's (one pair per group set). `run` embeds the golden questions (new questions: no cache),
//! then for each caller takes the two candidate lists search takes (the 200
//! best chunks by cosine, and by their best subchunk), exactly or through
//! the approximate index (the head of each list re-scored exactly), and reports latency,
//! recall@10 of its lists against the exact ones, and peak RSS.

#[path = "bench_scale/noise.rs"]
mod noise;
#[path = "bench_scale/version.rs"]
mod version;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use cairn_embed::{BertEmbedder, DevicePref, Embedder, ModelSpec};
use cairn_index::ann::{self, AnnIndex};
use cairn_index::vectors::{Vectors, encode_into};
use cairn_index::{IndexRoot, Snapshot};
use cairn_search::rank::{
    VectorLists, VectorRows, VectorSearch, mask_rows, uses_ann, vector_lists,
};
use noise::Noise;
use serde_json::json;
use std::collections::HashSet;
use std::path::Path;
use std::time::Instant;

/// Rows per list, as search takes them.
const CANDIDATES: usize = 200;

type Res<T> = Result<T, Box<dyn std::error::Error>>;

fn main() -> Res<()> {
    let a: Vec<String> = std::env::args().collect();
    match a.get(1).map(String::as_str) {
        Some("make") if a.len() >= 5 => {
            let sigma = a.get(5).map_or(Ok(0.01), |s| s.parse())?;
            make(Path::new(&a[2]), a[3].parse()?, Path::new(&a[4]), sigma)
        }
        Some("version") if a.len() >= 5 => {
            let sigma = a.get(5).map_or(Ok(0.01), |s| s.parse())?;
            version::version(Path::new(&a[2]), a[3].parse()?, Path::new(&a[4]), sigma)
        }
        Some("run") if a.len() >= 5 => {
            // Optional: EXACT_BELOW OVERSAMPLE PROBES EXACT_TOP (search's defaults otherwise).
            let d = VectorSearch::default();
            let arg = |i: usize, default: usize| a.get(i).map_or(Ok(default), |n| n.parse());
            let how = VectorSearch {
                exact_below: arg(5, d.exact_below)?,
                oversample: arg(6, d.oversample)?,
                exact_top: arg(8, d.exact_top)?,
            };
            let probes = arg(7, ann::DEFAULT_PROBES)?;
            run(Path::new(&a[2]), Path::new(&a[3]), &a[4], &how, probes)
        }
        _ => Err("usage: bench_scale make INDEX FACTOR DIR [SIGMA] | version INDEX FACTOR ROOT [SIGMA] | run DIR GOLDEN exact|ann [EXACT_BELOW OVERSAMPLE PROBES EXACT_TOP]".into()),
    }
}

fn copy_rows(src: &Vectors, factor: usize, sigma: f32, noise: &mut Noise) -> Vec<f32> {
    let dim = src.dim();
    let mut out = Vec::with_capacity(src.len() * dim * factor);
    for c in 0..factor {
        for i in 0..src.len() {
            let row = src.row(i);
            if c == 0 {
                out.extend_from_slice(row);
                continue;
            }
            let noisy: Vec<f32> = row.iter().map(|x| x + sigma * noise.normal()).collect();
            let norm = noisy.iter().map(|x| x * x).sum::<f32>().sqrt();
            out.extend(noisy.iter().map(|x| x / norm));
        }
    }
    out
}

fn write_f32(path: &Path, rows: &[f32]) -> Res<()> {
    let mut bytes = Vec::new();
    encode_into(&mut bytes, rows);
    std::fs::write(path, bytes)?;
    Ok(())
}

fn make(index: &Path, factor: usize, dir: &Path, sigma: f32) -> Res<()> {
    std::fs::create_dir_all(dir)?;
    let snap = Snapshot::open_current(&IndexRoot::new(index))?;
    let mut noise = Noise(42);
    let (chunks, subs) = (snap.vectors.len(), snap.subchunk_vectors.len());
    let chunk_rows = copy_rows(&snap.vectors, factor, sigma, &mut noise);
    let sub_rows = copy_rows(&snap.subchunk_vectors, factor, sigma, &mut noise);
    write_f32(&dir.join("chunks.f32"), &chunk_rows)?;
    write_f32(&dir.join("subchunks.f32"), &sub_rows)?;
    // Each copy is a repository; one document in twenty (by a hash of copy
    // and document) is public, the rest belong to group `staff`. The
    // restricted caller has no groups: it sees the public 5 %.
    let public = |c: usize, d: u32| {
        let h = (c as u64 * 1_000_003 + u64::from(d)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        (h >> 32).is_multiple_of(20)
    };
    let mut docs = Vec::with_capacity(snap.docs.len() * factor);
    let mut chunk_doc = Vec::with_capacity(chunks * factor);
    let mut sub_chunk = Vec::with_capacity(subs * factor);
    let mut allowed = Vec::with_capacity(chunks * factor);
    for c in 0..factor {
        docs.extend(snap.docs.iter().enumerate().map(|(d, r)| {
            let mut r = r.clone();
            r.groups = match public(c, d as u32) {
                true => Vec::new(),
                false => vec!["staff".to_owned()],
            };
            r
        }));
        let base = (c * snap.docs.len()) as u32;
        chunk_doc.extend(snap.chunks.iter().map(|ch| base + ch.doc));
        sub_chunk.extend(snap.subchunks.iter().map(|s| (c * chunks) as u32 + s.chunk));
        allowed.extend(snap.chunks.iter().map(|ch| u8::from(public(c, ch.doc))));
    }
    std::fs::write(
        dir.join("sub_chunk.u32"),
        sub_chunk
            .iter()
            .flat_map(|c| c.to_le_bytes())
            .collect::<Vec<u8>>(),
    )?;
    std::fs::write(dir.join("allowed.u8"), &allowed)?;
    let dim = snap.vectors.dim();
    let t = Instant::now();
    ann::write(
        dir,
        &docs,
        &chunk_doc,
        &sub_chunk,
        &chunk_rows,
        &sub_rows,
        dim,
    )?;
    let build_s = t.elapsed().as_secs_f64();
    let size = |f: &str| std::fs::metadata(dir.join(f)).map_or(0, |m| m.len());
    let ann_bytes: u64 = (0..2)
        .flat_map(ann::partition_files)
        .map(|f| size(&f))
        .sum();
    let out = json!({
        "factor": factor, "sigma": sigma, "chunk_rows": chunks * factor, "subchunk_rows": subs * factor,
        "ann_build_s": build_s,
        "f32_mb": (size("chunks.f32") + size("subchunks.f32")) as f64 / 1e6,
        "ann_mb": ann_bytes as f64 / 1e6,
    });
    std::fs::write(dir.join("make.json"), out.to_string())?;
    println!("{out}");
    Ok(())
}

/// The synthetic rows, as search reads a version's.
struct Rows {
    chunks: Vectors,
    subs: Vectors,
    sub_chunk: Vec<u32>,
    ann: Option<AnnIndex>,
}

impl VectorRows for Rows {
    fn chunk_rows(&self) -> &Vectors {
        &self.chunks
    }
    fn subchunk_rows(&self) -> &Vectors {
        &self.subs
    }
    fn chunk_of(&self, s: usize) -> u32 {
        self.sub_chunk[s]
    }
    fn ann(&self) -> Option<&AnnIndex> {
        self.ann.as_ref()
    }
}

/// The same rows without their approximate index: the exact lists recall is measured against.
struct Exact<'a>(&'a Rows);

impl VectorRows for Exact<'_> {
    fn chunk_rows(&self) -> &Vectors {
        &self.0.chunks
    }
    fn subchunk_rows(&self) -> &Vectors {
        &self.0.subs
    }
    fn chunk_of(&self, s: usize) -> u32 {
        self.0.sub_chunk[s]
    }
    fn ann(&self) -> Option<&AnnIndex> {
        None
    }
}

fn recall_at(k: usize, got: &[(u32, f32)], want: &[(u32, f32)]) -> f64 {
    let want: HashSet<u32> = want.iter().take(k).map(|h| h.0).collect();
    if want.is_empty() {
        return 1.0;
    }
    got.iter().take(k).filter(|h| want.contains(&h.0)).count() as f64 / want.len() as f64
}

fn pct(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    v[((v.len() as f64 - 1.0) * p).round() as usize]
}

/// A `/proc/self/status` figure in MB (`VmHWM`: peak; `RssAnon`, `RssFile`: now).
fn status_mb(field: &str) -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

fn peak_rss_mb() -> f64 {
    status_mb("VmHWM:")
}

fn run(dir: &Path, golden: &Path, mode: &str, how: &VectorSearch, probes: usize) -> Res<()> {
    let made: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("make.json"))?)?;
    let files = ModelSpec::Hub {
        id: cairn_embed::DEFAULT_MODEL.to_owned(),
        revision: "main".to_owned(),
    }
    .locate()?;
    let embedder = BertEmbedder::load(&files, DevicePref::Cpu)?;
    let questions: Vec<String> = cairn_search::eval::load(golden)?
        .into_iter()
        .map(|q| q.query)
        .collect();
    let texts: Vec<&str> = questions.iter().map(String::as_str).collect();
    let queries = embedder.embed(&texts)?;
    let dim = queries.first().map_or(0, Vec::len);
    let rss_model = peak_rss_mb();
    let chunks = Vectors::open(&dir.join("chunks.f32"), dim)?;
    let subs = Vectors::open(&dir.join("subchunks.f32"), dim)?;
    let sub_chunk: Vec<u32> = std::fs::read(dir.join("sub_chunk.u32"))?
        .chunks_exact(4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    let chunk_of = |s: u32| sub_chunk.get(s as usize).copied();
    let ann = match mode {
        "ann" => ann::open(dir, &chunks, &subs, chunk_of, probes)?,
        _ => None,
    };
    let rows = Rows {
        sub_chunk,
        chunks,
        subs,
        ann,
    };
    let everyone = vec![true; rows.chunks.len()];
    let restricted: Vec<bool> = std::fs::read(dir.join("allowed.u8"))?
        .into_iter()
        .map(|b| b == 1)
        .collect();
    let no_groups: Vec<String> = Vec::new();
    let callers = [
        ("all", &everyone, None),
        ("restricted", &restricted, Some(&no_groups[..])),
    ];
    // Timed first, for both callers, so the peak RSS after it is what serving
    // touches; the exact lists recall is measured against come after.
    let mut timed = Vec::new();
    for (_, mask, groups) in callers {
        let mut ms = Vec::new();
        let mut lists: Vec<VectorLists> = Vec::new();
        for q in &queries {
            let t = Instant::now();
            lists.extend(vector_lists(&rows, q, &[mask], CANDIDATES, groups, how));
            ms.push(t.elapsed().as_secs_f64() * 1e3);
        }
        timed.push((ms, lists));
    }
    let rss_search = peak_rss_mb();
    // Mapped files' pages count in RSS but are page cache the kernel can take
    // back; anonymous memory is what the process itself holds.
    let (rss_anon, rss_file) = (status_mb("RssAnon:"), status_mb("RssFile:"));
    let mut out = serde_json::Map::new();
    for ((caller, mask, groups), (mut ms, lists)) in callers.into_iter().zip(timed) {
        let (mut r10, mut r200) = (Vec::new(), Vec::new());
        for (q, got) in queries.iter().zip(&lists) {
            let want = vector_lists(&Exact(&rows), q, &[mask], CANDIDATES, groups, how)
                .pop()
                .unwrap_or_default();
            r10.push((recall_at(10, &got.0, &want.0) + recall_at(10, &got.1, &want.1)) / 2.0);
            r200.push((recall_at(200, &got.0, &want.0) + recall_at(200, &got.1, &want.1)) / 2.0);
        }
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
        out.insert(
            caller.to_owned(),
            json!({
                "p50_ms": pct(&mut ms, 0.5), "p99_ms": pct(&mut ms, 0.99),
                "recall_at_10": mean(&r10), "recall_at_200": mean(&r200),
                "rows": mask_rows(&rows, mask), "uses_ann": uses_ann(&rows, mask, how),
            }),
        );
    }
    let line = json!({
        "mode": mode, "factor": made["factor"], "rows": rows.chunks.len() + rows.subs.len(),
        "queries": queries.len(), "exact_below": how.exact_below, "oversample": how.oversample, "exact_top": how.exact_top, "probes": probes, "callers": out,
        // The model's own memory, then the peak after the timed searches
        // (what serving touches); the recall pass after it scans everything.
        "rss_model_mb": rss_model, "rss_search_mb": rss_search,
        "rss_anon_mb": rss_anon, "rss_file_mb": rss_file, "sigma": made["sigma"],
        "ann_build_s": made["ann_build_s"], "f32_mb": made["f32_mb"], "ann_mb": made["ann_mb"],
    });
    println!("{line}");
    Ok(())
}
