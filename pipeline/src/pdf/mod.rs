//! Text out of a PDF, page by page, bounded in time and memory.
//!
//! Extraction is `pdf-extract`'s interpreter (pure Rust, on `lopdf`) driven
//! through our own output device, so that:
//! - rotated text (a landscape table) is read along its own baseline, not
//!   the page's x axis: words keep their spaces and lines their breaks;
//! - two-column layouts come out column by column, in the order the content
//!   stream draws them (TeX draws a column whole before the next);
//! - ligatures (ﬁ, ﬂ, ﬀ …) become their letters, and a word hyphenated
//!   across a line break is joined on the first line, so both halves are one
//!   searchable word and the line count is unchanged.
//!
//! The interpreter can panic, spin, overflow its stack (a form that draws
//! itself) or inflate a bomb on a hostile file. With a `helper` program (the
//! `cairn` binary sets itself), each PDF is read in a child process under a
//! memory cap (`ulimit -v`) and killed at the deadline: whatever the file
//! does, the build goes on and the file is skipped with a reason. Without
//! one (library callers, unit tests) it runs on a thread of its own under
//! `catch_unwind` with a deadline (a file that misses it is skipped and its
//! thread left to finish; a stack overflow there would end the process).
//! Used by `documents` for PDFs in repositories and for fetched articles.

mod text;

use text::{PageText, assemble};
pub use text::{PdfText, clean};

use cairn_index::manifest::SkipReason;
use serde::{Deserialize, Serialize};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The subcommand a helper program answers (`<helper> __pdf-text …`).
pub const HELPER_COMMAND: &str = "__pdf-text";

/// Bounds on one PDF's extraction.
#[derive(Clone, Debug)]
pub struct PdfLimits {
    /// PDFs larger than this are skipped unread (bytes).
    pub max_bytes: u64,
    /// Extraction slower than this skips the file.
    pub timeout: Duration,
    /// All of one repository's PDFs together: once spent, its remaining PDFs
    /// are skipped unread (`pdf-budget`), and a PDF started near the end
    /// gets only what is left, so a repository of slow PDFs cannot hold the
    /// build for `timeout` times their number.
    pub repo_budget: Duration,
    /// Pages past this are not read.
    pub max_pages: u32,
    /// Text past this is not kept (bytes); the pages after it are dropped.
    pub max_text_bytes: usize,
    /// A file whose compressed streams inflate past this (bytes, all
    /// streams together) is skipped before any is interpreted: a
    /// decompression bomb costs a bounded read, not the build's memory.
    pub max_inflated_bytes: u64,
    /// The child process's address space, when a `helper` reads the file.
    pub max_memory_bytes: u64,
    /// A program that reads one PDF in a process of its own: run as
    /// `<helper> __pdf-text PAGES TEXT_BYTES INFLATED_BYTES` with the PDF on
    /// stdin, it prints [`helper_answer`]'s JSON. `None`: read in this process.
    pub helper: Option<PathBuf>,
}

impl Default for PdfLimits {
    fn default() -> Self {
        Self {
            max_bytes: 32 << 20,
            timeout: Duration::from_secs(60),
            repo_budget: Duration::from_secs(600),
            max_pages: 2000,
            max_text_bytes: 8 << 20,
            max_inflated_bytes: 256 << 20,
            max_memory_bytes: 2 << 30,
            helper: None,
        }
    }
}

/// Extracts `bytes`' text, or says why it has none worth indexing.
pub fn extract(bytes: &[u8], limits: &PdfLimits) -> Result<PdfText, SkipReason> {
    if bytes.len() as u64 > limits.max_bytes {
        return Err(SkipReason::TooLarge);
    }
    let pages = match &limits.helper {
        // The child process and its cap need a Unix `sh` and `exec`.
        #[cfg(unix)]
        Some(helper) => in_child(helper, bytes, limits)?,
        _ => in_thread(bytes, limits)?,
    };
    assemble(pages, limits.max_text_bytes)
}

/// What a helper prints: the pages' raw text, or why there is none.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Answer {
    Pages(Vec<String>),
    Skip(SkipReason),
}

/// The helper's side: reads `bytes` here and gives the JSON the parent reads.
pub fn helper_answer(bytes: &[u8], limits: &PdfLimits) -> String {
    let answer = match std::panic::catch_unwind(|| read_pages(bytes, limits)) {
        Ok(Ok(pages)) => Answer::Pages(pages),
        Ok(Err(reason)) => Answer::Skip(reason),
        Err(_) => Answer::Skip(SkipReason::Unreadable),
    };
    serde_json::to_string(&answer).unwrap_or_default()
}

/// Reads the file in a child process: capped, killed at the deadline.
#[cfg(unix)]
fn in_child(helper: &Path, bytes: &[u8], limits: &PdfLimits) -> Result<Vec<String>, SkipReason> {
    use std::os::unix::process::CommandExt;
    // `sh` sets the cap, then becomes the helper (no shell stays behind).
    let spawned = Command::new("sh")
        // Its own process group: the deadline kills whatever it started too.
        .process_group(0)
        .arg("-c")
        .arg(r#"kb=$1; shift; ulimit -v "$kb" 2>/dev/null; exec "$0" "$@""#)
        .arg(helper)
        .arg((limits.max_memory_bytes / 1024).max(1).to_string())
        .arg(HELPER_COMMAND)
        .arg(limits.max_pages.to_string())
        .arg(limits.max_text_bytes.to_string())
        .arg(limits.max_inflated_bytes.to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn();
    let Ok(mut child) = spawned else {
        // No shell or no helper here: the file is read in this process.
        return in_thread(bytes, limits);
    };
    let (Some(mut stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        let _ = child.kill();
        let _ = child.wait();
        return Err(SkipReason::Unreadable);
    };
    // Writing and reading on their own threads: a child that stops reading
    // or floods its output cannot block the wait below.
    let input = bytes.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    // JSON escapes a control character in six bytes.
    let most = limits.max_text_bytes as u64 * 6 + (1 << 20);
    let reader = std::thread::spawn(move || {
        let mut stdout = stdout;
        let mut out = Vec::new();
        let _ = stdout.by_ref().take(most).read_to_end(&mut out);
        // Past the cap the rest is drained unread (the answer no longer
        // parses): a child that floods its output ends instead of blocking
        // on a full pipe until the deadline.
        let _ = std::io::copy(&mut stdout, &mut std::io::sink());
        out
    });
    let started = Instant::now();
    let finished = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if started.elapsed() < limits.timeout => {
                std::thread::sleep(Duration::from_millis(5))
            }
            _ => break None,
        }
    };
    let Some(status) = finished else {
        let group = format!("-{}", child.id());
        let killed = Command::new("kill")
            .args(["-KILL", "--", &group])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !killed {
            let _ = child.kill();
        }
        let _ = child.wait();
        // Whatever still holds the pipes is not waited for.
        return Err(SkipReason::ExtractTimeout);
    };
    let _ = writer.join();
    let out = reader.join().unwrap_or_default();
    match serde_json::from_slice::<Answer>(&out) {
        Ok(Answer::Pages(pages)) => Ok(pages),
        Ok(Answer::Skip(reason)) => Err(reason),
        // The helper did not run at all (not found, not executable, replaced
        // by a binary without `__pdf-text`): it said nothing and exited. The
        // file is read here rather than every PDF skipped in silence.
        Err(_) if status.code().is_some_and(|c| c != 0) && out.is_empty() => {
            tracing::warn!(helper = %helper.display(), %status, "the PDF helper did not run; reading the PDF in this process");
            // With what is left of this file's time, not a fresh deadline.
            let left = PdfLimits {
                timeout: limits.timeout.saturating_sub(started.elapsed()),
                ..limits.clone()
            };
            in_thread(bytes, &left)
        }
        // Killed by its memory cap, a stack overflow or a signal.
        Err(_) => Err(SkipReason::Unreadable),
    }
}

/// Reads the file on a thread of its own, under `catch_unwind` and the deadline.
fn in_thread(bytes: &[u8], limits: &PdfLimits) -> Result<Vec<String>, SkipReason> {
    let owned = bytes.to_vec();
    let own_limits = limits.clone();
    let (tx, rx) = std::sync::mpsc::channel();
    let spawned = std::thread::Builder::new()
        .name("pdf-extract".into())
        .spawn(move || {
            let pages = std::panic::catch_unwind(|| read_pages(&owned, &own_limits));
            // The receiver is gone only after the deadline: nothing to tell.
            let _ = tx.send(pages.unwrap_or(Err(SkipReason::Unreadable)));
        });
    if spawned.is_err() {
        return Err(SkipReason::Unreadable);
    }
    match rx.recv_timeout(limits.timeout) {
        Ok(r) => r,
        Err(_) => Err(SkipReason::ExtractTimeout),
    }
}

/// Each page's raw text, in page order.
fn read_pages(bytes: &[u8], limits: &PdfLimits) -> Result<Vec<String>, SkipReason> {
    let doc = lopdf::Document::load_mem(bytes).map_err(|e| match e {
        lopdf::Error::Decryption(_) | lopdf::Error::AlreadyEncrypted => SkipReason::Encrypted,
        _ => SkipReason::Unreadable,
    })?;
    // lopdf opens a file whose user password is empty (the common "copy
    // protected" PDF) as any reader does; only a real password stops it.
    if doc.trailer.has(b"Encrypt") && doc.encryption_state.is_none() {
        return Err(SkipReason::Encrypted);
    }
    if inflated_size(&doc, limits.max_inflated_bytes) > limits.max_inflated_bytes {
        return Err(SkipReason::TooLarge);
    }
    let mut pages = Vec::new();
    let mut left = limits.max_text_bytes;
    for (&number, _) in doc.get_pages().iter().take(limits.max_pages as usize) {
        // A page the interpreter cannot read (an error, or a panic inside
        // it) keeps its place, empty: the pages after it keep their numbers.
        let read = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            // One byte past what is left, so a page the budget stops is
            // cut at its last whole line below.
            let mut device = PageText {
                budget: left.saturating_add(1),
                ..PageText::default()
            };
            let read = pdf_extract::output_doc_page(&doc, &mut device, number);
            (read.is_ok() || device.full).then_some(device.out)
        }));
        let mut text = match read {
            Ok(Some(text)) => text,
            _ => String::new(),
        };
        // The text budget binds within a page too: cut at the last line that fits.
        if text.len() > left {
            let mut cut = left;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            let cut = text[..cut].rfind('\n').map_or(0, |n| n + 1);
            text.truncate(cut);
            pages.push(text);
            break;
        }
        left -= text.len();
        pages.push(text);
    }
    Ok(pages)
}

/// What the document's Flate streams inflate to, counted up to just past
/// `budget` (each read stops there; nothing is kept).
fn inflated_size(doc: &lopdf::Document, budget: u64) -> u64 {
    use std::io::Read;
    let mut total = 0u64;
    for object in doc.objects.values() {
        let lopdf::Object::Stream(stream) = object else {
            continue;
        };
        let flate = stream
            .filters()
            .is_ok_and(|f| f.iter().any(|f| *f == b"FlateDecode"));
        if !flate {
            continue;
        }
        let left = budget.saturating_sub(total) + 1;
        // Counted as written, so a stream whose checksum fails at its end
        // (which lopdf still inflates) counts all it inflated to.
        let mut counted = Counted(0);
        let _ = std::io::copy(
            &mut flate2::read::ZlibDecoder::new(&stream.content[..]).take(left),
            &mut counted,
        );
        total = total.saturating_add(counted.0);
        if total > budget {
            break;
        }
    }
    total
}

/// A sink that counts the bytes written to it.
struct Counted(u64);

impl Write for Counted {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len() as u64;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A helper that cannot read the file says nothing and exits: the file is
    /// read here instead. One that hangs is killed at the deadline.
    #[cfg(unix)]
    #[test]
    fn a_child_that_fails_or_hangs_never_stops_the_caller() {
        use std::os::unix::fs::PermissionsExt;
        let words = "a child process reads the page and prints what it found there";
        let bytes = crate::fixtures::pdf(&[&[words, words]]);
        let dir = tempfile::tempdir().expect("tempdir");
        let script = |name: &str, body: &str| {
            let p = dir.path().join(name);
            std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).expect("script");
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
            p
        };
        let broken = PdfLimits {
            helper: Some(script("broken", "exit 127")),
            ..PdfLimits::default()
        };
        assert_eq!(extract(&bytes, &broken).map(|t| t.page_starts), Ok(vec![1]));
        let hanging = PdfLimits {
            helper: Some(script("hanging", "sleep 30")),
            timeout: Duration::from_millis(300),
            ..PdfLimits::default()
        };
        let started = Instant::now();
        assert_eq!(extract(&bytes, &hanging), Err(SkipReason::ExtractTimeout));
        assert!(started.elapsed() < Duration::from_secs(10));
        let lying = PdfLimits {
            helper: Some(script(
                "lying",
                "cat >/dev/null; echo '{\"skip\":\"encrypted\"}'",
            )),
            ..PdfLimits::default()
        };
        assert_eq!(extract(&bytes, &lying), Err(SkipReason::Encrypted));
    }

    #[test]
    fn cleaning_spells_ligatures_and_joins_hyphenated_words() {
        let raw =
            "the \u{FB01}nite source is pre-com-\n   puted here.\n\n\n\nNext\u{7} para-\nGraph\n";
        assert_eq!(
            clean(raw),
            "the finite source is pre-computed\nhere.\n\nNext para-\nGraph\n"
        );
        assert_eq!(clean(""), "\n");
        assert_eq!(clean("\n\n\n"), "\n");
    }

    #[test]
    fn pages_map_to_their_first_lines() {
        let pages = vec![
            "one two three four five six seven\neight nine ten\n".to_owned(),
            String::new(),
            "eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty\n"
                .to_owned(),
        ];
        let t = assemble(pages, 1 << 20).expect("text");
        assert_eq!(t.page_starts, vec![1, 3, 4]);
        assert_eq!(t.text.lines().count(), 4);
        let stray = vec!["x y".to_owned(), "3".to_owned()];
        assert_eq!(assemble(stray, 1 << 20), Err(SkipReason::NoText));
    }

    #[test]
    fn garbage_is_unreadable_and_never_panics() {
        for bytes in [
            &b"not a pdf at all"[..],
            b"%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF",
            b"%PDF-1.4\n\xff\xfe\x00garbage",
        ] {
            assert_eq!(
                extract(bytes, &PdfLimits::default()),
                Err(SkipReason::Unreadable)
            );
        }
        let tiny = PdfLimits {
            max_bytes: 4,
            ..PdfLimits::default()
        };
        assert_eq!(extract(b"%PDF-1.7", &tiny), Err(SkipReason::TooLarge));
    }

    #[test]
    fn pages_rotated_tables_and_what_is_skipped() {
        use crate::fixtures::{encrypted_pdf, pdf};
        let words = "the magnification of a finite source is computed by contour integration";
        let bytes = pdf(&[
            &[
                "1 Introduction",
                words,
                "over the whole image of the source",
            ],
            &["@rot Parameter Unit Description of the einstein crossing time"],
            &["@image"],
            &["2 Method", "sampling with", "affine invariant walkers"],
        ]);
        let t = extract(&bytes, &PdfLimits::default()).expect("text");
        let lines: Vec<&str> = t.text.lines().collect();
        assert_eq!(lines[0], "1 Introduction");
        assert_eq!(lines[1], words);
        assert_eq!(t.page_starts.len(), 4);
        let page = |n: usize| {
            let start = t.page_starts[n - 1] as usize - 1;
            let end = t
                .page_starts
                .get(n)
                .map_or(lines.len(), |&s| s as usize - 1);
            lines[start..end].join("\n")
        };
        // The turned words keep their spaces (pdf-extract's own device glues them).
        assert_eq!(
            page(2),
            "Parameter Unit Description of the einstein crossing time"
        );
        assert_eq!(page(3), "");
        assert!(page(4).starts_with("2 Method"), "{}", page(4));

        assert_eq!(
            extract(&pdf(&[&["@image"], &["@image"]]), &PdfLimits::default()),
            Err(SkipReason::NoText)
        );
        assert_eq!(
            extract(&encrypted_pdf(&[&[words]]), &PdfLimits::default()),
            Err(SkipReason::Encrypted)
        );
        let stingy = PdfLimits {
            max_inflated_bytes: 16,
            ..PdfLimits::default()
        };
        let mut squeezed = lopdf::Document::load_mem(&bytes).expect("load");
        squeezed.compress();
        let mut packed = Vec::new();
        squeezed.save_to(&mut packed).expect("save");
        assert_eq!(extract(&packed, &stingy), Err(SkipReason::TooLarge));
        assert!(extract(&packed, &PdfLimits::default()).is_ok());
        let instant = PdfLimits {
            timeout: Duration::ZERO,
            ..PdfLimits::default()
        };
        // The text budget cuts a page at its last whole line.
        let small = PdfLimits {
            max_text_bytes: 160,
            ..PdfLimits::default()
        };
        let cut = extract(&pdf(&[&[words, words, words], &[words]]), &small).expect("text");
        assert_eq!(cut.text, format!("{words}\n{words}\n"));
        assert_eq!(cut.page_starts, vec![1]);
        // Hundreds of pages cannot be read in no time at all.
        let page: &[&str] = &[words, words, words];
        let long = pdf(&vec![page; 400]);
        assert_eq!(extract(&long, &instant), Err(SkipReason::ExtractTimeout));
    }
}
