#!/usr/bin/env python3
"""cairn grep against git grep on the same commits: the same (repository, path, line)
matches for every pattern of scripts/grep-patterns.txt, and git grep's latency.

    scripts/grep-vs-git.py INDEX CORPUS [PATTERNS] [CAIRN]

INDEX is an index root built from CORPUS/repositories.yml (the shared corpus:
bare mirrors beside it). Each mirror is read through a scratch repository that
borrows its objects (the mirrors are read-only). Prints one line per pattern
(matches, and any difference with the first few), then git grep's p50/p99 per
kind over the seven repositories, run one after another as one grep would.
Exits 1 when any pattern differs.
"""
import json, os, subprocess, sys, tempfile, time

index, corpus = sys.argv[1], sys.argv[2]
patterns_file = sys.argv[3] if len(sys.argv) > 3 else "scripts/grep-patterns.txt"
cairn = sys.argv[4] if len(sys.argv) > 4 else "target/release/cairn"
version = open(os.path.join(index, "CURRENT")).read().strip()
vdir = os.path.join(index, "versions", version)
manifest = json.load(open(os.path.join(vdir, "manifest.json")))
docs = json.load(open(os.path.join(vdir, "docs.json")))
# Notebooks aside: cairn matches their cells' decoded source, git grep their JSON.
indexed = {(d["repo"], d["path"]) for d in docs if not d["path"].endswith(".ipynb")}
repo_of_id = {d["doc_id"]: (d["repo"], d["path"]) for d in docs}

scratch = tempfile.mkdtemp(prefix="cairn-grep-vs-git-")
repos = []
for r in manifest["repos"]:
    mirror = os.path.join(corpus, r["url"])
    path = os.path.join(scratch, r["name"] + ".git")
    subprocess.run(["git", "init", "--bare", "-q", path], check=True)
    with open(os.path.join(path, "objects", "info", "alternates"), "w") as f:
        f.write(os.path.abspath(os.path.join(mirror, "objects")) + "\n")
    repos.append((r["name"], path, r["commit"]))

def git_grep(kind, pattern):
    found = set()
    for name, path, commit in repos:
        flag = "-E" if kind == "regex" else "-F"
        out = subprocess.run(["git", "-C", path, "grep", "-n", "-I", "--no-color", flag, "-e", pattern, commit],
                             capture_output=True, text=True, errors="replace").stdout
        for line in out.splitlines():
            parts = line.split(":", 3)
            if len(parts) >= 3 and (name, parts[1]) in indexed:
                found.add((name, parts[1], int(parts[2])))
    return found

def cairn_grep(kind, pattern):
    found, cursor = set(), None
    while True:
        cmd = [cairn, "grep", pattern, "--limit", "1000", "--json", "--index", index]
        if kind == "regex":
            cmd.append("--regex")
        if cursor:
            cmd += ["--cursor", cursor]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"cairn grep {pattern!r}: {r.stderr.strip()}")
        page = json.loads(r.stdout)
        for f in page["files"]:
            repo, path = repo_of_id[f["doc_id"]]
            if path.endswith(".ipynb"):
                continue
            for m in f["matches"]:
                found.add((repo, path, m["line"]))
        cursor = page.get("next_cursor")
        if not cursor:
            return found

patterns = [l.rstrip("\n").split("\t", 1) for l in open(patterns_file)
            if l.strip() and not l.startswith("#")]
differ = 0
timings = {}
for kind, pattern in patterns:
    want, got = git_grep(kind, pattern), cairn_grep(kind, pattern)
    ms = []
    for _ in range(5):
        t = time.perf_counter()
        git_grep(kind, pattern)
        ms.append((time.perf_counter() - t) * 1e3)
    timings.setdefault(kind, []).extend(ms)
    if want == got:
        print(f"same   {kind:<7} {len(got):>6} matches  {pattern}")
    else:
        differ += 1
        print(f"DIFFER {kind:<7} git {len(want)}, cairn {len(got)}  {pattern}")
        for x in sorted(want - got)[:3]:
            print("   only git:  ", x)
        for x in sorted(got - want)[:3]:
            print("   only cairn:", x)
def pct(v, p):
    v = sorted(v)
    return v[round((len(v) - 1) * p)]
for kind, ms in timings.items():
    print(f"git grep (7 repositories)  {kind:<8} p50 {pct(ms, 0.5):8.2f} ms   p99 {pct(ms, 0.99):8.2f} ms   ({len(ms)} runs)")
print(f"{len(patterns) - differ} of {len(patterns)} patterns give the same matches as git grep")
sys.exit(1 if differ else 0)
