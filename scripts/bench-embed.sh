#!/usr/bin/env bash
# Embedder throughput, single-query latency and peak RSS on a fixed workload,
# side by side: candle's forward (the reference), cairn's CPU pass in f32 and
# at the best precision this CPU has (each compared with the reference), and,
# when a Python with sentence-transformers is at hand,
# sentence-transformers on PyTorch, all on this machine's cores in one run.
#
#   scripts/bench-embed.sh [N]          (N texts, default 2000)
#   TORCH_PYTHON=/path/to/venv/bin/python scripts/bench-embed.sh
#
# The workload: N consecutive 40-line windows of the shared corpus's
# .py/.md/.rst/.cpp/.h files at each mirror's HEAD, repositories in sorted
# order, each cut to 256 model tokens (scripts/embed_workload.py). Without
# TORCH_PYTHON the PyTorch run is skipped; make one with
#   python3 -m venv /tmp/torchvenv && /tmp/torchvenv/bin/pip install torch sentence-transformers
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-2000}"
work="${CAIRN_BENCH_DIR:-$(mktemp -d)}"
mkdir -p "$work"
scripts/fetch-model.sh >/dev/null
cargo build --release --quiet -p cairn-embed --example embed_bench
python3 scripts/embed_workload.py ../shared/corpus "$work/workload.json" "$n" >/dev/null
echo "machine: $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p'); $(date -u +%F)"
target/release/examples/embed_bench "$work/workload.json" --pass candle --out "$work/candle.f32"
target/release/examples/embed_bench "$work/workload.json" --pass f32 --compare "$work/candle.f32"
target/release/examples/embed_bench "$work/workload.json" --compare "$work/candle.f32" --out "$work/cairn.f32"
py="${TORCH_PYTHON:-}"
if [ -n "$py" ] && "$py" -c 'import sentence_transformers' 2>/dev/null; then
  hub="${HF_HOME:-$HOME/.cache/huggingface}/hub/models--sentence-transformers--all-MiniLM-L6-v2"
  snap="$hub/snapshots/$(cat "$hub/refs/main")"
  "$py" scripts/embed_torch.py "$snap" "$work/workload.json" "$work/cairn.f32" 2>/dev/null
else
  echo "pytorch: skipped (set TORCH_PYTHON to a python with sentence-transformers)"
fi
