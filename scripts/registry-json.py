#!/usr/bin/env python3
"""Writes the MCP registry's server.json for a release: cairn's name,
description and version, and each platform's MCP bundle in DIST as a
package (its release download URL and sha256), as the registry's server.json
format documents them (registry.modelcontextprotocol.io).

    scripts/registry-json.py DIST [--tag vX.Y.Z] [--repo OWNER/NAME]

The release workflow publishes it beside the bundles; `mcp-publisher publish`
sends it to the registry.
"""
import argparse
import hashlib
import json
import pathlib
import re

SCHEMA = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"


def cargo_version(root):
    for line in (root / "Cargo.toml").read_text().splitlines():
        m = re.match(r'^version = "(.+)"', line)
        if m:
            return m.group(1)
    raise SystemExit("no version in Cargo.toml")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dist", type=pathlib.Path)
    ap.add_argument("--tag")
    ap.add_argument("--repo", default="cairn-search/cairn")
    a = ap.parse_args()
    root = pathlib.Path(__file__).resolve().parent.parent
    version = cargo_version(root)
    tag = a.tag or f"v{version}"
    owner = a.repo.split("/")[0]
    packages = []
    for bundle in sorted(a.dist.glob("cairn-*.mcpb")):
        packages.append({
            "registryType": "mcpb",
            "identifier": f"https://github.com/{a.repo}/releases/download/{tag}/{bundle.name}",
            "version": version,
            "fileSha256": hashlib.sha256(bundle.read_bytes()).hexdigest(),
            "transport": {"type": "stdio"},
        })
    if not packages:
        raise SystemExit(f"no cairn-*.mcpb in {a.dist}")
    server = {
        "$schema": SCHEMA,
        "name": f"io.github.{owner}/cairn",
        "title": "cairn",
        "description": "Citation search over scientific software: exact lines at pinned commits, with links.",
        "version": version,
        "repository": {"url": f"https://github.com/{a.repo}", "source": "github"},
        "websiteUrl": f"https://github.com/{a.repo}",
        "packages": packages,
    }
    out = a.dist / "server.json"
    out.write_text(json.dumps(server, indent=2) + "\n")
    print(out)


if __name__ == "__main__":
    main()
