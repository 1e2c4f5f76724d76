//! The fourth adversarial review (issue 57), the listening side: request
//! bodies that never finish, a token holder's burst, Slack's edges and
//! replayed webhook deliveries, each against a real `cairn serve` or
//! `cairn watch` process, with the time or count it may take asserted.

use crate::fixtures::World;
use crate::serve_process::{Server, agent};
use crate::slack;
use crate::watch::{deliver, freshness, github_signature, start_watch, within_a_minute};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// Finding 7: a captured push delivery replayed under new delivery ids, and
/// pushes that move nothing, made a failing build run again each time (10
/// replays, 10 builds), since every wake reset the build's backoff. Now a
/// push is remembered by its ref and commit (409 however its id reads), a
/// wake polls at most once per tenth of the interval, and a build that
/// failed is tried again early only when its inputs moved.
#[test]
fn replayed_pushes_never_rebuild_a_failing_build() {
    let w = World::new();
    let out = w.path("out");
    // The only repository is a folder that is no repository: every build
    // fails the same way.
    let ghost = w.path("repos/ghost");
    std::fs::create_dir_all(&ghost).expect("mkdir");
    let yml = format!(
        "tools:\n  - name: ghost\n    url: {}\n    web_url: https://github.com/example/ghost\n",
        ghost.display()
    );
    w.write("config/repositories.yml", &yml);
    let port = crate::serve_process::free_port();
    let secret = "replay-secret";
    let listen = format!("127.0.0.1:{port}");
    // Twenty seconds between polls (a wake may come every 2 s); the first
    // retry of the failed build is due 20 s after it.
    let _watch = start_watch(
        &w,
        &["--every", "20", "--listen", &listen],
        &[("CAIRN_WEBHOOK_SECRET", secret)],
    );
    let last_build = || {
        freshness(&out).and_then(|f| {
            let b = &f["last_build"];
            b["error"]
                .is_string()
                .then(|| b["at"].as_str().map(str::to_owned))?
        })
    };
    let first = within_a_minute("the first (failing) build", last_build);
    let push = |after: &str| {
        serde_json::json!({
            "ref": "refs/heads/main",
            "after": after,
            "repository": {"clone_url": ghost.to_str().expect("utf8")}
        })
        .to_string()
    };
    let send = |body: &str, id: &str| {
        let sig = github_signature(secret, body.as_bytes());
        let headers = [
            ("X-GitHub-Event", "push"),
            ("X-Hub-Signature-256", sig.as_str()),
            ("X-GitHub-Delivery", id),
        ];
        deliver(port, &headers, body.as_bytes())
    };
    let captured = push(&"a".repeat(40));
    within_a_minute("the listener", || {
        (send(&captured, "first") == 202).then_some(())
    });
    // The same push under ten new ids: each refused.
    for i in 0..10 {
        assert_eq!(send(&captured, &format!("replay-{i}")), 409, "replay {i}");
    }
    // Ten pushes naming other commits, though nothing the build reads
    // moved: each wakes the watch (202), whose polls find the inputs the
    // build failed on.
    for i in 0..10 {
        let after = format!("{i:040x}");
        assert_eq!(send(&push(&after), &format!("other-{i}")), 202);
    }
    std::thread::sleep(Duration::from_secs(6));
    assert_eq!(
        last_build(),
        Some(first),
        "a failing build ran again on the same inputs"
    );
}

/// A POST whose head is sent and whose body never finishes: the open
/// connection.
fn slow_post(port: u16, path: &str, headers: &str) -> TcpStream {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n{headers}Content-Length: 1000\r\n\r\n{{"
    );
    s.write_all(head.as_bytes()).expect("send the head");
    s
}

/// `n` slow POSTs to `path` sent together: those still waiting on their
/// body after a moment, and the answers the others got at once.
fn slow_posts(port: u16, path: &str, n: usize) -> (Vec<TcpStream>, Vec<String>) {
    let all: Vec<TcpStream> = (0..n).map(|_| slow_post(port, path, "")).collect();
    std::thread::sleep(Duration::from_millis(500));
    let (mut held, mut answered) = (Vec::new(), Vec::new());
    for mut s in all {
        s.set_read_timeout(Some(Duration::from_millis(20)))
            .expect("timeout");
        match read_answer(&mut s) {
            None => held.push(s),
            Some(a) => answered.push(a),
        }
    }
    (held, answered)
}

/// What the server has said on `s` (its status line first), if anything.
fn read_answer(s: &mut TcpStream) -> Option<String> {
    let mut buf = [0u8; 4096];
    match s.read(&mut buf) {
        Ok(n) if n > 0 => Some(String::from_utf8_lossy(&buf[..n]).into_owned()),
        _ => None,
    }
}

/// Whether the server has closed `s` (a read sees the end, not a timeout).
fn closed(s: &mut TcpStream) -> bool {
    let mut buf = [0u8; 4096];
    s.set_read_timeout(Some(Duration::from_secs(2)))
        .expect("timeout");
    loop {
        match s.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return true,
            Err(_) => return false,
        }
    }
}

/// The descriptors `pid` holds open.
fn open_files(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| d.count())
}

/// Finding 3: request bodies never timed out (actix bounds only the
/// head), so one address holding 1,100 slow uploads took every descriptor
/// and token holders' searches timed out. Now every body must arrive within
/// `--body-timeout-ms` (then 408, connection closed), an unverified address
/// may send only 8 bodies at once (the rest 429 at once, unread), and a
/// token holder is answered meanwhile; the descriptors come back.
#[test]
fn bodies_that_never_finish_are_cut_off_and_few_per_address() {
    let w = World::new();
    assert!(w.build("out", &[]).status.success());
    let token = cairn_serve::auth::TokenStore::new(w.path("tokens.json"))
        .add("bot", &[], false)
        .expect("token");
    let server = Server::start(&w, "out", &["--public-read", "--body-timeout-ms", "2000"]);
    let pid = server.child.id();
    let before = open_files(pid);
    let started = Instant::now();
    let (mut held, refused) = slow_posts(server.port, "/search", 30);
    assert_eq!((held.len(), refused.len()), (8, 22), "held, refused");
    assert!(
        refused.iter().all(|a| a.starts_with("HTTP/1.1 429")),
        "{refused:?}"
    );
    // A token holder is answered while they wait (its body arrives whole).
    let asked = Instant::now();
    let r = agent()
        .post(&server.url("/search"))
        .header("Authorization", &format!("Bearer {token}"))
        .header("Content-Type", "application/json")
        .send(br#"{"query": "fit model"}"#.as_slice())
        .expect("search");
    assert_eq!(r.status().as_u16(), 200);
    assert!(
        asked.elapsed() < Duration::from_secs(2),
        "{:?}",
        asked.elapsed()
    );
    // A body trickling a byte every 300 ms is cut off all the same.
    let mut trickle = slow_post(
        server.port,
        "/search",
        &format!("Authorization: Bearer {token}\r\n"),
    );
    trickle
        .set_read_timeout(Some(Duration::from_millis(10)))
        .expect("timeout");
    let mut cut = None;
    for _ in 0..20 {
        if trickle.write_all(b" ").is_err() {
            break;
        }
        if let Some(a) = read_answer(&mut trickle) {
            cut = Some(a);
            break;
        }
        std::thread::sleep(Duration::from_millis(300));
    }
    let cut = cut.expect("the trickling body was answered");
    assert!(cut.starts_with("HTTP/1.1 408"), "{cut}");
    // Every held body: 408 by its deadline, and its connection closed.
    for s in &mut held {
        s.set_read_timeout(Some(Duration::from_secs(5)))
            .expect("timeout");
        let a = read_answer(s).expect("an answer by the deadline");
        assert!(a.starts_with("HTTP/1.1 408"), "{a}");
        assert!(closed(s), "the connection stays open after 408");
    }
    assert!(
        started.elapsed() < Duration::from_secs(12),
        "{:?}",
        started.elapsed()
    );
    drop(held);
    drop(trickle);
    std::thread::sleep(Duration::from_millis(300));
    let after = open_files(pid);
    assert!(
        after <= before + 2,
        "{before} descriptors before, {after} after"
    );
}

/// Finding 3, the watch's listener (one worker): slow deliveries from one
/// address hold at most 8 places, the rest are refused at once, a signed
/// delivery from elsewhere is still answered, and each slow one ends at
/// the deadline (10 s) with 408 and its connection closed.
#[test]
fn slow_deliveries_cannot_hold_the_watchs_listener() {
    let w = World::new();
    let port = crate::serve_process::free_port();
    let listen = format!("127.0.0.1:{port}");
    let _watch = start_watch(
        &w,
        &["--every", "3600", "--listen", &listen],
        &[("CAIRN_WEBHOOK_SECRET", "slow-secret")],
    );
    let ping = br#"{"zen": "ok"}"#;
    let sig = github_signature("slow-secret", ping);
    let headers = [
        ("X-GitHub-Event", "ping"),
        ("X-Hub-Signature-256", sig.as_str()),
    ];
    within_a_minute("the listener", || {
        (deliver(port, &headers, ping) == 200).then_some(())
    });
    let started = Instant::now();
    let (mut held, refused) = slow_posts(port, "/webhook", 20);
    assert_eq!((held.len(), refused.len()), (8, 12), "held, refused");
    assert!(
        refused.iter().all(|a| a.starts_with("HTTP/1.1 429")),
        "{refused:?}"
    );
    // Another delivery whose body arrives whole is answered meanwhile (the
    // places are per address: this one is the ninth from 127.0.0.1 only
    // while it sends, and a ping's body is sent at once).
    let asked = Instant::now();
    drop(held.pop());
    within_a_minute("a place for a whole delivery", || {
        (deliver(port, &headers, ping) == 200).then_some(())
    });
    assert!(
        asked.elapsed() < Duration::from_secs(3),
        "{:?}",
        asked.elapsed()
    );
    for s in &mut held {
        s.set_read_timeout(Some(Duration::from_secs(15)))
            .expect("timeout");
        let a = read_answer(s).expect("an answer by the deadline");
        assert!(a.starts_with("HTTP/1.1 408"), "{a}");
        assert!(closed(s), "the connection stays open after 408");
    }
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
}

/// Finding 5: lines were cut before escaping and the permalink and doc id
/// went in uncut, so an answer citing a long non-ASCII path had a
/// 3,616-character section and Slack refused the whole message. Now every
/// text object is sized after escaping, a permalink too long to send gives
/// way to the web page's link, and quoted code is `verbatim`.
#[test]
fn slack_answers_citing_a_long_path_fit_slacks_limits() {
    let w = World::new();
    let folder = "é".repeat(100);
    let path = format!("lib/{folder}/{folder}/{folder}/{folder}/extended_source.cpp");
    crate::fixtures::commit(
        &git2::Repository::open(&w.beta).expect("beta"),
        &[(
            path.as_str(),
            b"// Extended source magnification & <finite> rho.\ndouble ExtendedSourceMagnification(double rho) {\n    return rho < 1 ? 1.0 / rho : 1.0;\n}\n"
                .to_vec(),
        )],
        "a long path",
    );
    assert!(w.build("out", &[]).status.success());
    let receiver = slack::Receiver::start();
    let s = slack::start(&w, &receiver, &[]);
    let body = slack::command_body(
        "ExtendedSourceMagnification extended source rho",
        slack::TEAM,
        &receiver.url("/response/long"),
    );
    let ts = slack::now();
    let sent = slack::send(
        &s.url("/slack/commands"),
        ts,
        Some(&slack::sign(ts, &body)),
        &body,
        &[],
    );
    assert_eq!(sent.0, 200, "{}", sent.1);
    let answer = receiver.wait_for("/response/long").body;
    assert!(
        answer.to_string().contains("extended_source.cpp"),
        "the long path is not cited: {answer}"
    );
    let blocks = answer["blocks"].as_array().expect("blocks");
    for b in blocks {
        let texts =
            std::iter::once(&b["text"]).chain(b["elements"].as_array().into_iter().flatten());
        for t in texts.filter_map(|t| t["text"].as_str()) {
            assert!(
                t.chars().count() <= 3000,
                "{} characters: {t:.200}",
                t.chars().count()
            );
        }
    }
    assert!(
        blocks
            .iter()
            .filter(|b| b["text"]["text"]
                .as_str()
                .is_some_and(|t| t.contains("```")))
            .all(|b| b["text"]["verbatim"] == true),
        "{answer}"
    );
    slack::check_blocks_with_slack_sdk(&answer);
}

/// Finding 6: `--slack-team` checked only the envelope's workspace, so a
/// mention by a user of another workspace in a shared channel (Slack
/// Connect) was answered with what `--slack-groups` opens. Now every team
/// the event names must be allowed; others are acknowledged, never answered.
#[test]
fn a_mention_from_another_workspace_is_never_answered() {
    let w = World::new();
    assert!(w.build("out", &[]).status.success());
    let receiver = slack::Receiver::start();
    let s = slack::start(&w, &receiver, &[]);
    let events = s.url("/slack/events");
    let mention = |id: &str, fields: serde_json::Value| {
        let mut event = serde_json::json!({
            "type": "app_mention", "user": "U0001", "channel": "C0001",
            "ts": format!("1700000000.{id}"), "text": "<@U0BOT> where is BinaryMag defined?"
        });
        if let (Some(e), Some(f)) = (event.as_object_mut(), fields.as_object()) {
            e.extend(f.clone());
        }
        serde_json::json!({"type": "event_callback", "team_id": slack::TEAM,
            "event_id": format!("Ev{id}"), "event": event})
        .to_string()
    };
    for (id, fields) in [
        ("000001", serde_json::json!({"user_team": "T9999"})),
        (
            "000002",
            serde_json::json!({"source_team": "T9999", "user_team": slack::TEAM}),
        ),
        ("000003", serde_json::json!({"team": "T9999"})),
    ] {
        let body = mention(id, fields);
        let ts = slack::now();
        assert_eq!(
            slack::send(&events, ts, Some(&slack::sign(ts, &body)), &body, &[]).0,
            200
        );
    }
    std::thread::sleep(Duration::from_millis(800));
    assert!(receiver.received().is_empty(), "answered another workspace");
    // The same mention by a member of the allowed workspace is answered.
    let body = mention(
        "000004",
        serde_json::json!({"user_team": slack::TEAM, "team": slack::TEAM}),
    );
    let ts = slack::now();
    assert_eq!(
        slack::send(&events, ts, Some(&slack::sign(ts, &body)), &body, &[]).0,
        200
    );
    let posted = receiver.wait_for("/api/chat.postMessage");
    assert_eq!(posted.body["thread_ts"], "1700000000.000004");
}
