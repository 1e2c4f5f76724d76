#!/usr/bin/env bash
# Grep latency on an index of the shared corpus: cairn's grep (trigram file, then the
# line scan) against a brute-force scan, at 1x and with the content replicated 10x and
# 100x; then the same patterns through `cairn grep` against `git grep` on the same
# commits (matches compared, git grep's latency).
#   scripts/bench-grep.sh [INDEX]   (default: builds one under $CAIRN_BENCH_DIR or a temp dir)
set -euo pipefail
cd "$(dirname "$0")/.."
index="${1:-}"
cargo build --release --quiet -p cairn-search --example grep_bench
cargo build --release --quiet
if [ -z "$index" ]; then
  scripts/fetch-model.sh >/dev/null
  work="${CAIRN_BENCH_DIR:-$(mktemp -d)}"
  target/release/cairn build --config ../shared/corpus/repositories.yml --out "$work/index" --cache "$work/cache" >/dev/null
  index="$work/index"
fi
echo "machine: $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p'); $(date -u +%F)"
target/release/examples/grep_bench "$index" scripts/grep-patterns.txt 15
scripts/grep-vs-git.py "$index" ../shared/corpus scripts/grep-patterns.txt target/release/cairn
