#!/usr/bin/env python3
"""Checks cairn's recorded line history against git itself.

Draws random (file, line) pairs from an index version, asks `cairn history
DOC --lines n:n` which commit last changed the line, and asks
`git blame -L n,n --porcelain COMMIT -- PATH` in the build cache's mirror
of the repository. Prints the figures and every disagreement; exits 1 when
any pair disagrees or has no recorded history.

  scripts/check-history.py --cairn target/release/cairn --index .cairn/index \
      --cache .cairn/cache --pairs 200 --seed 1

The mirrors are the ones `cairn build --cache CACHE` keeps under
CACHE/git/<repo>-<key>.git; a repository indexed at several refs is checked
at each ref's own commit.
"""

import argparse
import glob
import json
import random
import subprocess
import sys
import time


def cairn(args, opts):
    out = subprocess.run(
        [opts.cairn, *args, "--index", opts.index, "--json"],
        capture_output=True,
        text=True,
    )
    if out.returncode != 0:
        sys.exit(f"cairn {' '.join(args)}: {out.stderr.strip()}")
    return json.loads(out.stdout)


def git(mirror, *args):
    out = subprocess.run(
        ["git", "-c", "safe.directory=*", "--git-dir", mirror, *args],
        capture_output=True,
        text=True,
    )
    return out.returncode, out.stdout


def why_differs(mirror, commit, path, n, cairn_sha):
    """What explains a disagreement, when something known does."""
    rc, out = git(
        mirror, "blame", "--no-indent-heuristic", "--porcelain", "-L", f"{n},{n}", commit, "--", path
    )
    if rc == 0 and out.split() and out.split()[0] == cairn_sha:
        return "git agrees without its indent heuristic (libgit2 has none)"
    # A commit whose diff names a blob the mirror lacks (a partial clone):
    # libgit2's rename search reads it and stops there.
    rc, raw = git(mirror, "diff-tree", "-r", "--raw", "--no-abbrev", cairn_sha)
    for line in raw.splitlines():
        fields = line.split()
        if line.startswith(":") and len(fields) >= 4:
            for blob in fields[2:4]:
                if set(blob) != {"0"} and git(mirror, "cat-file", "-e", blob)[0] != 0:
                    return f"the mirror lacks blob {blob[:12]}, which that commit changes"
    return None


def mirror_of(cache, repo, commit):
    """The cached mirror of `repo` (its own name, without @ref) holding `commit`."""
    base = repo.split("@", 1)[0]
    for m in sorted(glob.glob(f"{cache}/git/{glob.escape(base)}-*.git")):
        if git(m, "cat-file", "-e", f"{commit}^{{commit}}")[0] == 0:
            return m
    return None


def files(opts):
    """Every text file of the version: (doc_id, repo, path, lines)."""
    version = cairn(["version"], opts)
    commits = {r["name"]: r.get("commit") for r in version["repos"]}
    top = cairn(["tree", "", "--depth", "2", "--max-entries", "5000"], opts)
    found = []
    for repo_entry in top["entries"]:
        parts = repo_entry["path"].split("/")
        if len(parts) != 2 or parts[1] not in commits or not commits[parts[1]]:
            continue
        listing = cairn(
            ["tree", repo_entry["path"], "--depth", "64", "--max-entries", "5000"],
            opts,
        )
        if listing.get("truncated"):
            print(f"note: {repo_entry['path']} lists more than 5,000 entries; drawing from the first")
        for e in listing["entries"]:
            if e.get("kind") == "file" and e.get("lines", 0) > 0 and e.get("doctype") != "paper":
                doc = e["path"]
                path = doc.split("/", 2)[2]
                found.append((doc, parts[1], path, e["lines"]))
    return found, commits


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cairn", default="target/release/cairn")
    ap.add_argument("--index", required=True, help="index root")
    ap.add_argument("--cache", required=True, help="the build's --cache folder")
    ap.add_argument("--pairs", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    opts = ap.parse_args()

    started = time.time()
    docs, commits = files(opts)
    if not docs:
        sys.exit("no text files in the index")
    rng = random.Random(opts.seed)
    mirrors = {}
    agree, disagree, unrecorded, boundary = 0, [], [], 0
    for _ in range(opts.pairs):
        doc, repo, path, lines = rng.choice(docs)
        n = rng.randint(1, lines)
        commit = commits[repo]
        if repo not in mirrors:
            mirrors[repo] = mirror_of(opts.cache, repo, commit)
        if mirrors[repo] is None:
            sys.exit(f"no mirror of {repo} at {commit} under {opts.cache}/git")
        h = cairn(["history", doc, "--lines", f"{n}:{n}"], opts)
        if h.get("missing") or not h.get("blame"):
            unrecorded.append(f"{doc}:{n}: {h.get('missing', 'no blame')}")
            continue
        got = h["blame"][0]["sha"]
        rc, porcelain = git(
            mirrors[repo], "blame", "--porcelain", "-L", f"{n},{n}", commit, "--", path
        )
        if rc != 0:
            disagree.append(f"{doc}:{n}: git blame failed")
            continue
        want = porcelain.split()[0] if porcelain.split() else ""
        boundary += "\nboundary\n" in porcelain
        if got == want:
            agree += 1
        else:
            why = why_differs(mirrors[repo], commit, path, n, got)
            disagree.append(f"{doc}:{n}: cairn {got[:12]}, git {want[:12]}" + (f" ({why})" if why else ""))

    print(f"files: {len(docs)} in {len(set(r for _, r, _, _ in docs))} repositories")
    print(f"pairs: {opts.pairs} (seed {opts.seed})")
    print(f"agree with git blame: {agree}")
    print(f"lines at a shallow history's boundary: {boundary}")
    print(f"disagree: {len(disagree)}")
    for d in disagree:
        print(f"  {d}")
    print(f"no recorded history: {len(unrecorded)}")
    for u in unrecorded:
        print(f"  {u}")
    print(f"seconds: {time.time() - started:.1f}")
    sys.exit(1 if disagree or unrecorded else 0)


if __name__ == "__main__":
    main()
