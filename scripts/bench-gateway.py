#!/usr/bin/env python3
"""The chat gateway's own overhead (issue 60's bound: p50 <= 50 ms on the
shared corpus): `cairn serve --llm-url` in front of a model served here that
answers at once, so a request's time is cairn's (grounding: the `context`
operation as the caller, the injection, the forwarding). Each golden
question is sent once as an OpenAI chat request; prints p50 and p95, and
the same questions' `POST /context` alone, measured in the same sitting.

usage: bench-gateway.py --cairn BINARY --index INDEX [--golden golden/users.yaml ...]
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
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import yaml


class Model(BaseHTTPRequestHandler):
    """An OpenAI-compatible endpoint that answers every chat at once."""

    def do_POST(self):
        self.rfile.read(int(self.headers["content-length"]))
        data = json.dumps({"choices": [{"finish_reason": "stop", "message": {"role": "assistant", "content": "ok"}}],
                           "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def post(url, token, body):
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={
        "Content-Type": "application/json", "Authorization": f"Bearer {token}"})
    started = time.perf_counter()
    with urllib.request.urlopen(req, timeout=60) as r:
        r.read()
        status = r.status
    return status, (time.perf_counter() - started) * 1000


def percentile(values, p):
    v = sorted(values)
    return v[min(len(v) - 1, int(round((len(v) - 1) * p)))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cairn", required=True)
    ap.add_argument("--index", required=True)
    ap.add_argument("--golden", action="append", default=[])
    a = ap.parse_args()
    questions = [q["query"] for g in (a.golden or ["golden/users.yaml", "golden/random.yaml"])
                 for q in yaml.safe_load(open(g))]
    model = ThreadingHTTPServer(("127.0.0.1", 0), Model)
    threading.Thread(target=model.serve_forever, daemon=True).start()
    tmp = tempfile.mkdtemp()
    tokens = os.path.join(tmp, "tokens.json")
    out = subprocess.run([a.cairn, "token", "add", "bench", "--tokens", tokens],
                         capture_output=True, text=True, check=True).stdout
    token = next(w for w in out.split() if w.startswith("cairn_"))
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = subprocess.Popen(
        [a.cairn, "serve", "--index", a.index, "--bind", f"127.0.0.1:{port}", "--tokens", tokens,
         "--llm-url", f"http://127.0.0.1:{model.server_address[1]}/v1", "--llm-model", "instant"],
        stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "serve.log"), "w"))
    try:
        started = time.time()
        while True:
            try:
                urllib.request.urlopen(f"{base}/ready", timeout=2).read()
                break
            except (urllib.error.URLError, ConnectionError):
                if time.time() - started > 120 or server.poll() is not None:
                    sys.exit("the server did not become ready")
                time.sleep(0.2)
        cpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        name = next((l.split(":", 1)[1].strip() for l in cpu.splitlines() if l.startswith("Model name")), "?")
        print(f"machine: {os.cpu_count()} cores, {name}; {time.strftime('%Y-%m-%d')}; {len(questions)} questions")
        for q in questions[:5]:  # warm the query model
            post(f"{base}/context", token, {"query": q})
        gateway, context = [], []
        for q in questions:
            chat = {"model": "any", "messages": [{"role": "user", "content": q}]}
            status, ms = post(f"{base}/v1/chat/completions", token, chat)
            assert status == 200, status
            gateway.append(ms)
            status, ms = post(f"{base}/context", token, {"query": q})
            context.append(ms)
        for label, v in [("gateway (model answers at once)", gateway), ("POST /context alone", context)]:
            print(f"  {label:32} p50 {percentile(v, 0.5):6.1f} ms  p95 {percentile(v, 0.95):6.1f} ms")
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
