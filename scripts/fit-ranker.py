#!/usr/bin/env python3
"""Fits a learned reranker over the hybrid search's first 30 candidates and
says, by k-fold cross-validation, what it is worth on questions the fit did
not see (issue 29's "learned fusion" lever).

    scripts/fit-ranker.py INDEX [CAIRN_BINARY]   (default target/release/cairn)

For each golden file it runs `cairn eval FILE --mode hybrid --features F`,
which writes every question's first 30 candidates with general features: the
fusion's parts (RRF, BM25, cosine), each candidate list's rank of it, the
priors, doctype, span length, path depth, how the question's words meet the
title, path and lines, definitions in the span, and the question's form. The
model is linear and pairwise (RankNet's logistic loss on every relevant /
non-relevant pair of a question, L2, full-batch gradient descent on
standardised features, the search's own 1/rank among them, so "change
nothing" is in reach). Pure Python: no package to install.

The four ranked files (queries, heldout, random, users) are pooled and cut
into 5 fixed folds by a hash of each question's id; each fold is scored by
a model fitted on the other four. papers.yaml is scored by the model fitted
on all four files (it is never trained on). Every figure printed for the
reranker is held out; the search's own order is scored on the same
questions and candidates, per file and per question kind. The last line is
one JSON object with both.
"""
import hashlib
import json
import math
import os
import subprocess
import sys
import tempfile

FILES = ["queries", "heldout", "random", "users"]
EXTRA = ["papers"]
FOLDS = 5
L2 = 0.01
STEPS = 300
RATE = 0.5


def candidates(binary, index, name, folder):
    """{question id: (kind, [(rank, relevant, {feature: value})])} of one file."""
    out_path = os.path.join(folder, name + ".jsonl")
    subprocess.run(
        [binary, "eval", f"golden/{name}.yaml", "--index", index, "--mode", "hybrid",
         "--features", out_path],
        check=True, stdout=subprocess.DEVNULL)
    questions = {}
    with open(out_path) as f:
        for line in f:
            r = json.loads(line)
            feats = dict(r["features"])
            feats["inv_rank"] = 1.0 / r["rank"]
            q = questions.setdefault(r["id"], (r["kind"], []))
            q[1].append((r["rank"], r["relevant"], feats))
    return questions


def fold_of(qid):
    return int(hashlib.sha256(qid.encode()).hexdigest(), 16) % FOLDS


def fit(questions, names):
    """Weights of a pairwise linear model, and the standardisation used."""
    rows = [f for _, cands in questions for _, _, f in cands]
    mean = {n: sum(r[n] for r in rows) / len(rows) for n in names}
    sd = {n: math.sqrt(sum((r[n] - mean[n]) ** 2 for r in rows) / len(rows)) or 1.0
          for n in names}
    z = lambda f: [(f[n] - mean[n]) / sd[n] for n in names]
    pairs = []
    for _, cands in questions:
        pos = [z(f) for _, rel, f in cands if rel]
        neg = [z(f) for _, rel, f in cands if not rel]
        for p in pos:
            for n in neg:
                pairs.append([a - b for a, b in zip(p, n)])
    w = [0.0] * len(names)
    if not pairs:
        return w, mean, sd
    for _ in range(STEPS):
        grad = [L2 * x for x in w]
        for d in pairs:
            s = sum(a * b for a, b in zip(w, d))
            g = -1.0 / (1.0 + math.exp(min(s, 50.0)))  # d/ds log(1 + e^-s)
            for i, x in enumerate(d):
                grad[i] += g * x / len(pairs)
        w = [a - RATE * b for a, b in zip(w, grad)]
    return w, mean, sd


def first_relevant(cands, key):
    ordered = sorted(cands, key=key)
    for i, (_, rel, _) in enumerate(ordered):
        if rel:
            return i + 1
    return None


def scores(ranks):
    n = max(len(ranks), 1)
    recall = sum(1 for r in ranks if r is not None and r <= 5) / n
    mrr = sum(1.0 / r for r in ranks if r is not None and r <= 10) / n
    return round(recall, 3), round(mrr, 3)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    index = sys.argv[1]
    binary = sys.argv[2] if len(sys.argv) > 2 else "target/release/cairn"
    folder = tempfile.mkdtemp(prefix="cairn-ranker-")
    data = {name: candidates(binary, index, name, folder) for name in FILES + EXTRA}
    names = sorted(next(iter(next(iter(data["queries"].values()))[1]))[2])
    pooled = [(name, qid, kind, cands) for name in FILES
              for qid, (kind, cands) in data[name].items()]
    model_rank = {}
    for k in range(FOLDS):
        train = [(kind, c) for _, qid, kind, c in pooled if fold_of(qid) != k]
        w, mean, sd = fit(train, names)
        score = lambda f: sum(wi * (f[n] - mean[n]) / sd[n] for wi, n in zip(w, names))
        for name, qid, kind, cands in pooled:
            if fold_of(qid) == k:
                model_rank[(name, qid)] = first_relevant(
                    cands, lambda c: (-score(c[2]), c[0]))
    w, mean, sd = fit([(kind, c) for _, _, kind, c in pooled], names)
    score = lambda f: sum(wi * (f[n] - mean[n]) / sd[n] for wi, n in zip(w, names))
    for name in EXTRA:
        for qid, (kind, cands) in data[name].items():
            model_rank[(name, qid)] = first_relevant(cands, lambda c: (-score(c[2]), c[0]))
    result = {"searched": {}, "reranked_held_out": {}, "moved": {}, "by_kind": {}}
    for name in FILES + EXTRA:
        base, model = [], []
        moved = []
        kinds = {}
        for qid, (kind, cands) in sorted(data[name].items()):
            b = first_relevant(cands, lambda c: c[0])
            m = model_rank[(name, qid)]
            base.append(b)
            model.append(m)
            pair = kinds.setdefault(kind, ([], []))
            pair[0].append(b)
            pair[1].append(m)
            if b != m:
                moved.append(f"{qid} {b or '-'}→{m or '-'}")
        result["searched"][name] = scores(base)
        result["reranked_held_out"][name] = scores(model)
        result["moved"][name] = moved
        result["by_kind"][name] = {
            k: [len(b), scores(b), scores(m)] for k, (b, m) in sorted(kinds.items())}
        print(f"{name:8} searched {scores(base)}  reranked (held out) {scores(model)}"
              f"  moved {len(moved)}")
        for k, (n, b, m) in result["by_kind"][name].items():
            print(f"    {k:8} ({n}) searched {b}  reranked {m}")
        for m in moved:
            print("    " + m)
    print("weights fitted on all four files (standardised features):")
    for wi, n in sorted(zip(w, names), key=lambda x: -abs(x[0])):
        print(f"    {n:16} {wi:+.3f}")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
