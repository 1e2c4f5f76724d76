#!/usr/bin/env python3
"""Draw passages at random from an index version, to write golden/random.yaml from.

    scripts/draw-passages.py INDEX [SEED] > draws.txt

Seeded and stratified: each repository gets a fixed share of the draws (QUOTA),
split over its doctypes in proportion to the square root of their chunk counts
(so a repository's thousand code chunks do not crowd out its forty doc chunks,
and a doctype with a handful of chunks still gets drawn now and then). Tests
weigh half: people ask about the code a test exercises, rarely the test.

A draw is printed with its text; the question is written from that text alone,
before any search is run (docs/QUALITY.md has the whole procedure). Passages
under MIN_LINES lines are redrawn within the same stratum, since a heading or a
lone import line answers nothing. After each stratum's draws come SPARES more
from the same shuffled order, marked `spare`: a draw nobody would ask about (a
licence, a bibliography, a log, badges, an import block) is replaced by the
stratum's next spare, in order, so the choice of replacement is not ours. Reads only the version's files; needs no
cairn binary and no network.
"""

import json
import math
import os
import random
import sys

QUOTA = {
    "MulensModel": 17,
    "pyLIMA": 16,
    "dynesty": 16,
    "VBMicrolensing": 14,
    "emcee": 14,
    "RTModel": 12,
    "corner.py": 11,
}
DOCTYPE_WEIGHT = {"test": 0.5}
MIN_LINES = 5
SPARES = 8


def version_dir(root):
    with open(os.path.join(root, "CURRENT")) as f:
        return os.path.join(root, "versions", f.read().strip())


def split_quota(total, counts):
    """Largest-remainder split of `total` over doctypes by weighted sqrt(count)."""
    weights = {k: math.sqrt(v) * DOCTYPE_WEIGHT.get(k, 1.0) for k, v in counts.items()}
    norm = sum(weights.values())
    exact = {k: total * w / norm for k, w in weights.items()}
    share = {k: int(x) for k, x in exact.items()}
    left = total - sum(share.values())
    for k in sorted(exact, key=lambda k: exact[k] - share[k], reverse=True)[:left]:
        share[k] += 1
    return share


def main():
    root = sys.argv[1]
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 19
    vdir = version_dir(root)
    docs = json.load(open(os.path.join(vdir, "docs.json")))
    chunks = json.load(open(os.path.join(vdir, "chunks.json")))
    content = open(os.path.join(vdir, "content.bin"), "rb").read()
    rng = random.Random(seed)

    strata = {}
    for row, c in enumerate(chunks):
        d = docs[c["doc"]]
        strata.setdefault((d["repo"], d["doctype"]), []).append(row)

    n = 0
    for repo, total in QUOTA.items():
        counts = {dt: len(rows) for (r, dt), rows in strata.items() if r == repo}
        for doctype, k in sorted(split_quota(total, counts).items()):
            pool = sorted(strata[(repo, doctype)])
            rng.shuffle(pool)
            taken = 0
            for row in pool:
                if taken == k + SPARES:
                    break
                c = chunks[row]
                span = c["span"]
                if span["end"] - span["start"] + 1 < MIN_LINES:
                    continue
                d = docs[c["doc"]]
                text = content[d["content_offset"]: d["content_offset"] + d["size"]]
                lines = text.decode("utf-8", "replace").splitlines()
                taken += 1
                if taken <= k:
                    n += 1
                    label = f"draw {n:03}"
                else:
                    label = f"spare {taken - k}"
                print(f"=== {label} {repo} {doctype} {d['doc_id']} lines {span['start']}-{span['end']}")
                for i in range(span["start"], span["end"] + 1):
                    print(f"{i:5} {lines[i - 1][:160]}")
                print()


if __name__ == "__main__":
    main()
