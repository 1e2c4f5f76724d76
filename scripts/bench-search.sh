#!/usr/bin/env bash
# Search latency (query embedding included) and retrieve latency, one call at a time,
# on an index of the shared corpus.
#   scripts/bench-search.sh [INDEX]   (default: builds one under $CAIRN_BENCH_DIR or a temp dir)
set -euo pipefail
cd "$(dirname "$0")/.."
index="${1:-}"
scripts/fetch-model.sh >/dev/null
cargo build --release --quiet -p cairn-search --example bench_search
if [ -z "$index" ]; then
  work="${CAIRN_BENCH_DIR:-$(mktemp -d)}"
  cargo build --release --quiet
  target/release/cairn build --config ../shared/corpus/repositories.yml --out "$work/index" --cache "$work/cache" >/dev/null
  index="$work/index"
fi
echo "machine: $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p'); $(date -u +%F)"
target/release/examples/bench_search "$index" golden/queries.yaml 8
