#!/usr/bin/env python3
"""`ask` against `search --queries` on a golden file (issue 60's measure).

A scripted OpenAI-compatible model, served here on a local port, replays a
calling model's keyword rewrites (golden/users-rewrites.yaml) as its one
`search_passages` call, then answers citing the hits the tool returned, as
`[doc_id:start-end]`: the whole hits (`--cite hits`) or their focus lines
(`--cite focus`). `cairn ask --json` runs each question through the real
loop, tools and verification; its checked citations are scored as `cairn
eval` scores the search: the first k citations, a hit when one names a
relevant document and overlaps its lines. It prints ask's figure beside
`cairn eval --rewrites`'s on the same index, and how many citations the
verification refused (a refused citation of a real hit is a defect).

  scripts/bench-ask.py --cairn target/release/cairn --index IDX \
      [--golden golden/users.yaml] [--rewrites golden/users-rewrites.yaml] [--cite hits|focus] [--k 5]
"""
import argparse
import json
import re
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import yaml

HIT = re.compile(r"^\s*\d+\. (\S+):(\d+)-(\d+)(?: \(in (\d+)-(\d+)\))?\s")


def reply(body, rewrites, cite, k):
    """The scripted model's next message for the conversation `body`."""
    messages = body["messages"]
    question = next(m["content"] for m in messages if m["role"] == "user")
    tool = [m for m in messages if m["role"] == "tool"]
    if not tool:
        args = {"query": question, "queries": rewrites.get(question, []), "limit": k}
        call = {"id": "call_0", "type": "function",
                "function": {"name": "search_passages", "arguments": json.dumps(args)}}
        return {"role": "assistant", "content": None, "tool_calls": [call]}
    cites = []
    for line in tool[0]["content"].splitlines():
        m = HIT.match(line)
        if not m:
            continue
        doc, a, b, hs, he = m.groups()
        span = (hs, he) if (cite == "hits" and hs) else (a, b)
        cites.append(f"[{doc}:{span[0]}-{span[1]}]")
    return {"role": "assistant", "content": "The answer is in " + " ".join(cites[:k]) + "."}


def serve(rewrites, cite, k):
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["content-length"])))
            out = {"choices": [{"finish_reason": "stop", "message": reply(body, rewrites, cite, k)}],
                   "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}}
            data = json.dumps(out).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}/v1"


def overlaps(cited, relevant):
    doc, a, b = cited
    for r in relevant:
        if r["doc_id"] != doc:
            continue
        lines = r.get("lines")
        if not lines or (a <= lines[1] and b >= lines[0]):
            return True
    return False


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--cairn", required=True)
    p.add_argument("--index", required=True)
    p.add_argument("--golden", default="golden/users.yaml")
    p.add_argument("--rewrites", default="golden/users-rewrites.yaml")
    p.add_argument("--cite", choices=["hits", "focus"], default="hits")
    p.add_argument("--k", type=int, default=5)
    a = p.parse_args()
    golden = yaml.safe_load(open(a.golden))
    by_id = yaml.safe_load(open(a.rewrites))
    rewrites = {q["query"]: by_id.get(q["id"], []) for q in golden}
    url = serve(rewrites, a.cite, a.k)
    found, refused, cited = 0, 0, 0
    for q in golden:
        out = subprocess.run(
            [a.cairn, "ask", q["query"], "--index", a.index, "--llm-url", url,
             "--llm-model", "scripted", "--json"],
            capture_output=True, text=True, env={"CAIRN_LOG": "error", "PATH": "/usr/bin:/bin"})
        if out.returncode != 0:
            sys.exit(f"{q['id']}: {out.stderr}")
        r = json.loads(out.stdout)
        refused += sum(1 for u in r["unverified"] if u["reason"] != "not in the cited lines")
        spans = [(c["doc_id"], c["start_line"], c["end_line"]) for c in r["citations"]][: a.k]
        cited += len(spans)
        found += any(overlaps(s, q["relevant"]) for s in spans)
    ev = subprocess.run(
        [a.cairn, "eval", a.golden, "--index", a.index, "--rewrites", a.rewrites, "--mode", "hybrid", "--json"],
        capture_output=True, text=True, env={"CAIRN_LOG": "error", "PATH": "/usr/bin:/bin"})
    report = json.loads(ev.stdout)
    report = report[0] if isinstance(report, list) else report
    o = report["overall"]
    n = len(golden)
    key = "recall_at_k" if a.cite == "hits" else "focus_recall_at_k"
    print(f"{a.golden}, {n} questions, citing {a.cite}, k={a.k}")
    print(f"  ask:                 {found / n:.3f} ({found} of {n}), {cited} citations, {refused} refused by verification")
    print(f"  search --queries:    {o[key]:.3f} ({key})")


if __name__ == "__main__":
    main()
