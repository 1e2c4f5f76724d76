//! Papers as documents: PDFs in a repository cited by page, LaTeX read by
//! its sections, BibTeX entries searchable, and an article listed under
//! `articles:` fetched from a local server standing in for arXiv, kept when
//! the server is gone (`--keep-going`). Bad PDFs are skipped with a reason.

use crate::fixtures::{World, cairn, commit, current_dir, read_json, skip_reasons, stderr, stdout};
use cairn_pipeline::fixtures::{encrypted_pdf, pdf, self_drawing_pdf};
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::Path;

const METHOD: &str = "the caustic crossing is sampled with adaptive contouring";

fn paper_files() -> Vec<(&'static str, Vec<u8>)> {
    let paper = pdf(&[
        &[
            "Fitting light curves with alpha",
            "1 Introduction",
            "Alpha models microlensing events from photometry alone.",
            "It was written for students who start with point lenses.",
        ],
        &[
            "2 Method",
            "Near a caustic the magnification changes fast, so",
            METHOD,
            "until the requested accuracy is reached on every point.",
        ],
        &["@rot Parameter Unit Description einstein timescale days"],
    ]);
    let tex = [
        "\\documentclass{article}",
        "\\begin{document}",
        "\\begin{abstract}",
        "We present alpha, a package that fits microlensing light curves.",
        "It is small, and it is tested on simulated and real events.",
        "The code is open and documented.",
        "\\end{abstract}",
        "\\section{Method}",
        "We fit point lenses first, then binary lenses.",
        "Every fit starts from a grid of trial parameters.",
        "The best trial seeds the optimiser.",
        "The optimiser stops when the chi square no longer improves.",
        "Blending is fitted linearly at every step.",
        "\\subsection{Sampling}",
        "The posterior is explored by an ensemble of walkers \\cite{emcee}.",
        "Each walker proposes a stretch move toward another walker.",
        "The ensemble needs no tuning of its proposal.",
        "Chains are thinned by their autocorrelation time.",
        "The first half of every chain is discarded as burn-in.",
        "\\section{Results}",
        "The fits converge on every simulated event.",
        "\\end{document}",
        "",
    ]
    .join("\n");
    let bib = "@article{emcee,\n  author = {Foreman-Mackey, Daniel and Hogg, David},\n  title = {emcee: The MCMC Hammer},\n  year = {2013},\n}\n";
    let mut corrupt = pdf(&[&["a page that will be cut in half"]]);
    corrupt.truncate(corrupt.len() / 3);
    vec![
        ("docs/paper.pdf", paper),
        ("paper/ms.tex", tex.into_bytes()),
        ("paper/refs.bib", bib.as_bytes().to_vec()),
        (
            "docs/locked.pdf",
            encrypted_pdf(&[&["a secret page with enough words to be worth reading here"]]),
        ),
        ("docs/broken.pdf", corrupt),
        ("docs/scan.pdf", pdf(&[&["@image"], &["@image"]])),
        // Overflows the extractor's stack: its child process dies, the build goes on.
        ("docs/loop.pdf", self_drawing_pdf()),
    ]
}

/// Serves `body` at `/pdf/2101.00001` to `answers` requests (anything else
/// is a 404), then stops: the arXiv of the test.
fn arxiv(body: Vec<u8>, answers: usize) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    std::thread::spawn(move || {
        for stream in listener.incoming().take(answers) {
            let Ok(mut stream) = stream else { continue };
            let mut request = String::new();
            let mut reader = BufReader::new(stream.try_clone().expect("clone"));
            let _ = reader.read_line(&mut request);
            loop {
                let mut header = String::new();
                match reader.read_line(&mut header) {
                    Ok(n) if n > 2 => continue,
                    _ => break,
                }
            }
            let found = request.starts_with("GET /pdf/2101.00001 ");
            let (status, body) = if found {
                ("200 OK", body.as_slice())
            } else {
                ("404 Not Found", &b"no such paper"[..])
            };
            let _ = write!(
                stream,
                "HTTP/1.1 {status}\r\nContent-Type: application/pdf\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(body);
        }
    });
    url
}

fn search(index: &Path, query: &str, extra: &[&str]) -> serde_json::Value {
    let index = index.to_str().expect("utf8");
    let mut args = vec!["search", "--index", index, "--json", query];
    args.extend(extra);
    let o = cairn(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_str(&stdout(&o)).expect("json")
}

/// The first hit in `doc_id`, whatever its rank.
fn hit<'a>(answer: &'a serde_json::Value, doc_id: &str) -> &'a serde_json::Value {
    answer["hits"]
        .as_array()
        .expect("hits")
        .iter()
        .find(|h| h["doc_id"] == doc_id)
        .unwrap_or_else(|| panic!("no hit in {doc_id}: {answer}"))
}

#[test]
fn papers_are_cited_by_page_and_articles_are_fetched_and_kept() {
    let w = World::new();
    commit(&w.alpha_repo(), &paper_files(), "add the paper");
    let article = pdf(&[
        &["A fast sampler"],
        &[
            "3 Results",
            "The stretch move needs no tuning of a proposal scale.",
            "It was run on ten thousand simulated events without a failure.",
        ],
    ]);
    let server = arxiv(article, 1);
    // A 200 MB PDF beside the config: listed, never read.
    let huge = w.path("config/huge.pdf");
    std::fs::File::create(&huge)
        .and_then(|f| f.set_len(200 << 20))
        .expect("sparse file");
    let config = std::fs::read_to_string(w.path("config/repositories.yml")).expect("config");
    w.write(
        "config/repositories.yml",
        &format!(
            "{config}articles:\n  - arxiv: \"2101.00001\"\n    toolkit: alpha\n    title: A fast sampler\n  - file: huge.pdf\n"
        ),
    );
    let o = w.build("out", &["--arxiv-url", &server]);
    assert!(o.status.success(), "{}", stderr(&o));

    let version = current_dir(&w.path("out"));
    let manifest = read_json(&version.join("manifest.json"));
    let reasons = skip_reasons(&manifest);
    for (path, reason) in [
        ("science/alpha/docs/locked.pdf", "encrypted"),
        ("science/alpha/docs/broken.pdf", "unreadable"),
        ("science/alpha/docs/scan.pdf", "no-text"),
        ("science/alpha/docs/loop.pdf", "unreadable"),
        ("papers/huge/huge.pdf", "too-large"),
    ] {
        assert_eq!(
            reasons.get(path).map(String::as_str),
            Some(reason),
            "{reasons:?}"
        );
    }
    let docs = read_json(&version.join("docs.json"));
    let paper = docs
        .as_array()
        .expect("docs")
        .iter()
        .find(|d| d["doc_id"] == "science/alpha/docs/paper.pdf")
        .expect("the paper is indexed");
    assert_eq!(paper["doctype"], "paper");
    assert_eq!(paper["pdf"]["page_starts"], serde_json::json!([1, 5, 9]));
    assert_ne!(paper["pdf"]["sha256"], paper["sha256"]);

    let index = w.path("out");
    let answer = search(&index, "caustic crossing adaptive contouring", &[]);
    let h = hit(&answer, "science/alpha/docs/paper.pdf");
    assert_eq!(h["page"]["page"], 2, "{h}");
    assert_eq!(
        h["title"], "Fitting light curves with alpha > 2 Method",
        "{h}"
    );
    assert!(h["start_line"].as_u64() >= Some(5), "{h}");
    assert_eq!(
        h["github_url"],
        "https://github.com/example/alpha/blob/main/docs/paper.pdf#page=2"
    );
    let commit = manifest["repos"]
        .as_array()
        .expect("repos")
        .iter()
        .find(|r| r["name"] == "alpha")
        .and_then(|r| r["commit"].as_str())
        .expect("commit");
    assert_eq!(
        h["permalink"],
        format!("https://github.com/example/alpha/blob/{commit}/docs/paper.pdf#page=2")
    );
    // The turned table reads as words.
    let table = search(
        &index,
        "einstein timescale days",
        &["--doctype", "paper", "--mode", "bm25"],
    );
    let t = table["hits"]
        .as_array()
        .expect("hits")
        .iter()
        .find(|h| h["doc_id"] == "science/alpha/docs/paper.pdf" && h["page"]["page"] == 3)
        .unwrap_or_else(|| panic!("no hit on page 3: {table}"));
    assert_eq!(t["page"]["start_line"], 1, "{t}");
    assert!(
        t["snippet"]
            .as_str()
            .is_some_and(|s| s.contains("Parameter Unit Description **einstein**")),
        "{t}"
    );
    assert!(
        t["github_url"]
            .as_str()
            .is_some_and(|u| u.ends_with("#page=3"))
    );

    // LaTeX by its sections, BibTeX by title and author.
    let tex = search(&index, "stretch move ensemble of walkers", &[]);
    assert_eq!(
        hit(&tex, "science/alpha/paper/ms.tex")["title"],
        "Method > Sampling"
    );
    let bib = search(
        &index,
        "Foreman-Mackey MCMC Hammer",
        &["--doctype", "paper"],
    );
    assert_eq!(
        hit(&bib, "science/alpha/paper/refs.bib")["title"],
        "emcee: emcee: The MCMC Hammer"
    );
    // The passage that cites it is found by the cited paper's words (none
    // of which it holds: BM25 finds it through the resolved `\cite`), and
    // still cites its own lines (the resolution is indexed, not shown).
    let cited = hit(&bib, "science/alpha/paper/ms.tex");
    assert_eq!(cited["title"], "Method > Sampling");
    assert!(
        cited["breakdown"]["bm25"].as_f64().is_some_and(|s| s > 0.0),
        "{cited}"
    );
    assert!(
        !cited["snippet"]
            .as_str()
            .is_some_and(|s| s.contains("cites:")),
        "{cited}"
    );

    // The article: cited at its arXiv page, and at the PDF fetched.
    let fetched = search(
        &index,
        "stretch move proposal scale tuning",
        &["--toolkit", "alpha"],
    );
    let a = hit(&fetched, "papers/arxiv-2101.00001/2101.00001.pdf");
    assert_eq!(a["page"]["page"], 2);
    assert_eq!(a["github_url"], "https://arxiv.org/abs/2101.00001#page=2");
    // Fetched from the mirror, cited at arXiv.
    assert_eq!(a["permalink"], "https://arxiv.org/pdf/2101.00001#page=2");
    let v = cairn(&["verify", "--index", index.to_str().expect("utf8")]);
    assert!(v.status.success(), "{}", stderr(&v));

    // The server is gone: without --keep-going the build fails and the
    // index keeps serving; with it, the copy fetched before is indexed, stale.
    let o = w.build("out", &["--arxiv-url", &server]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("arxiv-2101.00001"), "{}", stderr(&o));
    assert_eq!(current_dir(&w.path("out")), version);
    let o = w.build("out", &["--arxiv-url", &server, "--keep-going"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let manifest = read_json(&current_dir(&w.path("out")).join("manifest.json"));
    let record = manifest["repos"]
        .as_array()
        .expect("repos")
        .iter()
        .find(|r| r["name"] == "arxiv-2101.00001")
        .expect("the article's record");
    assert_eq!(record["stale"], true, "{record}");
    assert_eq!(record["article"], true);
    let again = search(&w.path("out"), "stretch move proposal scale tuning", &[]);
    hit(&again, "papers/arxiv-2101.00001/2101.00001.pdf");
}

#[test]
fn bad_articles_entries_name_their_line() {
    let w = World::new();
    let config = std::fs::read_to_string(w.path("config/repositories.yml")).expect("config");
    for (entry, message) in [
        ("  - arxiv: \"not-an-id\"\n", "is not an arXiv id"),
        ("  - title: nothing to fetch\n", "needs one of arxiv"),
        (
            "  - arxiv: \"2101.00001\"\n    url: https://example.org/a.pdf\n",
            "give one of arxiv",
        ),
        (
            "  - url: https://user:secret@example.org/a.pdf\n",
            "user name or password",
        ),
        ("  - doi: \"11.1/x\"\n", "is not a DOI"),
        (
            "  - arxiv: \"2101.00001\"\n  - arxiv: \"2101.00001\"\n",
            "duplicate name",
        ),
        (
            "  - arxiv: \"2101.00001\"\n    colour: red\n",
            "unknown field",
        ),
        (
            "  - url: https://example.org/a.pdf?X-Amz-Signature=abc\n",
            "signed URL",
        ),
        (
            "  - name: foo\n    url: https://github.com/a/foo\n",
            "this is a repository",
        ),
    ] {
        w.write(
            "config/repositories.yml",
            &format!("{config}articles:\n{entry}"),
        );
        let o = w.build("out", &[]);
        assert_eq!(o.status.code(), Some(2), "{entry}: {}", stderr(&o));
        let err = stderr(&o);
        assert!(err.contains("repositories.yml:"), "{err}");
        assert!(err.contains(message), "{entry}: {err}");
        assert!(!err.contains("secret"), "{err}");
    }
}
