#!/usr/bin/env python3
"""The size of cairn's MCP tool list, as a client's context holds it.

Starts `cairn mcp` on an index over stdio, asks `tools/list` for the
default list, every set (`--toolsets read` …) and all of them (with a model
configured, so `ask` is there too), and prints each one's tokens
(characters of the JSON / 4, the measure issue 61 sets: default ≤ 6,000,
all ≤ 12,000) and the largest tools.

    scripts/tool-tokens.py [INDEX] [--cairn target/release/cairn]
"""
import argparse
import json
import subprocess

SETS = ["read", "code", "history", "explain", "admin"]


def tools_list(cairn, index, extra):
    p = subprocess.Popen([cairn, "mcp", "--index", index, *extra], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    def send(m):
        p.stdin.write(json.dumps(m) + "\n")
        p.stdin.flush()
    send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "tool-tokens", "version": "1"}}})
    json.loads(p.stdout.readline())
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    reply = json.loads(p.stdout.readline())
    p.terminate()
    return reply["result"]["tools"]


def tokens(value):
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False)) // 4


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("index", nargs="?", default=".cairn/index")
    ap.add_argument("--cairn", default="target/release/cairn")
    a = ap.parse_args()
    model = ["--llm-url", "http://127.0.0.1:9/v1", "--llm-model", "any"]
    rows = [("default", [])] + [(s, ["--toolsets", s]) for s in SETS] + [("all", ["--toolsets", "all", *model])]
    for name, extra in rows:
        listed = tools_list(a.cairn, a.index, extra)
        names = ", ".join(t["name"] for t in listed)
        print(f"{name:8} {tokens(listed):6} tokens  {len(listed):2} tools: {names}")
        if name == "all":
            for t in sorted(listed, key=tokens, reverse=True)[:5]:
                print(f"           {t['name']:16} {tokens(t):5}")


if __name__ == "__main__":
    main()
