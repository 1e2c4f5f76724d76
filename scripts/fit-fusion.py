#!/usr/bin/env python3
"""Fits the fusion's list shares and says, by k-fold cross-validation, what
that is worth on questions the fit did not see.

    scripts/fit-fusion.py INDEX [CAIRN_BINARY]   (default target/release/cairn)

For every combination of multipliers on a small grid (BM25, chunk vectors,
subchunk vectors, identifier lists: `cairn eval --fusion b,v,s,i`), it runs
`cairn eval --json` on the four golden files once and keeps each question's
rank of its first relevant hit. Then, over 5 folds of the pooled questions
(assigned by a hash of the id, so the split is fixed), it picks on four folds
the combination with the best sum over files of recall@5 + MRR@10 (the keep
rule's objective), and scores it on the fifth. The figures printed for the
fitted fusion are held-out figures only; the default (1,1,1,1) is scored on
the same questions, per file and per question kind. Its last line is one
JSON object with both.
"""
import hashlib
import itertools
import json
import subprocess
import sys

FILES = ["queries", "heldout", "random", "users"]
GRID = [0.5, 1.0, 2.0]
FOLDS = 5


KINDS = {}


def ranks(binary, index, fusion):
    """{(file, id): rank or None} for one combination (and each question's kind in KINDS)."""
    out = {}
    for f in FILES:
        res = subprocess.run(
            [binary, "eval", f"golden/{f}.yaml", "--index", index, "--mode", "hybrid",
             "--json", "--fusion", ",".join(map(str, fusion))],
            capture_output=True, text=True, check=True)
        report = json.loads(res.stdout)[0]
        for o in report["outcomes"]:
            if o["kind"] != "guard":
                out[(f, o["id"])] = o["first_relevant"]
                KINDS[(f, o["id"])] = o["kind"]
    return out


def score(per, keys):
    """Sum over files of recall@5 + MRR@10 on `keys`, and the per-file figures."""
    total, table = 0.0, {}
    for f in FILES:
        ks = [k for k in keys if k[0] == f]
        if not ks:
            continue
        r5 = sum(1 for k in ks if per[k] is not None and per[k] <= 5) / len(ks)
        mrr = sum(1 / per[k] for k in ks if per[k] is not None and per[k] <= 10) / len(ks)
        table[f] = (len(ks), round(r5, 3), round(mrr, 3))
        total += r5 + mrr
    return total, table


def fold(key):
    return int(hashlib.sha256(f"{key[0]}/{key[1]}".encode()).hexdigest(), 16) % FOLDS


def main():
    index = sys.argv[1]
    binary = sys.argv[2] if len(sys.argv) > 2 else "target/release/cairn"
    combos = list(itertools.product(GRID, repeat=4))
    runs = {}
    for i, c in enumerate(combos):
        runs[c] = ranks(binary, index, c)
        print(f"  {i + 1}/{len(combos)} {c}", file=sys.stderr)
    keys = sorted(runs[combos[0]])
    default = (1.0, 1.0, 1.0, 1.0)
    held = {}
    chosen = []
    for k in range(FOLDS):
        train = [q for q in keys if fold(q) != k]
        test = [q for q in keys if fold(q) == k]
        best = max(combos, key=lambda c: (score(runs[c], train)[0], c == default))
        chosen.append(best)
        for q in test:
            held[q] = runs[best][q]
    _, fitted = score(held, keys)
    _, base = score(runs[default], keys)
    whole = max(combos, key=lambda c: (score(runs[c], keys)[0], c == default))
    print("| file | questions | default recall@5 / MRR@10 | fitted, held out |")
    print("| --- | --- | --- | --- |")
    for f in FILES:
        n, r, m = base[f]
        _, r2, m2 = fitted[f]
        print(f"| {f} | {n} | {r:.3f} / {m:.3f} | {r2:.3f} / {m2:.3f} |")
    by_kind = {}
    for f in FILES:
        for kind in sorted({KINDS[q] for q in keys if q[0] == f}):
            ks = [q for q in keys if q[0] == f and KINDS[q] == kind]
            _, b = score(runs[default], ks)
            _, h = score(held, ks)
            by_kind.setdefault(f, {})[kind] = [b[f], h[f]]
            print(f"  {f} {kind}: default {b[f]}  fitted, held out {h[f]}")
    print(f"chosen per fold: {chosen}; on all questions: {whole}")
    print(json.dumps({"default": base, "held_out": fitted, "folds": chosen, "all": whole,
                      "by_kind": by_kind}))


if __name__ == "__main__":
    main()
