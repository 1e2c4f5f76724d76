//! The second adversarial review's pack findings (issue 28), against the
//! real pack adoption and a real HTTP server for `cairn pull`: a pack that
//! inflates past its manifest, an old version repacked as new, and `pull`
//! over plain HTTP, oversized or from a silent server.

use crate::fixtures::{World, cairn, stderr};
use crate::hardening2::silent_server;
use cairn_index::IndexRoot;
use cairn_index::pack::{Dropped, Rollback, adopt_dropped_packs, unpack};
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Bytes this thread has passed to write(2) so far.
fn thread_written() -> u64 {
    std::fs::read_to_string("/proc/thread-self/io")
        .expect("/proc/thread-self/io")
        .lines()
        .find_map(|l| l.strip_prefix("wchar:"))
        .and_then(|v| v.trim().parse().ok())
        .expect("wchar")
}

/// A regular file entry for a pack.
fn entry(tar: &mut tar::Builder<impl Write>, path: &str, len: u64, data: impl Read) {
    let mut h = tar::Header::new_ustar();
    h.set_size(len);
    h.set_mode(0o644);
    h.set_entry_type(tar::EntryType::Regular);
    tar.append_data(&mut h, path, data).expect("tar entry");
}

/// Writes `<dir>/cairn-index-<name>.tar.zst` and its `.sha256` from `fill`.
fn write_pack(
    dir: &Path,
    name: &str,
    fill: impl FnOnce(&mut tar::Builder<&mut Vec<u8>>),
) -> PathBuf {
    let mut tar_bytes = Vec::new();
    {
        let mut t = tar::Builder::new(&mut tar_bytes);
        fill(&mut t);
        t.finish().expect("tar");
    }
    let packed = zstd::encode_all(&tar_bytes[..], 3).expect("zstd");
    let path = dir.join(format!("cairn-index-{name}.tar.zst"));
    std::fs::write(&path, &packed).expect("pack");
    let sha = cairn_index::sha256_hex(&packed);
    std::fs::write(
        dir.join(format!("cairn-index-{name}.tar.zst.sha256")),
        format!("{sha}  cairn-index-{name}.tar.zst\n"),
    )
    .expect("sha");
    path
}

/// A tar stream of `len` zero bytes as one entry, compressed on the fly.
fn zero_bomb(dir: &Path, name: &str, inner: &str, len: u64, manifest: Option<&[u8]>) -> PathBuf {
    let path = dir.join(format!("cairn-index-{name}.tar.zst"));
    {
        let file = std::fs::File::create(&path).expect("pack");
        let zst = zstd::Encoder::new(file, 1).expect("zstd").auto_finish();
        let mut t = tar::Builder::new(zst);
        if let Some(m) = manifest {
            entry(&mut t, &format!("{name}/manifest.json"), m.len() as u64, m);
        }
        entry(
            &mut t,
            &format!("{name}/{inner}"),
            len,
            std::io::repeat(0).take(len),
        );
        t.finish().expect("tar");
    }
    let bytes = std::fs::read(&path).expect("read pack");
    let sha = cairn_index::sha256_hex(&bytes);
    std::fs::write(
        dir.join(format!("cairn-index-{name}.tar.zst.sha256")),
        format!("{sha}  cairn-index-{name}.tar.zst\n"),
    )
    .expect("sha");
    path
}

/// Finding 4: a pack that inflates to a gigabyte writes nothing past what
/// its manifest declares, and nothing at all without a manifest first.
#[test]
fn a_pack_bomb_writes_nothing_past_its_manifest() {
    let w = World::new();
    assert!(w.build("out", &[]).status.success());
    let root = IndexRoot::new(w.path("out"));
    let live = root.current().expect("current");
    let manifest =
        std::fs::read(root.version_dir(&live).path().join("manifest.json")).expect("manifest");
    let scratch = w.path("packs");
    std::fs::create_dir_all(&scratch).expect("mkdir");
    const GIB: u64 = 1 << 30;

    // No manifest first: refused before a byte of the entry is written.
    let bomb = zero_bomb(&scratch, "00000000000000aa", "big", GIB, None);
    assert!(std::fs::metadata(&bomb).expect("size").len() < 1 << 20);
    let before = thread_written();
    let err = unpack(&bomb, &root, Rollback::Allow).expect_err("a bomb is refused");
    let written = thread_written() - before;
    assert!(written < 4 << 20, "{written} bytes written for {err}");
    assert!(err.to_string().contains("manifest"), "{err}");

    // The manifest first, then an entry far larger than it declares.
    let m: Value = serde_json::from_slice(&manifest).expect("json");
    let (inner, declared) = m["files"]
        .as_object()
        .and_then(|f| f.iter().next())
        .map(|(k, v)| (k.clone(), v["size"].as_u64().unwrap_or(0)))
        .expect("a file in the manifest");
    let bomb = zero_bomb(&scratch, live.as_str(), &inner, GIB, Some(&manifest));
    let other = IndexRoot::new(w.path("other"));
    let before = thread_written();
    let err = unpack(&bomb, &other, Rollback::Allow).expect_err("a bomb is refused");
    let written = thread_written() - before;
    eprintln!("pack bomb: {written} bytes written before refusal: {err}");
    assert!(
        written < declared + manifest.len() as u64 + (4 << 20),
        "{written} bytes written for {err}"
    );
    assert!(err.to_string().contains(&inner), "{err}");
    assert!(other.current().is_err(), "nothing became current");

    // A tar extension record (a GNU long name) of a gigabyte before the
    // manifest: tar would read it whole into memory; the budget stops it.
    let path = scratch.join("cairn-index-00000000000000cc.tar.zst");
    {
        let file = std::fs::File::create(&path).expect("pack");
        let zst = zstd::Encoder::new(file, 1).expect("zstd").auto_finish();
        let mut t = tar::Builder::new(zst);
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(tar::EntryType::GNULongName);
        h.set_size(GIB);
        h.set_cksum();
        t.append(&h, std::io::repeat(b'a').take(GIB))
            .expect("record");
        entry(&mut t, "00000000000000cc/manifest.json", 2, &b"{}"[..]);
        t.finish().expect("tar");
    }
    let bytes = std::fs::read(&path).expect("read pack");
    std::fs::write(
        scratch.join("cairn-index-00000000000000cc.tar.zst.sha256"),
        format!("{}  x\n", cairn_index::sha256_hex(&bytes)),
    )
    .expect("sha");
    let err = unpack(&path, &other, Rollback::Allow).expect_err("refused");
    assert!(err.to_string().contains("decompresses to more"), "{err}");
}

/// Finding 5: an older kept version, re-packed with its build time moved
/// to 2099 (and under another version's name), is never made current.
#[test]
fn an_older_version_repacked_as_new_is_not_adopted() {
    let w = World::new();
    assert!(w.build("out", &[]).status.success());
    let root = IndexRoot::new(w.path("out"));
    let old = root.current().expect("v1");
    crate::fixtures::commit(&w.alpha_repo(), &[("NEW.md", b"# New\n".to_vec())], "new");
    assert!(w.build("out", &[]).status.success());
    let new = root.current().expect("v2");
    assert_ne!(old, new);
    let dir = root.version_dir(&old).path().to_owned();
    let mut manifest: Value =
        serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).expect("m"))
            .expect("json");
    manifest["built_at"] = json!("2099-01-01T00:00:00Z");
    let manifest = serde_json::to_vec_pretty(&manifest).expect("json");
    let files: Vec<String> = std::fs::read_dir(&dir)
        .expect("dir")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != "manifest.json")
        .collect();
    let forged = |name: &str, at: &Path| {
        write_pack(at, name, |t| {
            entry(
                t,
                &format!("{old}/manifest.json"),
                manifest.len() as u64,
                &manifest[..],
            );
            for f in &files {
                let p = dir.join(f);
                if p.is_dir() {
                    for e in walk(&p) {
                        let rel = e
                            .strip_prefix(&dir)
                            .expect("rel")
                            .to_string_lossy()
                            .into_owned();
                        let bytes = std::fs::read(&e).expect("read");
                        entry(t, &format!("{old}/{rel}"), bytes.len() as u64, &bytes[..]);
                    }
                } else {
                    let bytes = std::fs::read(&p).expect("read");
                    entry(t, &format!("{old}/{f}"), bytes.len() as u64, &bytes[..]);
                }
            }
        })
    };
    // Under its own name: the version on disk says when it was built, not the pack.
    let scratch = w.path("forged");
    std::fs::create_dir_all(&scratch).expect("mkdir");
    let own = forged(old.as_str(), &scratch);
    let u = unpack(&own, &root, Rollback::Refuse).expect("checked");
    assert!(!u.current, "an older version was made current");
    assert_eq!(root.current().expect("current"), new);
    // Under another version's name, dropped for a running server: refused.
    let renamed = forged("0123456789abcdef", root.path());
    let outcomes = adopt_dropped_packs(&root, 5);
    assert_eq!(outcomes.len(), 1);
    match &outcomes[0].1 {
        Dropped::Refused(why) => assert!(why.contains("0123456789abcdef"), "{why}"),
        Dropped::Adopted(u) => panic!("adopted {u:?} from {}", renamed.display()),
    }
    assert_eq!(root.current().expect("current"), new);
}

/// Every file under `dir`.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).expect("dir").flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// A one-shot HTTP file server over `files` (path → body), for a bounded number of requests.
fn file_server(files: Vec<(String, Vec<u8>)>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(16).flatten() {
            let mut stream = stream;
            let mut buf = [0u8; 4096];
            let n = stream.read(&mut buf).unwrap_or(0);
            let head = String::from_utf8_lossy(&buf[..n]).into_owned();
            let target = head.split_whitespace().nth(1).unwrap_or("").to_owned();
            match files.iter().find(|(p, _)| *p == target) {
                Some((_, body)) => {
                    let _ = stream.write_all(
                        format!(
                            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                            body.len()
                        )
                        .as_bytes(),
                    );
                    let _ = stream.write_all(body);
                }
                None => {
                    let _ = stream.write_all(
                        b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                    );
                }
            }
        }
    });
    format!("http://127.0.0.1:{port}")
}

/// Findings 4 and 9 for `cairn pull`: plain HTTP only when asked, a size
/// limit on what it downloads, and a server that never answers is given up on.
#[test]
fn pull_refuses_plain_http_oversized_packs_and_silent_servers() {
    let w = World::new();
    let index = w.path("pulled");
    let index_s = index.to_str().expect("utf8");
    let (silent, _held) = silent_server();
    // Plain HTTP is refused before any connection, unless asked for.
    let out = cairn(&["pull", &format!("{silent}/latest.json"), "--index", index_s]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("--allow-http"), "{}", stderr(&out));
    // A server that accepts and says nothing: given up after the timeout.
    let started = Instant::now();
    let out = cairn(&[
        "pull",
        &format!("{silent}/latest.json"),
        "--index",
        index_s,
        "--allow-http",
        "--timeout",
        "2",
    ]);
    let took = started.elapsed();
    assert!(!out.status.success());
    assert!(took < Duration::from_secs(15), "pull waited {took:?}");
    assert!(
        stderr(&out).to_lowercase().contains("time"),
        "{}",
        stderr(&out)
    );
    // A pack larger than the limit is not kept.
    let pack = vec![7u8; 4 << 20];
    let sha = cairn_index::sha256_hex(&pack);
    let name = "cairn-index-00000000000000ab.tar.zst";
    let latest = json!({"index_version": "00000000000000ab", "pack": name, "sha256": sha});
    let base = file_server(vec![
        ("/latest.json".to_owned(), latest.to_string().into_bytes()),
        (format!("/{name}"), pack),
    ]);
    let out = cairn(&[
        "pull",
        &format!("{base}/latest.json"),
        "--index",
        index_s,
        "--allow-http",
        "--max-bytes",
        "1000000",
    ]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("1000000"), "{}", stderr(&out));
    let left: Vec<String> = std::fs::read_dir(&index)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    assert!(
        left.iter().all(|n| !n.contains("00000000000000ab")),
        "{left:?}"
    );
}
