//! `bench_scale version`: a whole version of FACTOR copies of an index's
//! current one, written through the same `VersionBuilder` a build uses
//! (see the example's comment).

use crate::noise::Noise;
use cairn_index::builder::{NewChunk, VersionBuilder};
use cairn_index::ids::DocId;
use cairn_index::{DefinitionRecord, DocRecord, IndexRoot, LineSpan, Snapshot};
use serde_json::json;
use std::path::Path;
use std::time::Instant;

type Res<T> = Result<T, Box<dyn std::error::Error>>;

/// A whole version of `factor` copies of `index`'s current one, published
/// under the index root `out` (see the example's comment).
pub fn version(index: &Path, factor: usize, out: &Path, sigma: f32) -> Res<()> {
    let snap = Snapshot::open_current(&IndexRoot::new(index))?;
    let root = IndexRoot::new(out);
    std::fs::create_dir_all(out)?;
    let copies = copy_docs(&snap, factor)?;
    let t = Instant::now();
    let mut builder = VersionBuilder::create(
        &root,
        &copies.docs,
        &copies.content,
        &copies.definitions,
        &snap.path_weights,
    )?;
    // The copies' repositories have no mirrors: a history that records none.
    builder.write_history(&cairn_index::history::History::default())?;
    let mut copier = ChunkCopier::new(&snap, sigma);
    for c in 0..factor {
        copier.add_copy(&mut builder, c)?;
    }
    let mut manifest = snap.manifest.clone();
    manifest.repos = (0..factor)
        .flat_map(|c| {
            snap.manifest.repos.iter().map(move |r| {
                let mut r = r.clone();
                r.name = copy_name(&r.name, c);
                r.groups = copy_groups(c);
                r
            })
        })
        .collect();
    manifest.counts.docs = copies.docs.len();
    manifest.counts.chunks = builder.chunk_count();
    manifest.counts.subchunks = builder.subchunk_count();
    let digest = format!("{:016x}", 0x5ca1_e000_0000_0000_u64 + factor as u64);
    manifest.index_version = cairn_index::ids::IndexVersion::from_digest(&digest);
    let version = manifest.index_version.clone();
    builder.with_ann(true).seal(manifest)?;
    root.set_current(&version)?;
    println!(
        "{}",
        json!({"factor": factor, "docs": copies.docs.len(), "dim": snap.vectors.dim(), "version": version.to_string(),
               "build_s": t.elapsed().as_secs_f64()})
    );
    Ok(())
}

/// Copy `c`'s name of a repository.
fn copy_name(name: &str, c: usize) -> String {
    format!("{name}-c{c:03}")
}

/// Copy `c`'s access groups: every twentieth copy public, the others `staff`.
fn copy_groups(c: usize) -> Vec<String> {
    match c % 20 {
        0 => Vec::new(),
        _ => vec!["staff".to_owned()],
    }
}

/// The documents of every copy, their content and their definitions.
struct Copies {
    docs: Vec<DocRecord>,
    content: Vec<u8>,
    definitions: Vec<DefinitionRecord>,
}

/// `factor` copies of `snap`'s documents, each renamed into its copy's repository.
fn copy_docs(snap: &Snapshot, factor: usize) -> Res<Copies> {
    let (mut docs, mut content, mut definitions) = (Vec::new(), Vec::new(), Vec::new());
    for c in 0..factor {
        let first = docs.len() as u32;
        for (d, r) in snap.docs.iter().enumerate() {
            let mut r = r.clone();
            r.repo = copy_name(&r.repo, c);
            r.doc_id = DocId::new(&r.category, &r.repo, &r.path)?;
            r.content_offset = content.len() as u64;
            r.groups = copy_groups(c);
            content.extend_from_slice(snap.doc_bytes(d as u32));
            docs.push(r);
        }
        definitions.extend(snap.definitions.iter().map(|def| {
            let mut def = def.clone();
            def.doc += first;
            def
        }));
    }
    Ok(Copies {
        docs,
        content,
        definitions,
    })
}

/// Adds the copies' chunks to a version: their texts and their vectors,
/// noisy as `make`'s, drawn from one seeded stream across all copies.
struct ChunkCopier<'a> {
    snap: &'a Snapshot,
    /// Each chunk's subchunk spans.
    subs_of: Vec<Vec<LineSpan>>,
    sigma: f32,
    noise: Noise,
}

impl<'a> ChunkCopier<'a> {
    /// A copier of `snap`'s chunks with noise of `sigma` a dimension.
    fn new(snap: &'a Snapshot, sigma: f32) -> Self {
        let mut subs_of: Vec<Vec<LineSpan>> = vec![Vec::new(); snap.chunks.len()];
        for s in &snap.subchunks {
            subs_of[s.chunk as usize].push(s.span);
        }
        Self {
            snap,
            subs_of,
            sigma,
            noise: Noise(42),
        }
    }

    /// `row` as copy `c` has it: the original in copy 0, else noisy and renormalised.
    fn noisy(&mut self, row: &[f32], c: usize) -> Vec<f32> {
        if c == 0 {
            return row.to_vec();
        }
        let v: Vec<f32> = row
            .iter()
            .map(|x| x + self.sigma * self.noise.normal())
            .collect();
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.iter().map(|x| x / norm).collect()
    }

    /// Copy `c`'s chunks, document by document.
    fn add_copy(&mut self, builder: &mut VersionBuilder, c: usize) -> Res<()> {
        let snap = self.snap;
        let (mut chunk, mut sub) = (0usize, 0usize);
        for d in 0..snap.docs.len() {
            let first = chunk;
            while snap.chunks.get(chunk).is_some_and(|r| r.doc as usize == d) {
                chunk += 1;
            }
            let texts: Vec<String> = snap.chunks[first..chunk]
                .iter()
                .map(|r| {
                    let bytes = snap.span_bytes(d as u32, r.span).map_or(&[][..], |b| b.0);
                    String::from_utf8_lossy(bytes).into_owned()
                })
                .collect();
            let chunks: Vec<NewChunk<'_>> = snap.chunks[first..chunk]
                .iter()
                .zip(&texts)
                .enumerate()
                .map(|(i, (r, text))| NewChunk {
                    span: r.span,
                    title: &r.title,
                    tokens: r.tokens,
                    text,
                    symbols: &[],
                    subchunks: self.subs_of[first + i].clone(),
                })
                .collect();
            let mut rows: Vec<Vec<f32>> = Vec::new();
            for (i, n) in chunks.iter().enumerate() {
                rows.push(self.noisy(snap.vectors.row(first + i), c));
                for _ in &n.subchunks {
                    rows.push(self.noisy(snap.subchunk_vectors.row(sub), c));
                    sub += 1;
                }
            }
            let doc = (c * snap.docs.len() + d) as u32;
            builder.add_doc(doc, &chunks, &mut rows.iter().map(Vec::as_slice))?;
        }
        Ok(())
    }
}
