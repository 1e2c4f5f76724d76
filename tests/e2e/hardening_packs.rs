//! The first adversarial review's pack findings (issue 13), on the real
//! builder, pack adoption and a `cairn serve` process: revocation while a
//! pack is adopted, dead writers' scratch, dropped and startup packs that
//! would roll the index back.

use crate::fixtures::{World, stderr};
use crate::serve_process::{Server, agent};
use cairn_embed::DevicePref;
use cairn_index::IndexRoot;
use cairn_index::pack::{Rollback, pack, unpack};
use cairn_search::EngineOptions;
use cairn_serve::auth::TokenStore;
use cairn_serve::live::LiveIndex;
use std::path::Path;
use std::time::{Duration, Instant};

/// Finding 10: a revoked token stops working within the watch interval even
/// while a pack takes seconds to adopt.
#[test]
fn revocation_does_not_wait_behind_a_slow_pack() {
    let w = World::new();
    assert!(w.build("out", &[]).status.success());
    let store = TokenStore::new(w.path("tokens.json"));
    let token = store.add("bot", &[], false).expect("token");
    let server = Server::start(&w, "out", &["--watch-ms", "100"]);
    let search = || {
        agent()
            .get(&server.url("/search?query=fit"))
            .header("Authorization", &format!("Bearer {token}"))
            .call()
            .map(|r| r.status().as_u16())
            .unwrap_or(0)
    };
    assert_eq!(search(), 200);
    // A sparse 8 GiB "pack": hashing it keeps the index watcher busy for seconds.
    let slow = w.path("out/cairn-index-0123456789abcdef.tar.zst");
    std::fs::File::create(&slow)
        .and_then(|f| f.set_len(8 << 30))
        .expect("sparse pack");
    std::fs::write(
        w.path("out/cairn-index-0123456789abcdef.tar.zst.sha256"),
        format!("{}  x\n", "0".repeat(64)),
    )
    .expect("sums");
    std::thread::sleep(Duration::from_millis(400));
    store.revoke("bot").expect("revoke");
    let later = std::time::SystemTime::now() + Duration::from_secs(5);
    std::fs::File::options()
        .write(true)
        .open(w.path("tokens.json"))
        .and_then(|f| f.set_modified(later))
        .expect("touch");
    let revoked = Instant::now();
    while search() != 401 {
        assert!(
            revoked.elapsed() < Duration::from_millis(1500),
            "the revoked token still worked after {:?}",
            revoked.elapsed()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Finding 10: a build's cleanup leaves a running writer's scratch folder alone.
#[test]
fn a_build_removes_only_dead_writers_scratch() {
    let w = World::new();
    assert!(w.build("out", &[]).status.success());
    let tmp = w.path("out/tmp");
    let alive = tmp.join(format!("unpack-{}-1", std::process::id()));
    let dead = tmp.join("unpack-4000000000-1");
    std::fs::create_dir_all(&alive).expect("mkdir");
    std::fs::create_dir_all(&dead).expect("mkdir");
    crate::fixtures::commit(
        &w.alpha_repo(),
        &[("docs/more.md", b"# More\n".to_vec())],
        "more",
    );
    assert!(w.build("out", &[]).status.success());
    assert!(alive.is_dir(), "a live unpack's scratch folder was deleted");
    assert!(!dead.exists(), "a dead writer's leftovers stayed");
}

/// Builds a new version of the fixture into `out` and returns it.
fn next_version(w: &World, n: usize) -> cairn_index::IndexVersion {
    crate::fixtures::commit(
        &w.alpha_repo(),
        &[(
            &format!("docs/v{n}.md"),
            format!("# Version {n}\n").into_bytes(),
        )],
        "next",
    );
    // built_at has a resolution of one second.
    std::thread::sleep(Duration::from_millis(1100));
    let built = w.build("out", &["--keep", "5"]);
    assert!(built.status.success(), "{}", stderr(&built));
    let v = IndexRoot::new(w.path("out")).current().expect("current");
    make_pack(w, &v);
    v
}

/// Packs the published `version` of `out` into `packs-made/`, once.
fn make_pack(w: &World, version: &cairn_index::IndexVersion) -> std::path::PathBuf {
    let packs = w.path("packs-made");
    std::fs::create_dir_all(&packs).expect("mkdir");
    let made = packs.join(cairn_index::pack::pack_name(version));
    if !made.exists() {
        pack(&IndexRoot::new(w.path("out")), version, &made).expect("pack");
    }
    made
}

/// Copies the pack of `version` (made by [`make_pack`]) into `dir` as `name`
/// (its own name by default).
fn pack_as(w: &World, version: &cairn_index::IndexVersion, dir: &Path, name: Option<&str>) {
    let made = make_pack(w, version);
    let name = name.map_or_else(|| cairn_index::pack::pack_name(version), str::to_owned);
    std::fs::copy(
        format!("{}.sha256", made.display()),
        dir.join(format!("{name}.sha256")),
    )
    .expect("copy sums");
    std::fs::copy(&made, dir.join(&name)).expect("copy pack");
}

pub(crate) fn live(root: &Path, model: &Path) -> LiveIndex {
    LiveIndex::open(EngineOptions {
        index: root.to_owned(),
        model_dir: Some(model.to_owned()),
        device: DevicePref::Cpu,
    })
    .expect("open")
}

fn entries(dir: &Path) -> usize {
    std::fs::read_dir(dir).map_or(0, |d| d.count())
}

/// Finding 7 (a, c, d): a dropped pack is tried once and set aside; pruned
/// or rolled-back versions never come back; retention covers packs too.
#[test]
fn dropped_packs_never_roll_the_index_back() {
    let w = World::new();
    assert!(w.build("out", &[]).status.success());
    let root = IndexRoot::new(w.path("out"));
    let a = root.current().expect("current");
    make_pack(&w, &a);
    let b = next_version(&w, 1);
    let live = live(&w.path("out"), &w.model).with_keep(2);

    // (a) Pack A lies in the root while A is published; B is current. A
    // later prune of A must not bring the pack back to life.
    pack_as(&w, &a, &w.path("out"), None);
    live.check(false);
    assert_eq!(root.current().expect("current"), b);
    assert_eq!(
        entries(&w.path("out/packs/rejected")),
        2,
        "pack and checksum set aside"
    );
    std::fs::remove_dir_all(root.version_dir(&a).path()).expect("prune A");
    for _ in 0..3 {
        live.check(false);
    }
    assert_eq!(root.current().expect("current"), b, "pack A came back");

    // An older pack than CURRENT never replaces it, even under a new name.
    let c = next_version(&w, 2);
    root.set_current(&b).expect("back to B");
    std::fs::remove_dir_all(root.version_dir(&c).path()).expect("drop C");
    let d = next_version(&w, 3);
    pack_as(
        &w,
        &b,
        &w.path("out"),
        Some("cairn-index-00000000000000aa.tar.zst"),
    );
    live.check(false);
    assert_eq!(
        root.current().expect("current"),
        d,
        "an older pack replaced CURRENT"
    );

    // (c) A pack whose name does not match its version is refused (issue 28,
    // finding 5); under its own name it is adopted once, and a rollback by
    // CURRENT afterwards stays rolled back.
    root.set_current(&b).expect("rollback");
    std::fs::remove_dir_all(root.version_dir(&d).path()).expect("unpublish D");
    pack_as(
        &w,
        &d,
        &w.path("out"),
        Some("cairn-index-00000000000000bb.tar.zst"),
    );
    live.check(false);
    assert_eq!(
        root.current().expect("current"),
        b,
        "a misnamed pack was adopted"
    );
    pack_as(&w, &d, &w.path("out"), None);
    live.check(false);
    assert_eq!(
        root.current().expect("current"),
        d,
        "the newer pack was adopted"
    );
    root.set_current(&b).expect("rollback by CURRENT");
    for _ in 0..5 {
        live.check(false);
    }
    assert_eq!(
        root.current().expect("current"),
        b,
        "the rollback was undone"
    );
    assert_eq!(live.current().snapshot().version, b);

    // (d) Retention: at most `keep` versions (plus CURRENT) and `keep` packs per folder.
    let e = next_version(&w, 4);
    let f = next_version(&w, 5);
    root.set_current(&d).expect("current");
    for v in [&e, &f] {
        std::fs::remove_dir_all(root.version_dir(v).path()).expect("unpublish");
        pack_as(&w, v, &w.path("out"), None);
        live.check(false);
    }
    assert_eq!(root.current().expect("current"), f);
    let mut versions = root.list_versions().expect("versions");
    versions.sort();
    assert!(versions.len() <= 2, "{versions:?}");
    assert!(
        entries(&w.path("out/packs/adopted")) <= 4,
        "two packs and their checksums"
    );
    assert!(entries(&w.path("out/packs/rejected")) <= 4);
}

/// Finding 7 (b): the startup pack of `serve --index PACK` never replaces a
/// newer CURRENT on restart, unless the operator asks.
#[test]
fn a_startup_pack_never_replaces_a_newer_current() {
    let w = World::new();
    assert!(w.build("out", &[]).status.success());
    let root = IndexRoot::new(w.path("out"));
    let a = root.current().expect("current");
    let packs = w.path("ship");
    std::fs::create_dir_all(&packs).expect("mkdir");
    pack_as(&w, &a, &packs, None);
    let pack_a = packs.join(cairn_index::pack::pack_name(&a));
    let served = IndexRoot::new(w.path("served"));
    assert!(
        unpack(&pack_a, &served, Rollback::Refuse)
            .expect("unpack")
            .current
    );
    // Meanwhile a nightly pack made B current in the served root.
    let b = next_version(&w, 1);
    pack_as(&w, &b, &packs, None);
    let pack_b = packs.join(cairn_index::pack::pack_name(&b));
    assert!(
        unpack(&pack_b, &served, Rollback::Refuse)
            .expect("unpack")
            .current
    );
    // A restart with the old startup pack serves B.
    let token = TokenStore::new(w.path("tokens.json"))
        .add("bot", &[], false)
        .expect("token");
    let server = Server::start_at(
        &w,
        pack_a.to_str().expect("utf8"),
        &["--unpack-into", w.path("served").to_str().expect("utf8")],
    );
    let (_, v) = crate::serve_process::get_json(&server.url("/version"), &token);
    assert_eq!(v["index_version"], b.as_str(), "{v}");
    drop(server);
    // The operator asks for the rollback.
    let u = unpack(&pack_a, &served, Rollback::Allow).expect("unpack");
    assert!(u.current);
    assert_eq!(served.current().expect("current"), a);
}
