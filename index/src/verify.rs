//! `cairn verify`: recheck a published version against its own manifest.

use crate::ids::IndexVersion;
use crate::layout::IndexRoot;
use crate::layout::{LayoutError, VersionDir, checksum_tree, files};
use crate::manifest::Manifest;
use crate::records::{ChunkRecord, DocRecord, SubchunkRecord};
use crate::{lines::LineCounter, sha256_reader};
use serde::Serialize;
use std::fs;
use std::io::{Read, Seek, SeekFrom};
use std::ops::ControlFlow;

/// Passes a document's bytes on to its hash, counting its lines on the way.
struct CountLines<'a, R> {
    inner: R,
    lines: &'a mut LineCounter,
}

impl<R: Read> Read for CountLines<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.lines.feed(&buf[..n]);
        Ok(n)
    }
}

/// What verification found.
#[derive(Debug, Default, Serialize)]
pub struct VerifyReport {
    /// The version checked.
    pub index_version: Option<IndexVersion>,
    /// Files whose checksum was checked.
    pub files_checked: usize,
    /// Documents whose content hash was checked.
    pub docs_checked: usize,
    /// Chunks whose span was checked.
    pub chunks_checked: usize,
    /// Every problem found; empty means the version is intact.
    pub problems: Vec<String>,
}

impl VerifyReport {
    /// Whether no problem was found.
    pub fn ok(&self) -> bool {
        self.problems.is_empty()
    }
}

/// Verifies the version CURRENT names. Unreadable layouts (no CURRENT, a newer
/// format) are errors; everything else is listed in the report.
pub fn verify(root: &IndexRoot) -> Result<VerifyReport, LayoutError> {
    let version = root.current()?;
    verify_version(&root.version_dir(&version), &version)
}

/// Verifies one version folder.
pub fn verify_version(
    dir: &VersionDir,
    version: &IndexVersion,
) -> Result<VerifyReport, LayoutError> {
    let manifest = dir.read_manifest()?;
    let mut report = VerifyReport {
        index_version: Some(version.clone()),
        ..VerifyReport::default()
    };
    check_version_name(&manifest, version, &mut report.problems);
    check_file_checksums(dir, &manifest, &mut report)?;
    let Some(docs) = read_or_note::<Vec<DocRecord>>(dir, files::DOCS, &mut report.problems) else {
        return Ok(report);
    };
    if check_doc_contents(dir, &docs, &mut report).is_break() {
        return Ok(report);
    }
    let Some(chunks) = read_or_note::<Vec<ChunkRecord>>(dir, files::CHUNKS, &mut report.problems)
    else {
        return Ok(report);
    };
    check_chunk_spans(&chunks, &docs, &mut report);
    // Missing subchunks are a problem, but the checks after still say something.
    let subchunks: Vec<SubchunkRecord> =
        read_or_note(dir, files::SUBCHUNKS, &mut report.problems).unwrap_or_default();
    let registry = Registry {
        docs: &docs,
        chunks: &chunks,
        subchunks: &subchunks,
    };
    let problems = &mut report.problems;
    check_subchunk_spans(&registry, problems);
    check_vector_sizes(dir, &manifest, &registry, problems);
    check_ann_partitions(dir, &manifest, &registry, problems);
    check_counts(&manifest, &registry, problems);
    Ok(report)
}

/// The version's parsed records, handed together to the checks that cross them.
struct Registry<'a> {
    docs: &'a [DocRecord],
    chunks: &'a [ChunkRecord],
    subchunks: &'a [SubchunkRecord],
}

/// The manifest must name the folder it sits in.
fn check_version_name(manifest: &Manifest, version: &IndexVersion, problems: &mut Vec<String>) {
    if &manifest.index_version != version {
        problems.push(format!(
            "manifest says index_version {} but the folder is {version}",
            manifest.index_version
        ));
    }
}

/// Every listed file must be present with its checksum, and nothing unlisted may be.
fn check_file_checksums(
    dir: &VersionDir,
    manifest: &Manifest,
    report: &mut VerifyReport,
) -> Result<(), LayoutError> {
    let actual = checksum_tree(dir.path())?;
    let problems = &mut report.problems;
    for (name, want) in &manifest.files {
        match actual.get(name) {
            None => problems.push(format!("{name}: listed in the manifest but missing")),
            Some(got) if got != want => problems.push(format!(
                "{name}: sha256 {} ({} bytes) does not match the manifest's {} ({} bytes)",
                got.sha256, got.size, want.sha256, want.size
            )),
            Some(_) => {}
        }
        report.files_checked += 1;
    }
    for name in actual.keys().filter(|n| !manifest.files.contains_key(*n)) {
        problems.push(format!("{name}: present but not listed in the manifest"));
    }
    Ok(())
}

/// A registry file parsed, or `None` once its problem is noted.
fn read_or_note<T: serde::de::DeserializeOwned>(
    dir: &VersionDir,
    name: &str,
    problems: &mut Vec<String>,
) -> Option<T> {
    match read_records(dir, name) {
        Ok(records) => Some(records),
        Err(e) => {
            problems.push(e);
            None
        }
    }
}

/// Rehashes each document's content; breaks when content.bin cannot be read at all.
fn check_doc_contents(
    dir: &VersionDir,
    docs: &[DocRecord],
    report: &mut VerifyReport,
) -> ControlFlow<()> {
    // One document at a time: verifying never holds the whole content file.
    let content_path = dir.file(files::CONTENT);
    let opened = fs::File::open(&content_path)
        .and_then(|f| f.metadata().map(|m| (f, m.len())))
        .map_err(|e| format!("{}: {e}", files::CONTENT));
    let (mut content, content_len) = match opened {
        Ok(c) => c,
        Err(e) => {
            report.problems.push(e);
            return ControlFlow::Break(());
        }
    };
    for doc in docs {
        report.docs_checked += 1;
        let inside = doc
            .content_offset
            .checked_add(doc.size)
            .is_some_and(|end| end <= content_len);
        if !inside {
            report.problems.push(format!(
                "{}: content range lies outside content.bin",
                doc.doc_id
            ));
            continue;
        }
        check_doc_content(&mut content, doc, &mut report.problems)?;
    }
    ControlFlow::Continue(())
}

/// Checks one document's hash, line count and page starts; breaks on a read error.
fn check_doc_content(
    content: &mut fs::File,
    doc: &DocRecord,
    problems: &mut Vec<String>,
) -> ControlFlow<()> {
    // Read in pieces, never whole: a document's size is the pack's word.
    let mut lines = LineCounter::default();
    let read = content
        .seek(SeekFrom::Start(doc.content_offset))
        .and_then(|_| {
            sha256_reader(CountLines {
                inner: (&mut *content).take(doc.size),
                lines: &mut lines,
            })
        });
    let (sha256, len) = match read {
        Ok(r) => r,
        Err(e) => {
            problems.push(format!("{}: {e}", files::CONTENT));
            return ControlFlow::Break(());
        }
    };
    if len != doc.size || sha256 != doc.sha256 {
        problems.push(format!("{}: content does not match its sha256", doc.doc_id));
    }
    if lines.line_count() != doc.line_count {
        problems.push(format!(
            "{}: line count does not match its content",
            doc.doc_id
        ));
    }
    if let Some(pdf) = &doc.pdf
        && !pdf.is_valid_for(doc.line_count)
    {
        problems.push(format!(
            "{}: its page starts do not fit its lines",
            doc.doc_id
        ));
    }
    ControlFlow::Continue(())
}

/// Each chunk must name a document and lie within its lines.
fn check_chunk_spans(chunks: &[ChunkRecord], docs: &[DocRecord], report: &mut VerifyReport) {
    for (i, chunk) in chunks.iter().enumerate() {
        report.chunks_checked += 1;
        match docs.get(chunk.doc as usize) {
            None => report.problems.push(format!(
                "chunk {i}: refers to doc {} which does not exist",
                chunk.doc
            )),
            Some(doc)
                if chunk.span.start < 1
                    || chunk.span.start > chunk.span.end
                    || chunk.span.end > doc.line_count =>
            {
                report.problems.push(format!(
                    "chunk {i}: span {} lies outside {} ({} lines)",
                    chunk.span, doc.doc_id, doc.line_count
                ));
            }
            Some(_) => {}
        }
    }
}

/// Each subchunk must overlap the chunk it votes for.
fn check_subchunk_spans(registry: &Registry<'_>, problems: &mut Vec<String>) {
    for (i, s) in registry.subchunks.iter().enumerate() {
        if !registry
            .chunks
            .get(s.chunk as usize)
            .is_some_and(|c| c.span.overlaps(&s.span))
        {
            problems.push(format!(
                "subchunk {i}: span {} does not overlap chunk {}",
                s.span, s.chunk
            ));
        }
    }
}

/// Each vector file must hold exactly one row of `dim` floats per record.
fn check_vector_sizes(
    dir: &VersionDir,
    manifest: &Manifest,
    registry: &Registry<'_>,
    problems: &mut Vec<String>,
) {
    for (file, rows, what) in [
        (files::VECTORS, registry.chunks.len(), "chunks"),
        (
            files::SUBCHUNK_VECTORS,
            registry.subchunks.len(),
            "subchunks",
        ),
    ] {
        let want = rows
            .checked_mul(manifest.model.dim)
            .and_then(|n| n.checked_mul(4))
            .map_or(u64::MAX, |n| n as u64);
        match fs::metadata(dir.file(file)) {
            Ok(m) if m.len() != want => problems.push(format!(
                "{file}: {} bytes, expected {want} ({rows} {what} × dim {})",
                m.len(),
                manifest.model.dim
            )),
            Ok(_) => {}
            Err(e) => problems.push(format!("{file}: {e}")),
        }
    }
}

/// The approximate index, when there is one, must be over exactly these rows.
fn check_ann_partitions(
    dir: &VersionDir,
    manifest: &Manifest,
    registry: &Registry<'_>,
    problems: &mut Vec<String>,
) {
    if !dir.file(files::ANN).exists() {
        return;
    }
    let vectors = |f: &str| {
        crate::vectors::Vectors::open(&dir.file(f), manifest.model.dim)
            .map_err(|e| format!("{f}: {e}"))
    };
    let opened = vectors(files::VECTORS).and_then(|c| {
        let s = vectors(files::SUBCHUNK_VECTORS)?;
        let chunk_of = |s: u32| registry.subchunks.get(s as usize).map(|r| r.chunk);
        crate::ann::open(dir.path(), &c, &s, chunk_of, crate::ann::DEFAULT_PROBES)
            .map_err(|e| e.to_string())
    });
    let ann = match opened {
        Ok(ann) => ann,
        Err(e) => {
            problems.push(e);
            return;
        }
    };
    // Each partition holds exactly the rows of documents with its
    // groups (opening checked its subchunks belong to its chunks).
    for p in ann.iter().flat_map(|a| &a.partitions) {
        let strays = p
            .chunk_keys
            .iter()
            .filter(|&&c| {
                let doc = registry
                    .chunks
                    .get(c as usize)
                    .and_then(|r| registry.docs.get(r.doc as usize));
                doc.is_none_or(|d| {
                    let mut g = d.groups.clone();
                    g.sort();
                    g != p.groups
                })
            })
            .count();
        if strays > 0 {
            problems.push(format!(
                "{}: the partition of groups {:?} holds {strays} rows of other groups",
                files::ANN,
                p.groups
            ));
        }
    }
}

/// The manifest's totals must match the registry it sits beside.
fn check_counts(manifest: &Manifest, registry: &Registry<'_>, problems: &mut Vec<String>) {
    let counts = &manifest.counts;
    let (docs, chunks, subchunks) = (
        registry.docs.len(),
        registry.chunks.len(),
        registry.subchunks.len(),
    );
    if counts.docs != docs || counts.chunks != chunks || counts.subchunks != subchunks {
        problems.push(format!(
            "manifest counts ({} docs, {} chunks, {} subchunks) differ from the registry ({docs} docs, {chunks} chunks, {subchunks} subchunks)",
            counts.docs, counts.chunks, counts.subchunks,
        ));
    }
}

/// One JSON file of the version, parsed; the error names the file.
fn read_records<T: serde::de::DeserializeOwned>(dir: &VersionDir, name: &str) -> Result<T, String> {
    let bytes = fs::read(dir.file(name)).map_err(|e| format!("{name}: {e}"))?;
    serde_json::from_slice(&bytes).map_err(|e| format!("{name}: {e}"))
}
