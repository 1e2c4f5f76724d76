#!/usr/bin/env python3
"""Push to citation: how long a push takes to reach a served citation
(issue 46), on the shared corpus, loopback only.

    python3 scripts/bench-fresh.py --cairn BIN --corpus ../shared/corpus \
        --cache CACHE [--pushes 10] [--repo corner.py] [--file src/corner/core.py] \
        [--replicas 2] [--poll 60]

One repository of the corpus is copied to a writable bare remote (the
others are read from the corpus's mirrors); the index is built once (a warm
CACHE makes that quick), then `cairn serve` and `cairn watch --listen` run
on it. Each push adds a docstring line holding a new word to FILE, commits,
`git push`es it to the remote and sends GitHub's signed push webhook; the
clock stops at the first search on the server whose hits cite that line.
Prints each push's seconds and the split the watch records (its build's
seconds, the rest being the webhook, the poll and the server's swap, which
checks CURRENT every 2 s by default). Target: p50 <= 30 s, every push <= 60 s.

With --poll SECONDS no webhook is sent: the watch polls every SECONDS
(target: every push cited within SECONDS + 30 s). With --replicas N the watch also packs each version (`--pack-to`), a plain
HTTP server serves the packs, and N more `cairn serve` replicas each run
`cairn pull --every 1` against its latest.json; the clock then stops when
every replica too cites the line.
"""

import argparse
import hashlib
import hmac
import json
import os
import re
import secrets
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def request(url, headers=None, body=None, timeout=30):
    req = urllib.request.Request(url, data=body, headers=headers or {},
                                 method="POST" if body is not None else "GET")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return 0, b""


def git(*args, cwd=None):
    env = dict(os.environ, GIT_AUTHOR_NAME="bench", GIT_AUTHOR_EMAIL="bench@example.org",
               GIT_COMMITTER_NAME="bench", GIT_COMMITTER_EMAIL="bench@example.org")
    subprocess.run(["git", *args], cwd=cwd, check=True, env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def wait(what, f, limit=300):
    until = time.time() + limit
    while time.time() < until:
        v = f()
        if v:
            return v
        time.sleep(0.2)
    sys.exit(f"waited {limit} s for {what}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cairn", required=True)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--cache", required=True)
    ap.add_argument("--pushes", type=int, default=10)
    ap.add_argument("--repo", default="corner.py")
    ap.add_argument("--file", default="src/corner/core.py")
    ap.add_argument("--replicas", type=int, default=0)
    ap.add_argument("--poll", type=int, default=0)
    a = ap.parse_args()
    corpus = os.path.abspath(a.corpus)
    tmp = tempfile.mkdtemp(prefix="bench-fresh-")
    procs = []
    try:
        remote = os.path.join(tmp, "remote", f"{a.repo}.git")
        # The corpus's mirrors have no refs/ folder (git reads them only with
        # one): the copy gets an empty one beside its packed-refs.
        shutil.copytree(os.path.join(corpus, f"{a.repo}.git"), remote)
        for d in ("refs/heads", "refs/tags"):
            os.makedirs(os.path.join(remote, d), exist_ok=True)
        work = os.path.join(tmp, "work")
        git("clone", "--quiet", remote, work)
        yml = open(os.path.join(corpus, "repositories.yml")).read()
        yml = re.sub(r"(\n\s*url: )(\S+)",
                     lambda m: m.group(1) + (remote if m.group(2) == f"{a.repo}.git"
                                             else os.path.join(corpus, m.group(2))), yml)
        config = os.path.join(tmp, "repositories.yml")
        open(config, "w").write(yml)
        index = os.path.join(tmp, "index")
        started = time.time()
        subprocess.run([a.cairn, "build", "--config", config, "--out", index, "--cache", a.cache],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        print(f"first build: {time.time() - started:.1f} s")
        tokens = os.path.join(tmp, "tokens.json")
        out = subprocess.run([a.cairn, "token", "add", "bench", "--tokens", tokens],
                             check=True, capture_output=True, text=True).stdout
        token = next(w for w in out.split() if w.startswith("cairn_"))
        port, hook_port = free_port(), free_port()
        procs.append(subprocess.Popen(
            [a.cairn, "serve", "--index", index, "--bind", f"127.0.0.1:{port}", "--tokens", tokens],
            stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "serve.log"), "w")))
        secret = secrets.token_hex(16)
        packs = os.path.join(tmp, "packs")
        pack_to = ["--pack-to", packs] if a.replicas else []
        procs.append(subprocess.Popen(
            [a.cairn, "watch", "--config", config, "--out", index, "--cache", a.cache,
             *(["--every", str(a.poll)] if a.poll else
               ["--every", "3600", "--listen", f"127.0.0.1:{hook_port}"]), *pack_to],
            env=dict(os.environ, CAIRN_WEBHOOK_SECRET=secret),
            stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "watch.log"), "w")))
        base = f"http://127.0.0.1:{port}"
        auth = {"Authorization": f"Bearer {token}"}
        wait("the server", lambda: request(f"{base}/ready")[0] == 200)
        fresh = os.path.join(index, "freshness.json")
        wait("the watch's first poll", lambda: os.path.exists(fresh))
        bases = [base]
        if a.replicas:
            latest = os.path.join(packs, "latest.json")
            wait("the first pack", lambda: os.path.exists(latest))
            pack = os.path.join(packs, json.load(open(latest))["pack"])
            http_port = free_port()
            procs.append(subprocess.Popen(
                [sys.executable, "-m", "http.server", "--bind", "127.0.0.1", str(http_port),
                 "--directory", packs], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            for r in range(a.replicas):
                replica = os.path.join(tmp, f"replica{r}")
                subprocess.run([a.cairn, "unpack", pack, "--index", replica], check=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                rport = free_port()
                procs.append(subprocess.Popen(
                    [a.cairn, "serve", "--index", replica, "--bind", f"127.0.0.1:{rport}",
                     "--tokens", tokens], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
                procs.append(subprocess.Popen(
                    [a.cairn, "pull", f"http://127.0.0.1:{http_port}/latest.json", "--allow-http",
                     "--every", "1", "--index", replica],
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
                bases.append(f"http://127.0.0.1:{rport}")
                wait(f"replica {r}", lambda b=bases[-1]: request(f"{b}/ready")[0] == 200)
        path = os.path.join(work, a.file)
        doc_suffix = f"/{a.repo}/{a.file}"
        times, builds = [], []
        for i in range(a.pushes):
            word = f"freshword{secrets.token_hex(4)}"
            lines = open(path).read().split("\n")
            # A comment line right after the first line (a docstring's or a shebang's).
            lines.insert(1, f"# {word}: a line pushed to measure freshness")
            open(path, "w").write("\n".join(lines))
            line = 2
            git("commit", "--quiet", "-am", f"freshness {i}", cwd=work)
            git("push", "--quiet", "origin", "HEAD", cwd=work)
            t0 = time.time()
            if not a.poll:
                body = json.dumps({"ref": "refs/heads/main", "repository": {"clone_url": remote}}).encode()
                sig = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
                status, _ = request(f"http://127.0.0.1:{hook_port}/webhook",
                                    {"X-GitHub-Event": "push", "X-Hub-Signature-256": sig,
                                     "X-GitHub-Delivery": f"bench-{i}-{word}",
                                     "Content-Type": "application/json"}, body)
                if status != 202:
                    sys.exit(f"webhook answered {status}")

            def cited(b):
                s, body = request(f"{b}/search?query={word}&limit=5&mode=bm25", auth)
                if s != 200:
                    return None
                hits = json.loads(body)["hits"]
                return any(h["doc_id"].endswith(doc_suffix) and h["start_line"] <= line <= h["end_line"]
                           for h in hits)
            served = set()
            wait(f"push {i} to be cited", lambda: served.update(b for b in bases if b not in served and cited(b))
                 or len(served) == len(bases), limit=120)
            seconds = time.time() - t0
            times.append(seconds)
            last = json.load(open(fresh)).get("last_build") or {}
            builds.append(last.get("seconds", 0.0))
            st = last.get("stages", {})
            built = last.get("seconds", 0.0)
            split = ", ".join(f"{k} {st.get(k, 0.0):.1f}" for k in ("sync", "chunk", "embed", "publish"))
            print(f"push {i + 1}: cited after {seconds:.1f} s on {len(bases)} server(s): "
                  f"the watch's poll and build {built:.1f} s ({split}; model {st.get('model', 0.0):.1f}, "
                  f"detect and the rest {built - sum(st.values()):.1f}), embedded {last.get('embedded', 0)}; "
                  f"{'the wait for the poll' if a.poll else 'webhook'}, pack, pull and swap {seconds - built:.1f} s")
        print(f"push to citation: p50 {statistics.median(times):.1f} s, max {max(times):.1f} s "
              f"over {len(times)} pushes; the watch's poll and build p50 {statistics.median(builds):.1f} s")
    finally:
        for p in procs:
            p.terminate()
            p.wait()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
