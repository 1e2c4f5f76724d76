#!/usr/bin/env bash
# Builds ../shared/corpus with the real model from scratch, then again unchanged,
# and prints the figures recorded in docs/BENCHMARKS.md.
#   scripts/bench-build.sh [CONFIG]   (default ../shared/corpus/repositories.yml)
set -euo pipefail
cd "$(dirname "$0")/.."
config="${1:-../shared/corpus/repositories.yml}"
# CAIRN_BENCH_DIR keeps the index and caches for later runs (bench-search.sh, eval).
if [ -n "${CAIRN_BENCH_DIR:-}" ]; then
  work="$CAIRN_BENCH_DIR"; rm -rf "$work/index" "$work/cache"; mkdir -p "$work"
else
  work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
fi

scripts/fetch-model.sh >/dev/null
cargo build --release --quiet
bin=target/release/cairn

# Runs a command and prints its peak RSS (MiB) and wall time (s) on the last line of stderr.
measure() {
  python3 scripts/measure.py "$@"
}

echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB, $(lscpu | sed -n 's/^Model name: *//p'); $(date -u +%F)"
echo "config: $config"
for run in first second; do
  CAIRN_LOG=warn measure "$bin" build --config "$config" --out "$work/index" --cache "$work/cache" --json \
    >"$work/$run.json" 2>"$work/$run.err"
done
python3 - "$work" <<'PY'
import json, sys
def run(name):
    s = json.load(open(f"{sys.argv[1]}/{name}.json"))
    m = [l for l in open(f"{sys.argv[1]}/{name}.err") if l.startswith("MEASURE")][-1].split()
    return s, dict(x.split("=") for x in m[1:])
s, kv = run("first")
print(f"docs            {s['docs']}")
print(f"chunks          {s['chunks']}")
print(f"skipped         " + ", ".join(f"{k} {v}" for k, v in s['skipped_by_reason'].items()))
print(f"embedded        {s['embedded']} chunks, {s['embedded_tokens']} tokens in {s['embed_seconds']:.1f} s")
print(f"embedding       {s['chunks_per_second']:.1f} chunks/s, {s['tokens_per_second']:.0f} tokens/s")
print(f"full build      {kv['wall_s']} s wall, peak RSS {kv['peak_rss_mib']} MiB")
print(f"index size      {s['index_bytes'] / 2**20:.1f} MiB")
s, kv = run("second")
print(f"unchanged build {kv['wall_s']} s wall (unchanged={s['unchanged']}, embedded {s['embedded']})")
PY
"$bin" verify --index "$work/index"
