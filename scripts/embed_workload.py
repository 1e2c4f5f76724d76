#!/usr/bin/env python3
"""The fixed embedding workload of scripts/bench-embed.sh: 2,000 consecutive
40-line windows of the corpus's .py/.md/.rst/.cpp/.h files at each mirror's
HEAD, repositories in sorted order, files in sorted path order. Each window is
cut to 256 model tokens by the embedders themselves (the model's limit).

usage: embed_workload.py CORPUS_DIR OUT.json [N]
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

EXTS = (".py", ".md", ".rst", ".cpp", ".h")


def git(repo, *args):
    return subprocess.run(["git", "--git-dir", repo, *args], check=True, capture_output=True).stdout


def main():
    corpus, out = sys.argv[1], sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 2000
    texts = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in sorted(os.listdir(corpus)):
            src = os.path.join(corpus, name)
            if not name.endswith(".git") or not os.path.isdir(src):
                continue
            # The shared mirrors are read-only and may lack refs/; git wants one.
            repo = os.path.join(tmp, name)
            shutil.copytree(src, repo)
            os.makedirs(os.path.join(repo, "refs", "heads"), exist_ok=True)
            os.makedirs(os.path.join(repo, "refs", "tags"), exist_ok=True)
            files = git(repo, "ls-tree", "-r", "--name-only", "HEAD").decode().splitlines()
            for path in sorted(f for f in files if f.endswith(EXTS)):
                text = git(repo, "show", f"HEAD:{path}").decode("utf-8", "replace")
                lines = text.splitlines()
                for i in range(0, len(lines), 40):
                    window = "\n".join(lines[i : i + 40])
                    if window.strip():
                        texts.append(window)
                if len(texts) >= n:
                    break
            if len(texts) >= n:
                break
    with open(out, "w") as f:
        json.dump(texts[:n], f)
    print(f"{len(texts[:n])} texts -> {out}")


if __name__ == "__main__":
    main()
