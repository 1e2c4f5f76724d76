#!/usr/bin/env python3
"""Cost-based load test of `cairn serve` (loopback only, bounded in time):
a token holder's search latency alone, then while N anonymous callers (each
its own address, through a trusted proxy header) send the most expensive
request each operation allows, in turn. Prints both p50/p99 and their ratio.

usage: bench-load.py --cairn BINARY --index INDEX [--attackers 4] [--seconds 30]
                     [--searches 200] [--serve-arg ARG ...]

The server runs with --public-read (anonymous callers reach the API, as on
a class's public page) and --trusted-proxy 127.0.0.1, so X-Forwarded-For
names each attacker's address. Target (issue 43): the token holder's p99
under four attackers stays within 3x its unloaded p99.
"""
import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

QUERIES = [
    "emcee multiprocessing Pool",
    "how do I mark the true parameter values on a corner plot",
    "dynesty could not find a single point that have a valid log-likelihood",
    "MulensModel PSPL parameter names",
    "how to compute binary lens magnification",
    "run the sampler in parallel",
    "plot the posterior with corner",
    "fit a microlensing event with pyLIMA",
]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def request(url, headers=None, body=None, timeout=30):
    data = None if body is None else json.dumps(body).encode()
    h = dict(headers or {})
    if data is not None:
        h["Content-Type"] = "application/json"
    req = urllib.request.Request(url, data=data, headers=h)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()
    except Exception:
        return 0, b""


def percentile(values, p):
    v = sorted(values)
    return v[min(len(v) - 1, int(round((len(v) - 1) * p)))]


def expensive_requests(base, docs):
    """The costliest call of each operation an anonymous caller may make."""
    long_text = " ".join(["sampler likelihood posterior parameter model"] * 22)[:1000]
    largest = docs[0]
    items = [{"doc_id": d, "start": 1, "end": 400} for d in (docs * 50)[:50]]
    trace = "Traceback (most recent call last):\n" + "".join(
        f'  File "/x/emcee/ensemble.py", line {i}, in run_mcmc\n    state = self.sample(x)\n'
        for i in range(600)
    ) + "ValueError: the walkers are not independent\n"
    return [
        ("grep", f"{base}/grep?" + urllib.parse.urlencode(
            {"pattern": r"(?i)\b\w+\s+\w+\s+\w+\s+\w*zq", "regex": "true", "limit": 1000, "context": 5}), None),
        ("search", f"{base}/search", {
            "query": long_text, "queries": [long_text] * 5, "limit": 50}),
        ("page", f"{base}/doc/{urllib.parse.quote(largest)}?lines=1-400&before=0&after=0", None),
        ("explain", f"{base}/explain", {"text": trace[-16_000:], "limit": 20}),
        ("batch", f"{base}/retrieve/batch", {"items": items}),
    ]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cairn", required=True)
    ap.add_argument("--index", required=True)
    ap.add_argument("--attackers", type=int, default=4)
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--searches", type=int, default=200)
    ap.add_argument("--serve-arg", action="append", default=[])
    a = ap.parse_args()

    tmp = tempfile.mkdtemp()
    tokens = os.path.join(tmp, "tokens.json")
    out = subprocess.run([a.cairn, "token", "add", "bench", "--tokens", tokens],
                         capture_output=True, text=True, check=True).stdout
    token = next(w for w in out.split() if w.startswith("cairn_"))
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = subprocess.Popen(
        [a.cairn, "serve", "--index", a.index, "--bind", f"127.0.0.1:{port}", "--tokens", tokens,
         "--public-read", "--trusted-proxy", "127.0.0.1", *a.serve_arg],
        stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "serve.log"), "w"))
    try:
        started = time.time()
        while request(f"{base}/ready", timeout=2)[0] != 200:
            if time.time() - started > 120 or server.poll() is not None:
                sys.exit("the server did not become ready")
            time.sleep(0.2)
        auth = {"Authorization": f"Bearer {token}"}
        st, body = request(f"{base}/search?" + urllib.parse.urlencode({"query": "sampler", "limit": 50}), auth)
        docs = sorted({h["doc_id"] for h in json.loads(body)["hits"]})
        cpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        model = next((l.split(":", 1)[1].strip() for l in cpu.splitlines() if l.startswith("Model name")), "?")
        print(f"machine: {os.cpu_count()} cores, {model}; {time.strftime('%Y-%m-%d')}; {a.cairn}")

        def search(i):
            q = urllib.parse.urlencode({"query": QUERIES[i % len(QUERIES)] + f" {i}"})
            t = time.perf_counter()
            status, _ = request(f"{base}/search?{q}", auth)
            if status != 200:
                print(f"token holder got {status}", file=sys.stderr)
            return (time.perf_counter() - t) * 1e3

        alone = [search(i) for i in range(a.searches)]
        stop = threading.Event()
        counts = {}
        lock = threading.Lock()
        attacks = expensive_requests(base, docs)

        def attacker(k):
            addr = {"X-Forwarded-For": f"10.0.0.{k + 1}"}
            i = 0
            while not stop.is_set():
                name, url, body = attacks[i % len(attacks)]
                i += 1
                status, _ = request(url, addr, body)
                with lock:
                    counts[(name, status)] = counts.get((name, status), 0) + 1

        threads = [threading.Thread(target=attacker, args=(k,)) for k in range(a.attackers)]
        for t in threads:
            t.start()
        time.sleep(2)  # the attack is under way
        deadline = time.time() + a.seconds
        loaded = []
        while time.time() < deadline and len(loaded) < a.searches:
            loaded.append(search(a.searches + len(loaded)))
        stop.set()
        for t in threads:
            t.join()
        p = lambda xs: (percentile(xs, 0.5), percentile(xs, 0.99))
        (a50, a99), (l50, l99) = p(alone), p(loaded)
        print(f"token holder alone:  p50 {a50:.1f} ms, p99 {a99:.1f} ms ({len(alone)} searches)")
        print(f"with {a.attackers} attackers: p50 {l50:.1f} ms, p99 {l99:.1f} ms ({len(loaded)} searches)")
        print(f"p99 ratio {l99 / a99:.2f} (target <= 3)")
        print("attackers' answers: " + ", ".join(f"{n} {s}: {c}" for (n, s), c in sorted(counts.items())))
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
