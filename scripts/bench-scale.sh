#!/usr/bin/env bash
# How the vector stage of a search grows with the corpus: 1x, 10x and 100x
# the rows of INDEX (synthetic copies with seeded noise, over synthetic
# repositories, 5 % of documents public), exact scan against the inverted lists,
# for a caller who sees everything and one who sees the public 5 %.
#   scripts/bench-scale.sh INDEX [FACTORS]   (default FACTORS: "1 10 100")
# Work goes under $CAIRN_BENCH_DIR (default a temp dir; 100x needs ~12 GB of
# disk and ~6 GB of memory while the lists are built). The last line is one
# JSON object: {"scales": [{"factor", "rows", "p50_ms", "p99_ms",
# "recall_at_10", "recall_at_10_restricted", "rss_mb", …}, …]}.
set -euo pipefail
cd "$(dirname "$0")/.."
index="${1:?usage: scripts/bench-scale.sh INDEX [FACTORS]}"
factors="${2:-1 10 100}"
work="${CAIRN_BENCH_DIR:-$(mktemp -d)}"
scripts/fetch-model.sh >/dev/null
cargo build --release --quiet -p cairn-search --example bench_scale
bench=target/release/examples/bench_scale
echo "machine: $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p'); $(date -u +%F)"
lines=()
for f in $factors; do
  dir="$work/x$f"
  [ -f "$dir/make.json" ] || "$bench" make "$index" "$f" "$dir" >/dev/null
  exact="$("$bench" run "$dir" golden/random.yaml exact)"
  ann="$("$bench" run "$dir" golden/random.yaml ann)"
  echo "exact $exact"
  echo "ann   $ann"
  lines+=("$(python3 - "$exact" "$ann" <<'PY'
import json, sys
exact, ann = (json.loads(a) for a in sys.argv[1:3])
def scale(d, other):
    a, r = d["callers"]["all"], d["callers"]["restricted"]
    return {"factor": d["factor"], "rows": d["rows"], "mode": d["mode"],
            "p50_ms": round(a["p50_ms"], 2), "p99_ms": round(a["p99_ms"], 2),
            "p50_ms_restricted": round(r["p50_ms"], 2), "p99_ms_restricted": round(r["p99_ms"], 2),
            "recall_at_10": round(a["recall_at_10"], 4), "recall_at_10_restricted": round(r["recall_at_10"], 4),
            "rss_mb": round(d["rss_search_mb"]), "rss_anon_mb": round(d["rss_anon_mb"]), "f32_mb": round(d["f32_mb"]),
            "ann_mb": round(d["ann_mb"]), "ann_build_s": round(d["ann_build_s"], 1)}
print(json.dumps([scale(exact, ann), scale(ann, exact)]))
PY
)")
done
python3 - "${lines[@]}" <<'PY'
import json, sys
scales = [s for a in sys.argv[1:] for s in json.loads(a)]
print(json.dumps({"scales": scales}))
PY
