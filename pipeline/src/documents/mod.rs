//! Reading a commit's files and deciding what each one is: index it (with its
//! doctype and language) or skip it (with the reason). `walk` lists the
//! tree; a PDF's document is the text `pdf` extracts from it.

use crate::config::{ReadLimits, RepoConfig};
use crate::pdf::PdfLimits;
use cairn_index::manifest::SkipReason;
use cairn_index::{Doctype, Language, PdfSource};
use git2::{Oid, Repository};
pub use walk::Skipped;
use walk::{Entry, floor_char_boundary, walk};

mod walk;

pub use walk::MAX_TREE_DEPTH;

/// A text file to index.
#[derive(Clone, Debug)]
pub struct SourceDoc {
    /// Path inside the repository.
    pub path: String,
    /// The file's bytes (valid UTF-8).
    pub text: String,
    /// Kind of document.
    pub doctype: Doctype,
    /// Language by extension.
    pub language: Language,
    /// The PDF `text` was extracted from, when it was.
    pub pdf: Option<PdfSource>,
}

/// Every file of `commit`'s tree, sorted by path: the indexed ones and the
/// skipped ones. At most `limits.max_files` files are read, in path order.
pub fn read_commit(
    repo: &Repository,
    commit: Oid,
    cfg: &RepoConfig,
    limits: &ReadLimits,
) -> Result<(Vec<SourceDoc>, Vec<Skipped>), git2::Error> {
    let tree = repo.find_commit(commit)?.tree()?;
    let mut entries: Vec<Entry> = Vec::new();
    let mut skipped = Vec::new();
    walk(repo, &tree, cfg, &mut entries, &mut skipped)?;
    entries.sort_by(|a, b| a.path.cmp(&b.path));
    let odb = repo.odb()?;
    let mut docs = Vec::new();
    let mut pdf_time = PdfClock::new(limits.pdf.clone());
    // Files read so far, against `limits.max_files`.
    let mut read = 0usize;
    for Entry { path, oid, mode } in entries {
        let skip = |reason, size| Skipped {
            path: path.clone(),
            size,
            reason,
        };
        // Submodules (no blob) and symlinks have no content of their own here.
        let Some(oid) = oid.filter(|_| mode != 0o120000) else {
            skipped.push(skip(SkipReason::NotAFile, 0));
            continue;
        };
        let by_path = if !cfg.wants(&path) {
            Some(SkipReason::Excluded)
        } else if is_vendored(&path) {
            Some(SkipReason::Vendored)
        } else if is_generated_path(&path) {
            Some(SkipReason::Generated)
        } else {
            None
        };
        // The size from the object's header: a file skipped by its path or
        // its size is never read (a 400 MB excluded file costs nothing). A
        // file skipped by its path may even be missing (a partial clone
        // without its largest blobs): its size is then unknown, said as 0.
        let size = match odb.read_header(oid) {
            Ok((size, _)) => size as u64,
            Err(e) if e.code() == git2::ErrorCode::NotFound && by_path.is_some() => 0,
            Err(e) => return Err(e),
        };
        let max_bytes = if is_pdf(&path) {
            limits.pdf.max_bytes
        } else {
            limits.max_file_bytes
        };
        let verdict = if let Some(reason) = by_path {
            Err(reason)
        } else if size > max_bytes {
            Err(SkipReason::TooLarge)
        } else if read >= limits.max_files {
            Err(SkipReason::TooManyFiles)
        } else if is_pdf(&path) {
            read += 1;
            pdf_time.read(&path, repo.find_blob(oid)?.content())
        } else {
            read += 1;
            classify(&path, repo.find_blob(oid)?.content())
        };
        match verdict {
            Ok(doc) => docs.push(doc),
            Err(reason) => skipped.push(skip(reason, size)),
        }
    }
    skipped.sort_by(|a, b| a.path.cmp(&b.path));
    Ok((docs, skipped))
}

/// The time one repository's PDFs (or all of a config's articles) have
/// taken, against `PdfLimits::repo_budget`.
pub(crate) struct PdfClock {
    limits: PdfLimits,
    spent: std::time::Duration,
}

impl PdfClock {
    /// A clock with nothing spent.
    pub(crate) fn new(limits: PdfLimits) -> Self {
        Self {
            limits,
            spent: std::time::Duration::ZERO,
        }
    }

    /// The size above which a PDF is skipped unread (bytes).
    pub(crate) fn max_bytes(&self) -> u64 {
        self.limits.max_bytes
    }

    /// One PDF's document: the checks that read nothing first, then its
    /// text, read with at most what is left of the budget.
    pub(crate) fn read(&mut self, path: &str, bytes: &[u8]) -> Result<SourceDoc, SkipReason> {
        not_a_pdf_to_read(bytes)?;
        let Some(bounded) = self.limits() else {
            return Err(SkipReason::PdfBudget);
        };
        self.time(|| classify_pdf(path, bytes, &bounded))
    }

    /// The limits the next PDF is read under: its timeout cut to what is
    /// left of the budget; `None` once it is spent.
    fn limits(&self) -> Option<PdfLimits> {
        let left = self.limits.repo_budget.saturating_sub(self.spent);
        (!left.is_zero()).then(|| PdfLimits {
            timeout: self.limits.timeout.min(left),
            ..self.limits.clone()
        })
    }

    /// Runs one PDF's reading and counts its time; a timeout the budget
    /// caused (not the file's own limit) is reported as the budget's.
    fn time(
        &mut self,
        read: impl FnOnce() -> Result<SourceDoc, SkipReason>,
    ) -> Result<SourceDoc, SkipReason> {
        let cut = self.limits.repo_budget.saturating_sub(self.spent) < self.limits.timeout;
        let start = std::time::Instant::now();
        let out = read();
        self.spent += start.elapsed();
        match out {
            Err(SkipReason::ExtractTimeout) if cut => Err(SkipReason::PdfBudget),
            other => other,
        }
    }
}

/// Whether `path` is read as a PDF.
pub fn is_pdf(path: &str) -> bool {
    extension(path) == "pdf"
}

/// Why a PDF's bytes are not worth reading at all: empty, or a git-LFS pointer.
fn not_a_pdf_to_read(bytes: &[u8]) -> Result<(), SkipReason> {
    if bytes.is_empty() {
        return Err(SkipReason::Empty);
    }
    if bytes.starts_with(b"version https://git-lfs.github.com/spec/") {
        return Err(SkipReason::LfsPointer);
    }
    Ok(())
}

/// The document of a PDF: its extracted text, with the PDF's sha256, size and pages.
fn classify_pdf(path: &str, bytes: &[u8], limits: &PdfLimits) -> Result<SourceDoc, SkipReason> {
    not_a_pdf_to_read(bytes)?;
    let extracted = crate::pdf::extract(bytes, limits)?;
    Ok(SourceDoc {
        path: path.to_owned(),
        text: extracted.text,
        doctype: Doctype::Paper,
        language: Language::Pdf,
        pdf: Some(PdfSource {
            sha256: cairn_index::sha256_hex(bytes),
            size: bytes.len() as u64,
            page_starts: extracted.page_starts,
        }),
    })
}

/// Decides whether the bytes of `path` are indexable text, and what kind.
pub fn classify(path: &str, bytes: &[u8]) -> Result<SourceDoc, SkipReason> {
    let ext = extension(path);
    if bytes.is_empty() {
        return Err(SkipReason::Empty);
    }
    if BINARY_EXTENSIONS.contains(&ext.as_str()) || bytes[..bytes.len().min(8000)].contains(&0) {
        return Err(SkipReason::Binary);
    }
    if bytes.starts_with(b"version https://git-lfs.github.com/spec/") {
        return Err(SkipReason::LfsPointer);
    }
    let text = std::str::from_utf8(bytes).map_err(|_| SkipReason::NonUtf8)?;
    if is_minified(path, text) {
        return Err(SkipReason::Minified);
    }
    if is_generated(path, text) {
        return Err(SkipReason::Generated);
    }
    let doctype = doctype(path);
    let language = Language::of_path(path);
    if !matches!(doctype, Doctype::Code | Doctype::Notebook) && is_numeric_data(text) {
        return Err(SkipReason::NumericData);
    }
    Ok(SourceDoc {
        path: path.to_owned(),
        text: text.to_owned(),
        doctype,
        language,
        pdf: None,
    })
}

const BINARY_EXTENSIONS: &[&str] = &[
    "png", "jpg", "jpeg", "gif", "bmp", "ico", "eps", "ps", "zip", "gz", "tgz", "bz2", "xz", "zst",
    "tar", "npy", "npz", "fits", "fit", "fz", "h5", "hdf5", "pkl", "pickle", "so", "dylib", "dll",
    "exe", "o", "a", "whl", "pyc", "woff", "woff2", "ttf", "otf", "mp4", "mov", "wav", "mp3",
    "svgz", "xlsx", "docx", "pptx", "sqlite", "db", "mat", "sav",
];

/// Lowercase extension without the dot ("" when none).
pub fn extension(path: &str) -> String {
    cairn_index::language::extension(path)
}

fn file_name(path: &str) -> String {
    path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase()
}

fn is_vendored(path: &str) -> bool {
    path.split('/').any(|seg| {
        matches!(
            seg,
            "vendor"
                | "vendored"
                | "third_party"
                | "thirdparty"
                | "third-party"
                | "node_modules"
                | "_vendor"
                | "extern"
        )
    })
}

/// Build output and copied-in web/LaTeX assets, by path.
fn is_generated_path(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    let name = file_name(path);
    lower.split('/').any(|seg| {
        matches!(
            seg,
            "_static" | "_build" | "_sources" | "_images" | "__pycache__" | ".ipynb_checkpoints"
        )
    }) || lower.contains("build/html/")
        || [
            "jquery",
            "underscore",
            "bootstrap",
            "doctools",
            "searchtools",
            "mathjax",
        ]
        .iter()
        .any(|lib| name.starts_with(lib) && name.ends_with(".js"))
        || matches!(extension(path).as_str(), "cls" | "sty" | "bst")
}

/// HTML written by a documentation generator (Sphinx, Docutils, Doxygen, pdoc …):
/// the source it was generated from is indexed instead.
fn is_generated(path: &str, text: &str) -> bool {
    if !matches!(extension(path).as_str(), "html" | "htm") {
        return false;
    }
    let head = text[..floor_char_boundary(text, 4096)].to_ascii_lowercase();
    [
        "name=\"generator\"",
        "sphinx",
        "docutils",
        "doxygen",
        "pdoc",
        "_static/",
    ]
    .iter()
    .any(|m| head.contains(m))
}

fn is_minified(path: &str, text: &str) -> bool {
    let name = file_name(path);
    if name.contains(".min.") {
        return true;
    }
    // Generated one-line bundles: few, enormous lines.
    let lines = text.lines().count().max(1);
    let longest = text.lines().map(str::len).max().unwrap_or(0);
    matches!(
        extension(path).as_str(),
        "js" | "css" | "json" | "svg" | "map" | "html"
    ) && (longest > 5000 || text.len() / lines > 400)
}

/// A data table, not prose or code: most lines are mostly numbers (a text
/// header above the table does not save it).
fn is_numeric_data(text: &str) -> bool {
    let sample = &text[..floor_char_boundary(text, 50_000)];
    let mut lines = 0usize;
    let mut numeric_lines = 0usize;
    for line in sample.lines().filter(|l| !l.trim().is_empty()) {
        lines += 1;
        let fields: Vec<&str> = line
            .split(|c: char| c.is_whitespace() || c == ',' || c == ';' || c == '|')
            .filter(|f| !f.is_empty())
            .collect();
        let numbers = fields.iter().filter(|f| looks_numeric(f)).count();
        if !fields.is_empty() && numbers * 5 >= fields.len() * 3 {
            numeric_lines += 1;
        }
    }
    lines >= 10 && numeric_lines * 2 > lines
}

/// A number, or a date or time made of digits and separators.
fn looks_numeric(field: &str) -> bool {
    field.parse::<f64>().is_ok()
        || (field.bytes().any(|b| b.is_ascii_digit())
            && field
                .bytes()
                .all(|b| b.is_ascii_digit() || b"-:./+eET".contains(&b)))
}

/// Code in languages cairn has no `Language` for (indexed as plain text):
/// the rest of what counts as code is `Language::is_code`.
const OTHER_CODE_EXTENSIONS: &[&str] = &[
    "swift", "kt", "scala", "rb", "pl", "lua", "cs", "sql", "pro",
];
/// Configuration files beyond `Language::is_config`'s formats.
const OTHER_CONFIG_EXTENSIONS: &[&str] = &["in", "xml", "lock"];
const CONFIG_NAMES: &[&str] = &[
    "setup.py",
    "makefile",
    "cmakelists.txt",
    "dockerfile",
    "requirements.txt",
    ".gitignore",
    ".gitattributes",
    "meson.build",
    "tox.ini",
    "noxfile.py",
    "conftest.py",
    "environment.yml",
    ".readthedocs.yaml",
    ".readthedocs.yml",
    "manifest.in",
];

/// The doctype of `path` (by name and folders; content is not consulted).
pub fn doctype(path: &str) -> Doctype {
    let name = file_name(path);
    let ext = extension(path);
    let lower = path.to_ascii_lowercase();
    let dirs: Vec<&str> = lower.split('/').collect();
    let dirs = &dirs[..dirs.len() - 1];
    if name.starts_with("readme") {
        return Doctype::Readme;
    }
    if ext == "ipynb" {
        return Doctype::Notebook;
    }
    if CONFIG_NAMES.contains(&name.as_str()) || name.starts_with("requirements") {
        return Doctype::Config;
    }
    if matches!(ext.as_str(), "pdf" | "tex" | "bib") {
        return Doctype::Paper;
    }
    let language = Language::of_path(path);
    let is_code = language.is_code() || OTHER_CODE_EXTENSIONS.contains(&ext.as_str());
    if is_code
        && (dirs
            .iter()
            .any(|d| matches!(*d, "test" | "tests" | "testing" | "unit_tests"))
            || name.starts_with("test_")
            || name.ends_with("_test.py"))
    {
        return Doctype::Test;
    }
    if is_code
        && dirs.iter().any(|d| {
            d.starts_with("example") || matches!(*d, "demo" | "demos" | "tutorials" | "tutorial")
        })
    {
        return Doctype::Example;
    }
    if is_code {
        return Doctype::Code;
    }
    if language.is_config() || OTHER_CONFIG_EXTENSIONS.contains(&ext.as_str()) {
        return Doctype::Config;
    }
    Doctype::Doc
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// Commits the tree `tree` builds as HEAD, at a fixed time.
    fn commit_tree(repo: &Repository, tree: git2::TreeBuilder<'_>) -> Oid {
        let tree = repo.find_tree(tree.write().expect("tree")).expect("tree");
        let sig = git2::Signature::new("T", "t@example.org", &git2::Time::new(1_700_000_000, 0))
            .expect("sig");
        repo.commit(Some("HEAD"), &sig, &sig, "c", &tree, &[])
            .expect("commit")
    }

    /// One repository's PDFs share a budget: each is read with what is left
    /// of it, a timeout it caused is the budget's, and once it is spent the
    /// rest are skipped unread, while other files are read as ever.
    #[test]
    fn a_repositorys_pdfs_share_one_time_budget() {
        let limits = PdfLimits {
            timeout: Duration::from_secs(60),
            repo_budget: Duration::from_secs(100),
            ..PdfLimits::default()
        };
        let mut clock = PdfClock::new(limits);
        assert_eq!(
            clock.limits().map(|l| l.timeout),
            Some(Duration::from_secs(60))
        );
        clock.spent = Duration::from_secs(30);
        assert_eq!(
            clock.time(|| Err(SkipReason::ExtractTimeout)).err(),
            Some(SkipReason::ExtractTimeout),
            "70 s left: the file's own limit cut it"
        );
        clock.spent = Duration::from_secs(50);
        assert_eq!(
            clock.limits().map(|l| l.timeout),
            Some(Duration::from_secs(50))
        );
        assert_eq!(
            clock.time(|| Err(SkipReason::ExtractTimeout)).err(),
            Some(SkipReason::PdfBudget),
            "50 s left: the budget cut it"
        );
        clock.spent = Duration::from_secs(100);
        assert!(clock.limits().is_none());

        // Through read_commit: a spent budget skips every PDF as
        // `pdf-budget` (an empty one still as `empty`); the text file is
        // read; the default budget reads them all.
        let dir = tempfile::tempdir().expect("tempdir");
        let repo = Repository::init(dir.path().join("r")).expect("init");
        let mut tree = repo.treebuilder(None).expect("builder");
        let empty = repo.blob(b"").expect("blob");
        tree.insert("0.pdf", empty, 0o100644).expect("insert");
        for name in ["a.pdf", "b.pdf"] {
            let pdf = crate::fixtures::pdf(&[&[
                "A page about microlensing parallax, long enough to hold text:",
                "the annual parallax of a lens moves the source across the caustic,",
                "and the light curve shows it as a small asymmetry around the peak.",
            ]]);
            let blob = repo.blob(&pdf).expect("blob");
            tree.insert(name, blob, 0o100644).expect("insert");
        }
        let text = repo.blob(b"print('hi')\n").expect("blob");
        tree.insert("ok.py", text, 0o100644).expect("insert");
        let commit = commit_tree(&repo, tree);
        let yml = dir.path().join("repositories.yml");
        std::fs::write(
            &yml,
            "x:\n  - name: r\n    url: ./r\n    web_url: https://example.org/r\n",
        )
        .expect("write");
        let registry = crate::config::Registry::load(&yml).expect("config");
        let read = |repo_budget| {
            let limits = ReadLimits {
                max_file_bytes: 100_000,
                pdf: PdfLimits {
                    repo_budget,
                    ..PdfLimits::default()
                },
                max_files: 100,
            };
            read_commit(&repo, commit, &registry.repos[0], &limits).expect("read")
        };
        let (docs, skipped) = read(Duration::ZERO);
        assert_eq!(
            docs.iter().map(|d| d.path.as_str()).collect::<Vec<_>>(),
            ["ok.py"]
        );
        assert_eq!(
            skipped
                .iter()
                .map(|s| (s.path.as_str(), s.reason))
                .collect::<Vec<_>>(),
            [
                ("0.pdf", SkipReason::Empty),
                ("a.pdf", SkipReason::PdfBudget),
                ("b.pdf", SkipReason::PdfBudget)
            ]
        );
        let (docs, skipped) = read(PdfLimits::default().repo_budget);
        assert_eq!(docs.len(), 3, "{skipped:?}");
        assert_eq!(skipped.len(), 1, "{skipped:?}");
    }

    /// A file skipped by its path or size is never read: here its object is
    /// cut after the first KiB (the header says the size, the body is gone),
    /// and the commit still reads, listing it with its real size.
    #[test]
    fn skipped_files_are_never_read() {
        let dir = tempfile::tempdir().expect("tempdir");
        let repo = Repository::init(dir.path().join("r")).expect("init");
        let mut noise = Vec::with_capacity(1 << 20);
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        while noise.len() < 1 << 20 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            noise.extend_from_slice(&x.to_le_bytes());
        }
        let big = repo.blob(&noise).expect("blob");
        let small = repo.blob(b"print('hi')\n").expect("blob");
        let mut tree = repo.treebuilder(None).expect("builder");
        tree.insert("huge.py", big, 0o100644).expect("insert");
        tree.insert("big.py", big, 0o100644).expect("insert");
        tree.insert("ok.py", small, 0o100644).expect("insert");
        let commit = commit_tree(&repo, tree);
        let hex = big.to_string();
        let object = dir
            .path()
            .join("r/.git/objects")
            .join(&hex[..2])
            .join(&hex[2..]);
        let bytes = std::fs::read(&object).expect("object");
        std::fs::write(&object, &bytes[..1024]).expect("truncate");
        let yml = dir.path().join("repositories.yml");
        let text = "x:\n  - name: r\n    url: ./r\n    web_url: https://example.org/r\n    exclude: [\"huge.py\"]\n";
        std::fs::write(&yml, text).expect("write");
        let registry = crate::config::Registry::load(&yml).expect("config");
        let (docs, skipped) = read_commit(
            &repo,
            commit,
            &registry.repos[0],
            &ReadLimits {
                max_file_bytes: 100_000,
                pdf: PdfLimits::default(),
                max_files: 100,
            },
        )
        .expect("read");
        assert_eq!(docs.len(), 1);
        let reasons: Vec<(&str, u64, SkipReason)> = skipped
            .iter()
            .map(|s| (s.path.as_str(), s.size, s.reason))
            .collect();
        assert_eq!(
            reasons,
            [
                ("big.py", 1 << 20, SkipReason::TooLarge),
                ("huge.py", 1 << 20, SkipReason::Excluded)
            ]
        );
    }

    /// A tree nested 30,000 deep (objects held in memory), a path too long
    /// for a doc id, a name an id cannot hold and more files than
    /// `max_files`: each is skipped with its reason, on a thread whose
    /// 256 KiB stack a walk that recursed per level would overflow.
    #[test]
    fn deep_long_and_many_paths_are_skipped_with_their_reasons() {
        let dir = tempfile::tempdir().expect("tempdir");
        let yml = dir.path().join("repositories.yml");
        let text = "x:\n  - name: r\n    url: ./r\n    web_url: https://example.org/r\n";
        std::fs::write(&yml, text).expect("write");
        let git_dir = dir.path().join("r");
        std::fs::create_dir(&git_dir).expect("mkdir");
        let cfg = crate::config::Registry::load(&yml).expect("config").repos[0].clone();
        // The objects live in memory (a mempack) for as long as the one
        // handle that made them: everything happens on the small stack.
        let (read, started) = std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(move || {
                let repo = Repository::init_bare(&git_dir).expect("init");
                let odb = repo.odb().expect("odb");
                let _mem = odb.add_new_mempack_backend(1000).expect("mempack");
                let blob = repo.blob(b"print('hi')\n").expect("blob");
                let deep = crate::fixtures::nested_tree(&repo, 30_000, blob);
                let mut root = repo.treebuilder(None).expect("builder");
                root.insert("deep", deep, 0o040000).expect("insert");
                root.insert("x".repeat(1_100), blob, 0o100644)
                    .expect("insert");
                root.insert("100%.py", blob, 0o100644).expect("insert");
                for i in 0..5 {
                    root.insert(format!("f{i}.py"), blob, 0o100644)
                        .expect("insert");
                }
                let commit = commit_tree(&repo, root);
                let started = std::time::Instant::now();
                let read =
                    read_commit(&repo, commit, &cfg, &limits_with(3)).map_err(|e| e.to_string());
                (read, started)
            })
            .expect("spawn")
            .join()
            .expect("no stack overflow");
        let (docs, skipped) = read.expect("read");
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "{:?}",
            started.elapsed()
        );
        assert_eq!(
            docs.iter().map(|d| d.path.as_str()).collect::<Vec<_>>(),
            ["f0.py", "f1.py", "f2.py"]
        );
        let reasons: Vec<(String, SkipReason)> = skipped
            .iter()
            .map(|s| (s.path.chars().take(12).collect(), s.reason))
            .collect();
        let deep_path = format!("deep/{}", "d/".repeat(MAX_TREE_DEPTH - 2) + "d");
        assert!(
            skipped
                .iter()
                .any(|s| s.path == deep_path && s.reason == SkipReason::TooDeep),
            "{reasons:?}"
        );
        assert!(
            skipped
                .iter()
                .all(|s| s.path.len() <= 1024 + '…'.len_utf8())
        );
        for (path, reason) in [
            ("100%.py", SkipReason::InvalidPath),
            ("xxxxxxxxxxxx", SkipReason::InvalidPath),
            ("f3.py", SkipReason::TooManyFiles),
            ("f4.py", SkipReason::TooManyFiles),
        ] {
            assert!(
                reasons.contains(&(path.to_owned(), reason)),
                "{path}: {reasons:?}"
            );
        }
    }

    fn limits_with(max_files: usize) -> ReadLimits {
        ReadLimits {
            max_file_bytes: 100_000,
            pdf: PdfLimits::default(),
            max_files,
        }
    }

    #[test]
    fn doctypes() {
        assert_eq!(doctype("README.md"), Doctype::Readme);
        assert_eq!(doctype("examples/example_16/README.md"), Doctype::Readme);
        assert_eq!(doctype("docs/tutorials/parallel.ipynb"), Doctype::Notebook);
        assert_eq!(
            doctype("source/MulensModel/tests/test_fit.py"),
            Doctype::Test
        );
        assert_eq!(doctype("examples/pyLIMA_example_1.py"), Doctype::Example);
        assert_eq!(doctype("src/emcee/ensemble.py"), Doctype::Code);
        assert_eq!(
            doctype("VBMicrolensing/lib/VBMicrolensingLibrary.cpp"),
            Doctype::Code
        );
        assert_eq!(doctype("docs/source/quickstart.rst"), Doctype::Doc);
        assert_eq!(doctype("setup.py"), Doctype::Config);
        assert_eq!(doctype("pyproject.toml"), Doctype::Config);
        assert_eq!(doctype("LICENSE"), Doctype::Doc);
        assert_eq!(doctype("documents/parameter_names.pdf"), Doctype::Paper);
        assert_eq!(doctype("joss/paper.tex"), Doctype::Paper);
        assert_eq!(doctype("paper/paper.bib"), Doctype::Paper);
    }

    #[test]
    fn skips() {
        assert_eq!(classify("a.bin", b"ab\0cd").err(), Some(SkipReason::Binary));
        assert_eq!(classify("a.png", b"abc").err(), Some(SkipReason::Binary));
        assert_eq!(
            classify("a.txt", b"\xff\xfeabc").err(),
            Some(SkipReason::NonUtf8)
        );
        assert_eq!(
            classify(
                "big.dat",
                b"version https://git-lfs.github.com/spec/v1\noid sha256:abc\nsize 12\n"
            )
            .err(),
            Some(SkipReason::LfsPointer)
        );
        assert_eq!(
            classify("x.min.js", b"var a=1;").err(),
            Some(SkipReason::Minified)
        );
        let table: String = (0..50)
            .map(|i| format!("{i}.5 {}.25e-3 -{i}\n", i * 7))
            .collect();
        assert_eq!(
            classify("data/lc.dat", table.as_bytes()).err(),
            Some(SkipReason::NumericData)
        );
        assert!(
            classify("a.py", table.as_bytes()).is_ok(),
            "code is never numeric data"
        );
        assert!(classify("notes.md", b"# Title\n\nSome prose.\n").is_ok());
        let sphinx = "<html><head><meta name=\"generator\" content=\"Docutils\"></head></html>";
        assert_eq!(
            classify("docs/index.html", sphinx.as_bytes()).err(),
            Some(SkipReason::Generated)
        );
        assert!(is_generated_path("docs/_static/jquery-3.5.1.js"));
        assert!(is_generated_path("document/aastex.cls"));
        let header = "Ephemeris of K2\nAutomated mail\n".to_owned() + &table;
        assert_eq!(
            classify("data/eph.dat", header.as_bytes()).err(),
            Some(SkipReason::NumericData)
        );
    }
}
