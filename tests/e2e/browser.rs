//! The web page in a real headless Chromium (Debian's `chromium`), driven over
//! the DevTools protocol as a person would use it: type a query, see hits,
//! apply a filter, open a passage, follow a line link, copy a citation,
//! browse the tree; and no request ever leaves the server.
//!
//! Without a `chromium` on PATH the test says so and passes, unless
//! `CAIRN_REQUIRE_BROWSER=1` (set by `.ci/run`, which installs it) makes that
//! a failure. With `CAIRN_AXE_JS` naming axe-core's `axe.min.js`, each page
//! must also pass axe's accessibility rules.

use crate::fixtures::World;
use crate::serve_process::{Server, agent};
use base64::Engine as _;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use tungstenite::stream::MaybeTlsStream;
use tungstenite::{Message, WebSocket};

/// A headless Chromium and one page in it.
pub(crate) struct Browser {
    child: Child,
    ws: WebSocket<MaybeTlsStream<TcpStream>>,
    session: String,
    next_id: u64,
    /// Every URL the page requested.
    pub(crate) requests: Vec<String>,
    _profile: tempfile::TempDir,
}

impl Browser {
    /// Starts Chromium, or says why not (None: skip, unless required).
    pub(crate) fn launch() -> Option<Browser> {
        let exe = ["chromium", "chromium-browser", "google-chrome"]
            .into_iter()
            .find(|e| {
                Command::new(e)
                    .arg("--version")
                    .output()
                    .is_ok_and(|o| o.status.success())
            });
        let Some(exe) = exe else {
            cairn_embed::fixtures::skip_unless_required(
                "CAIRN_REQUIRE_BROWSER",
                "chromium on PATH (apt-get install chromium)",
            );
            return None;
        };
        let profile = tempfile::tempdir().expect("profile");
        let mut child = Command::new(exe)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-extensions",
                "--disable-background-networking",
                "--remote-debugging-port=0",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn chromium");
        let stderr = child.stderr.take().expect("stderr");
        let mut url = None;
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(u) = line.strip_prefix("DevTools listening on ") {
                url = Some(u.trim().to_owned());
                break;
            }
        }
        let url = url.expect("chromium printed its DevTools address");
        let (ws, _) = tungstenite::connect(url.as_str()).expect("connect to DevTools");
        if let MaybeTlsStream::Plain(s) = ws.get_ref() {
            s.set_read_timeout(Some(Duration::from_secs(30)))
                .expect("timeout");
        }
        let mut b = Browser {
            child,
            ws,
            session: String::new(),
            next_id: 0,
            requests: Vec::new(),
            _profile: profile,
        };
        let targets = b.send("Target.getTargets", json!({}));
        let page = targets["targetInfos"]
            .as_array()
            .and_then(|t| t.iter().find(|t| t["type"] == "page"))
            .map(|t| t["targetId"].as_str().unwrap_or("").to_owned())
            .expect("a page target");
        let attached = b.send(
            "Target.attachToTarget",
            json!({"targetId": page, "flatten": true}),
        );
        b.session = attached["sessionId"].as_str().expect("session").to_owned();
        for domain in ["Page.enable", "Runtime.enable", "Network.enable"] {
            b.call(domain, json!({}));
        }
        Some(b)
    }

    /// A browser-level command.
    fn send(&mut self, method: &str, params: Value) -> Value {
        self.exchange(method, params, None)
    }

    /// A command to the page.
    pub(crate) fn call(&mut self, method: &str, params: Value) -> Value {
        let session = self.session.clone();
        self.exchange(method, params, Some(session))
    }

    fn exchange(&mut self, method: &str, params: Value, session: Option<String>) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let mut msg = json!({"id": id, "method": method, "params": params});
        if let Some(s) = session {
            msg["sessionId"] = Value::String(s);
        }
        self.ws.send(Message::text(msg.to_string())).expect("send");
        loop {
            let m = self.read();
            if m["id"].as_u64() == Some(id) {
                assert!(m.get("error").is_none(), "{method}: {m}");
                return m["result"].clone();
            }
        }
    }

    /// The next message, noting the page's requests on the way.
    fn read(&mut self) -> Value {
        loop {
            match self.ws.read().expect("read from DevTools") {
                Message::Text(t) => {
                    let v: Value = serde_json::from_str(t.as_str()).expect("json");
                    if v["method"] == "Network.requestWillBeSent"
                        && let Some(u) = v["params"]["request"]["url"].as_str()
                    {
                        self.requests.push(u.to_owned());
                    }
                    return v;
                }
                _ => continue,
            }
        }
    }

    /// Waits for an event of the page.
    fn wait_event(&mut self, method: &str) {
        let started = Instant::now();
        loop {
            let m = self.read();
            if m["method"] == method {
                return;
            }
            assert!(started.elapsed() < Duration::from_secs(30), "no {method}");
        }
    }

    /// Loads `url` and waits for its load event.
    pub(crate) fn open(&mut self, url: &str) {
        self.call("Page.navigate", json!({"url": url}));
        self.wait_event("Page.loadEventFired");
    }

    /// Runs `js` in the page (awaiting a promise) and returns its value.
    pub(crate) fn eval(&mut self, js: &str) -> Value {
        let r = self.call(
            "Runtime.evaluate",
            json!({"expression": js, "returnByValue": true, "awaitPromise": true}),
        );
        assert!(r.get("exceptionDetails").is_none(), "{js}: {r}");
        r["result"]["value"].clone()
    }

    /// Polls `js` until it is true.
    pub(crate) fn until(&mut self, js: &str) {
        let started = Instant::now();
        while self.eval(js) != Value::Bool(true) {
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "never true: {js}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Clicks what `selector` finds and waits for the next page to load.
    fn click_to_load(&mut self, selector: &str) {
        let js = format!("document.querySelector({}).click(); true", json!(selector));
        self.eval(&js);
        self.wait_event("Page.loadEventFired");
    }

    /// Presses one key (as typed, not as text inserted).
    fn key(&mut self, key: &str) {
        for kind in ["keyDown", "keyUp"] {
            let mut p =
                json!({"type": kind, "key": key, "code": format!("Key{}", key.to_uppercase())});
            if kind == "keyDown" {
                p["text"] = Value::String(key.to_owned());
            }
            if key == "/" {
                p["code"] = Value::String("Slash".into());
            }
            self.call("Input.dispatchKeyEvent", p);
        }
    }

    /// The page at `width`×`height` as a PNG.
    fn screenshot(&mut self, width: u32, height: u32, mobile: bool) -> Vec<u8> {
        self.call(
            "Emulation.setDeviceMetricsOverride",
            json!({"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile}),
        );
        let shot = self.call("Page.captureScreenshot", json!({"format": "png"}));
        self.call("Emulation.clearDeviceMetricsOverride", json!({}));
        base64::engine::general_purpose::STANDARD
            .decode(shot["data"].as_str().expect("png data"))
            .expect("base64")
    }

    /// axe-core's violations on the current page, when `CAIRN_AXE_JS` is set.
    fn accessibility_violations(&mut self) -> Option<Vec<String>> {
        let path = std::env::var("CAIRN_AXE_JS").ok()?;
        let axe = std::fs::read_to_string(&path).expect("CAIRN_AXE_JS readable");
        // Injected through the protocol, not the page: the page's policy allows no inline script.
        self.call("Runtime.evaluate", json!({"expression": axe}));
        let v = self.eval(
            "axe.run(document, {runOnly: ['wcag2a', 'wcag2aa', 'best-practice']}).then(r => r.violations.map(v => v.id + ': ' + v.nodes.length + ' nodes, e.g. ' + v.nodes[0].html))",
        );
        Some(
            v.as_array()
                .into_iter()
                .flatten()
                .map(|x| x.as_str().unwrap_or("").to_owned())
                .collect(),
        )
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_person_searches_reads_cites_and_browses_in_a_real_browser() {
    let w = World::new();
    let (path, bytes) = crate::explain::UNITS_PY;
    crate::fixtures::commit(&w.alpha_repo(), &[(path, bytes.to_vec())], "units");
    let built = w.build("out", &[]);
    assert!(
        built.status.success(),
        "{}",
        crate::fixtures::stderr(&built)
    );
    let server = Server::start(&w, "out", &["--no-auth"]);
    let Some(mut b) = Browser::launch() else {
        return;
    };
    let base = server.url("");
    let shots = std::env::var("CAIRN_UI_SCREENSHOTS").ok();
    let shoot = |b: &mut Browser, name: &str| {
        for (label, width, height, mobile) in
            [("desktop", 1280, 900, false), ("phone", 390, 844, true)]
        {
            let png = b.screenshot(width, height, mobile);
            assert!(png.starts_with(b"\x89PNG"), "{name} {label}");
            if let Some(dir) = &shots {
                std::fs::write(format!("{dir}/{name}-{label}.png"), &png)
                    .expect("write screenshot");
            }
        }
    };
    let mut axe_failures = Vec::new();
    let mut check_a11y = |b: &mut Browser, name: &str| {
        if let Some(v) = b.accessibility_violations()
            && !v.is_empty()
        {
            axe_failures.push(format!("{name}: {v:?}"));
        }
    };

    // Type a query: results come as you type, and the URL keeps the query.
    b.open(&format!("{base}/"));
    b.until("document.activeElement && document.activeElement.id === 'q'");
    b.call("Input.insertText", json!({"text": "fit_model"}));
    b.until("document.querySelectorAll('.hit').length > 0");
    b.until("location.search.includes('q=fit_model')");
    let first = b.eval("document.querySelector('.hit-link').textContent");
    assert!(
        first
            .as_str()
            .is_some_and(|t| t.starts_with("science/alpha/")),
        "{first}"
    );
    // Keyboard: j moves to the first hit, `/` returns to the box.
    b.eval("document.activeElement.blur(); true");
    b.key("j");
    b.until("document.querySelector('.hit.current') !== null");
    b.key("/");
    b.until("document.activeElement.id === 'q'");

    // The same search without JavaScript's help: a plain GET, and a filter.
    b.open(&format!("{base}/?q=magnification"));
    shoot(&mut b, "search");
    check_a11y(&mut b, "search");
    b.eval("document.querySelector('select[name=doctype]').value = 'code'; true");
    b.click_to_load("form.search button[type=submit]");
    b.until("location.search.includes('doctype=code')");
    let doctypes = b.eval("Array.from(document.querySelectorAll('.hit .meta .tag:nth-child(2)')).map(t => t.textContent)");
    let doctypes = doctypes.as_array().cloned().unwrap_or_default();
    assert!(
        !doctypes.is_empty() && doctypes.iter().all(|d| d == "code"),
        "{doctypes:?}"
    );

    // Open a passage: its highlighted lines are the retrieve call's, byte for byte.
    b.click_to_load(".hit-link");
    let href = b.eval("location.pathname + location.search");
    let href = href.as_str().unwrap_or("").to_owned();
    let (doc_id, lines) = href
        .strip_prefix("/doc/")
        .and_then(|r| r.split_once("?lines="))
        .expect("a passage URL");
    // `lines=a-b&focus=c-d`: the cited span, and the lines marked within it.
    let (lines, focus) = lines.split_once("&focus=").unwrap_or((lines, ""));
    assert!(!focus.is_empty(), "a hit links to its focus: {href}");
    let marked = b.eval("document.querySelectorAll('tr.cited.focus').length");
    assert!(
        marked.as_u64().is_some_and(|n| n > 0),
        "focus rows: {marked}"
    );
    let (start, end) = lines.split_once('-').expect("a span");
    let cited = b.eval("Array.from(document.querySelectorAll('tr.cited td.src')).map(td => td.textContent).join('\\n')");
    let api: Value = serde_json::from_str(
        &agent()
            .post(&server.url("/retrieve"))
            .header("content-type", "application/json")
            .send(json!({"doc_id": doc_id, "start": start.parse::<u32>().expect("start"), "end": end.parse::<u32>().expect("end")}).to_string())
            .expect("retrieve")
            .body_mut()
            .read_to_string()
            .expect("body"),
    )
    .expect("json");
    assert_eq!(
        cited.as_str(),
        api["text"].as_str().map(|t| t.trim_end_matches('\n')),
        "{href}"
    );
    shoot(&mut b, "passage");
    check_a11y(&mut b, "passage");
    // The dark theme too (contrast is checked per theme).
    b.call(
        "Emulation.setEmulatedMedia",
        json!({"features": [{"name": "prefers-color-scheme", "value": "dark"}]}),
    );
    check_a11y(&mut b, "passage, dark");
    if let Some(dir) = &shots {
        std::fs::write(
            format!("{dir}/passage-dark.png"),
            b.screenshot(1280, 900, false),
        )
        .expect("write");
    }
    b.call("Emulation.setEmulatedMedia", json!({"features": []}));

    // Follow a line-number link.
    b.eval("document.querySelector('tr.cited td.ln a').click(); true");
    let target = format!("#L{start}");
    b.until(&format!("location.hash === {}", json!(target)));
    assert_eq!(
        b.eval("document.querySelector(':target').id"),
        json!(format!("L{start}"))
    );

    // Copy a citation: the button hands the clipboard `[doc_id:a-b](permalink)`.
    b.eval("navigator.clipboard.writeText = t => { window.copied = t; return Promise.resolve(); }; true");
    b.eval("document.querySelector('button.copy').click(); true");
    b.until("typeof window.copied === 'string'");
    let copied = b.eval("window.copied");
    let want = format!(
        "[{doc_id}:{start}-{end}]({})",
        api["permalink"].as_str().unwrap_or("")
    );
    assert_eq!(copied.as_str(), Some(want.as_str()));

    // Browse the tree down to a file and open it.
    b.open(&format!("{base}/browse/"));
    shoot(&mut b, "browse");
    check_a11y(&mut b, "browse");
    b.click_to_load("a[href='/browse/science']");
    b.click_to_load("a[href='/browse/science/alpha']");
    b.until("document.querySelector('a[href^=\"/browse/science/alpha/\"]') !== null");
    b.click_to_load("a[href='/browse/science/alpha/src']");
    b.click_to_load("a[href='/browse/science/alpha/src/alpha']");
    b.click_to_load("li.file a");
    b.until("document.querySelectorAll('tr.cited').length > 0");

    // A notebook reads as its cells, each raw line anchored once.
    b.open(&format!(
        "{base}/doc/science/alpha/notebooks/demo.ipynb?lines=1-60"
    ));
    let text = b.eval("document.querySelector('.code').textContent");
    assert!(
        text.as_str().is_some_and(
            |t| t.contains("model = alpha.fit_model(data)") && !t.contains("\"source\"")
        ),
        "{text}"
    );
    assert_eq!(
        b.eval("(() => { const ids = Array.from(document.querySelectorAll('tr[id]')).map(r => r.id); return ids.length === new Set(ids).size; })()"),
        json!(true)
    );
    check_a11y(&mut b, "notebook passage");

    // Paste a traceback into the explain page: the raise site, linked.
    b.open(&format!("{base}/errors"));
    b.eval("document.getElementById('text').focus(); true");
    b.call(
        "Input.insertText",
        json!({"text": crate::explain::TRACEBACK}),
    );
    b.click_to_load("form.explain button[type=submit]");
    b.until("document.querySelector('a[href=\"/doc/science/alpha/src/alpha/units.py?lines=6-6\"]') !== null");
    assert_eq!(
        b.eval("document.getElementById('text').value.includes('t_E must be positive')"),
        json!(true),
        "the pasted text stays in the form"
    );
    shoot(&mut b, "errors");
    check_a11y(&mut b, "errors");

    // The API reference.
    b.open(&format!("{base}/api"));
    assert_eq!(
        b.eval("document.querySelectorAll('section.op').length > 5"),
        json!(true)
    );
    check_a11y(&mut b, "api");

    // Exact text: the lines that hold it, each a link to its place.
    b.open(&format!("{base}/?q=fit_model&exact=1"));
    b.until("document.querySelectorAll('.hit pre.snippet a').length > 0");
    assert_eq!(
        b.eval("document.querySelector('input[name=exact]').checked"),
        json!(true)
    );
    check_a11y(&mut b, "exact text");

    // An identifier in a passage leads to its definitions.
    b.open(&format!("{base}/def/fit_model"));
    b.until("document.querySelectorAll('.hit-link').length > 0");
    check_a11y(&mut b, "definitions");

    // Nothing was ever fetched from anywhere but this server.
    assert!(!b.requests.is_empty());
    let foreign: Vec<&String> = b
        .requests
        .iter()
        .filter(|u| !u.starts_with(&base) && !u.starts_with("about:") && !u.starts_with("data:"))
        .collect();
    assert!(foreign.is_empty(), "requests left the server: {foreign:?}");
    assert!(axe_failures.is_empty(), "accessibility: {axe_failures:#?}");
}
