//! Replicas in step with one `cairn watch`: the watch packs each new
//! version into a folder nginx serves; two `cairn serve` replicas behind
//! that nginx's load balancer each run `cairn pull --every` against it; a
//! client searches through the balancer the whole time. After two pushes
//! both replicas serve each new version, and no request failed.
//!
//! nginx is Debian's package (`nginx-light`). Without it on PATH the test
//! says so and passes, unless `CAIRN_REQUIRE_NGINX=1` (set by `.ci/run`,
//! which installs it) makes that a failure.

use crate::fixtures::{World, cairn, commit, stderr};
use crate::serve_process::{Server, agent, free_port, get_json};
use crate::watch::{Watching, start_watch, within_a_minute};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// A child process killed when the test ends however it ends.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn nginx() -> Option<&'static str> {
    let found = ["nginx", "/usr/sbin/nginx"].into_iter().find(|e| {
        Command::new(e)
            .arg("-v")
            .output()
            .is_ok_and(|o| o.status.success())
    });
    crate::fixtures::tool_present(
        found.is_some(),
        "CAIRN_REQUIRE_NGINX",
        "apt-get install nginx-light",
    )
    .then_some(found)
    .flatten()
}

/// nginx on loopback: `/packs/` is the watch's pack folder, everything
/// else goes round-robin to the replicas.
fn start_nginx(exe: &str, dir: &Path, port: u16, packs: &Path, replicas: &[u16]) -> Killed {
    let d = dir.display();
    let servers: String = replicas
        .iter()
        .map(|p| format!("server 127.0.0.1:{p};"))
        .collect();
    // Run as root (a CI container), the workers would drop to `nobody`,
    // who cannot read a test's private folders.
    let user = if is_root() { "user root;" } else { "" };
    let conf = format!(
        "{user}
daemon off;
worker_processes 1;
pid {d}/nginx.pid;
error_log {d}/error.log warn;
events {{ worker_connections 256; }}
http {{
  access_log off;
  client_body_temp_path {d}/body; proxy_temp_path {d}/proxy;
  fastcgi_temp_path {d}/fastcgi; uwsgi_temp_path {d}/uwsgi; scgi_temp_path {d}/scgi;
  upstream cairn {{ {servers} keepalive 8; }}
  server {{
    listen 127.0.0.1:{port};
    location /packs/ {{ alias {packs}/; }}
    location / {{ proxy_pass http://cairn; proxy_http_version 1.1; proxy_set_header Connection \"\"; proxy_set_header Host $host; }}
  }}
}}
",
        packs = packs.display()
    );
    let conf_path = dir.join("nginx.conf");
    std::fs::write(&conf_path, conf).expect("nginx.conf");
    let child = Command::new(exe)
        .arg("-p")
        .arg(dir)
        .arg("-e")
        .arg(dir.join("error.log"))
        .arg("-c")
        .arg(&conf_path)
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start nginx");
    Killed(child)
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// `cairn pull --every 1` of the balancer's latest.json into `index`.
fn start_pull(latest: &str, index: &Path) -> Killed {
    let child = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(["pull", latest, "--allow-http", "--every", "1", "--index"])
        .arg(index)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start cairn pull");
    Killed(child)
}

fn served_version(port: u16, token: &str) -> Option<String> {
    let (status, v) = get_json(&format!("http://127.0.0.1:{port}/version"), token);
    (status == 200).then(|| v["index_version"].as_str().map(str::to_owned))?
}

#[test]
fn two_replicas_behind_nginx_follow_the_watch_with_no_failed_request() {
    let Some(nginx) = nginx() else {
        return;
    };
    let w = World::new();
    let out = w.path("out");
    let packs = w.path("packs");
    let _watch: Watching = start_watch(
        &w,
        &["--every", "1", "--pack-to", packs.to_str().expect("utf8")],
        &[],
    );
    let latest = || -> Option<serde_json::Value> {
        serde_json::from_slice(&std::fs::read(packs.join("latest.json")).ok()?).ok()
    };
    let first = within_a_minute("the first pack", latest);
    let current = std::fs::read_to_string(out.join("CURRENT")).expect("CURRENT");
    assert_eq!(first["index_version"], current.trim(), "{first}");

    // nginx first, then each replica: its first pack pulled through nginx
    // (adopted when its server starts), then `cairn pull --every` beside it.
    let token = cairn_serve::auth::TokenStore::new(w.path("tokens.json"))
        .add("bot", &[], false)
        .expect("token");
    let balancer = free_port();
    let latest_url = format!("http://127.0.0.1:{balancer}/packs/latest.json");
    let ports = [free_port(), free_port()];
    let ngx_dir = w.path("nginx");
    std::fs::create_dir_all(&ngx_dir).expect("nginx dir");
    let _nginx = start_nginx(nginx, &ngx_dir, balancer, &packs, &ports);
    let mut replicas = Vec::new();
    let mut pulls = Vec::new();
    for (name, port) in ["r1", "r2"].into_iter().zip(ports) {
        let index = w.path(name);
        let index_s = index.to_str().expect("utf8");
        let o = within_a_minute("nginx to serve latest.json", || {
            let o = cairn(&["pull", &latest_url, "--allow-http", "--index", index_s]);
            o.status.success().then_some(o)
        });
        assert!(stderr(&o).is_empty(), "{}", stderr(&o));
        replicas.push(Server::start_on(&w, index_s, port, &["--watch-ms", "200"]));
        assert_eq!(
            served_version(port, &token).as_deref(),
            Some(current.trim())
        );
        pulls.push(start_pull(&latest_url, &index));
    }
    let through = |path: &str| format!("http://127.0.0.1:{balancer}{path}");
    assert_eq!(get_json(&through("/ready"), &token).0, 200, "nginx");

    // A client searching through the balancer the whole time.
    let stop = Arc::new(AtomicBool::new(false));
    let (ok, failed) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let client = {
        let (stop, ok, failed, token) = (
            Arc::clone(&stop),
            Arc::clone(&ok),
            Arc::clone(&failed),
            token.clone(),
        );
        let url = through("/search?query=alpha+helper");
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                match get_json(&url, &token).0 {
                    200 => ok.fetch_add(1, Ordering::Relaxed),
                    _ => failed.fetch_add(1, Ordering::Relaxed),
                };
            }
        })
    };

    // Two pushes; after each, both replicas serve the watch's new version
    // and a search through the balancer cites the new file.
    let mut waits = Vec::new();
    for n in 1..=2 {
        let before = std::fs::read_to_string(out.join("CURRENT")).expect("CURRENT");
        let name = format!("replicated_helper_{n}");
        let pushed_at = Instant::now();
        let path = format!("src/alpha/replicated_{n}.py");
        let text = format!("def {name}():\n    return {n}\n");
        commit(
            &w.alpha_repo(),
            &[(path.as_str(), text.into_bytes())],
            "add a helper",
        );
        let version = within_a_minute("the watch's build after the push", || {
            std::fs::read_to_string(out.join("CURRENT"))
                .ok()
                .filter(|c| *c != before)
        });
        for port in &ports {
            within_a_minute("a replica on the new version", || {
                (served_version(*port, &token).as_deref() == Some(version.trim())).then_some(())
            });
        }
        let cited = within_a_minute("a search through nginx citing the new file", || {
            let (status, v) = get_json(&through(&format!("/search?query={name}")), &token);
            (status == 200).then_some(v["hits"][0]["doc_id"].clone())
        });
        assert_eq!(cited, format!("science/alpha/src/alpha/replicated_{n}.py"));
        waits.push(pushed_at.elapsed());
    }
    // Each replica says how fresh it is, as the watching machine does: the
    // watch's freshness.json comes along with the packs.
    for port in &ports {
        within_a_minute("a replica's freshness", || {
            let (_, v) = get_json(&format!("http://127.0.0.1:{port}/version"), &token);
            let alpha = v["repos"]
                .as_array()?
                .iter()
                .find(|r| r["name"] == "alpha")?
                .clone();
            (alpha["checked_at"].is_string() && alpha["commits_behind"] == 0).then_some(())
        });
        let (_, health) = get_json(&format!("http://127.0.0.1:{port}/health"), &token);
        assert!(health["checked_at"].is_string(), "{health}");
        assert_eq!(health["repos_behind"], 0, "{health}");
    }
    stop.store(true, Ordering::Relaxed);
    client.join().expect("client");
    let (ok, failed) = (ok.load(Ordering::Relaxed), failed.load(Ordering::Relaxed));
    eprintln!("replicas: push to both replicas {waits:?}; {ok} searches, {failed} failed");
    assert!(ok > 0, "the client searched");
    assert_eq!(failed, 0, "no request through the balancer failed");
    for wait in waits {
        assert!(wait < Duration::from_secs(60), "{wait:?}");
    }
    // The folder keeps the newest packs, and latest.json names the newest.
    let last = latest().expect("latest.json");
    assert!(packs.join(last["pack"].as_str().expect("pack")).is_file());
    let status = agent().get(&latest_url).call().expect("latest via nginx");
    assert_eq!(status.status(), 200);
}
