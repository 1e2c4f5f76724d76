#!/usr/bin/env bash
# Embedder throughput, single-query latency and peak RSS on a fixed workload,
# side by side: candle's forward (the reference), cairn's CPU pass in f32 and
# at the best precision this CPU has (each compared with the reference), and,
# when a Python with sentence-transformers is at hand,
# sentence-transformers on PyTorch, all on this machine's cores in one run.
# With CAIRN_BENCH_CUDA=1, the same on the first NVIDIA GPU too: cairn's
# `--device cuda` pass (f32, and with TF32 products for comparison) and PyTorch
# on that GPU in f32 and f16.
#
#   scripts/bench-embed.sh [N]          (N texts, default 2000)
#   TORCH_PYTHON=/path/to/venv/bin/python scripts/bench-embed.sh
#   CAIRN_BENCH_CUDA=1 TORCH_PYTHON=python3 scripts/bench-embed.sh
#
# On the CPU it runs cairn's f32 pass, the AVX-512 BF16 pass and the AMX pass
# where the CPU has them, and PyTorch in f32 and under bf16 autocast; the last
# lines give each row's throughput as a ratio to the best PyTorch row.
#
# The workload: N consecutive 40-line windows of the shared corpus's
# .py/.md/.rst/.cpp/.h files at each mirror's HEAD, repositories in sorted
# order, each cut to 256 model tokens (scripts/embed_workload.py). Without
# TORCH_PYTHON the PyTorch run is skipped; make one with
#   python3 -m venv /tmp/torchvenv && /tmp/torchvenv/bin/pip install torch sentence-transformers
# Where cargo is absent (a GPU machine that only runs what was built
# elsewhere), EMBED_BENCH names a built embed_bench and CAIRN_BENCH_WORKLOAD a
# workload made beforehand; CAIRN_CORPUS is the corpus (default ../shared/corpus).
# CAIRN_BENCH_CPU=f32 keeps only the CPU f32 pass (the GPU's reference) of
# the CPU rows, where machine time is short.
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-2000}"
work="${CAIRN_BENCH_DIR:-$(mktemp -d)}"
mkdir -p "$work"
cuda="${CAIRN_BENCH_CUDA:-0}"
bench="${EMBED_BENCH:-}"
if [ -z "$bench" ]; then
  scripts/fetch-model.sh >/dev/null
  features=()
  [ "$cuda" = 1 ] && features=(--features cuda)
  cargo build --release --quiet -p cairn-embed --example embed_bench "${features[@]}"
  bench=target/release/examples/embed_bench
fi
if [ -n "${CAIRN_BENCH_WORKLOAD:-}" ]; then
  cp "$CAIRN_BENCH_WORKLOAD" "$work/workload.json"
else
  python3 scripts/embed_workload.py "${CAIRN_CORPUS:-../shared/corpus}" "$work/workload.json" "$n" >/dev/null
fi
# Every row, also kept for the ratios at the end.
rows() {
  echo "machine: $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p'); $(date -u +%F)"
  if [ "$cuda" = 1 ]; then
    echo "gpu: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader)"
  fi
  cpu_rows="${CAIRN_BENCH_CPU:-all}"
  if [ "$cpu_rows" = all ]; then
    "$bench" "$work/workload.json" --pass candle --out "$work/candle.f32"
    "$bench" "$work/workload.json" --pass f32 --compare "$work/candle.f32" --out "$work/cpu.f32"
    # Each faster pass the CPU has, against the f32 pass (the tests' reference).
    for pass in bf16 amx; do
      "$bench" "$work/workload.json" --pass "$pass" --compare "$work/cpu.f32" 2>/dev/null ||
        echo "cairn ($pass): this CPU lacks it"
    done
    "$bench" "$work/workload.json" --compare "$work/candle.f32" --out "$work/cairn.f32"
  else
    "$bench" "$work/workload.json" --pass f32 --out "$work/cpu.f32"
    cp "$work/cpu.f32" "$work/cairn.f32"
  fi
  if [ "$cuda" = 1 ]; then
    # Against the CPU f32 pass: what --device cuda changes in a build's vectors.
    "$bench" "$work/workload.json" --pass cuda --compare "$work/cpu.f32" --out "$work/cuda.f32"
    "$bench" "$work/workload.json" --pass cuda-tf32 --compare "$work/cpu.f32"
  fi
  py="${TORCH_PYTHON:-}"
  if [ -n "$py" ] && "$py" -c 'import sentence_transformers' 2>/dev/null; then
    hub="${HF_HOME:-$HOME/.cache/huggingface}/hub/models--sentence-transformers--all-MiniLM-L6-v2"
    snap="$hub/snapshots/$(cat "$hub/refs/main")"
    if [ "$cpu_rows" = all ]; then
      "$py" scripts/embed_torch.py "$snap" "$work/workload.json" "$work/cairn.f32" 2>/dev/null
      TORCH_AUTOCAST=bf16 "$py" scripts/embed_torch.py "$snap" "$work/workload.json" "$work/cairn.f32" 2>/dev/null
    fi
    if [ "$cuda" = 1 ]; then
      TORCH_DEVICE=cuda "$py" scripts/embed_torch.py "$snap" "$work/workload.json" "$work/cuda.f32" 2>/dev/null
      TORCH_DEVICE=cuda TORCH_DTYPE=float16 "$py" scripts/embed_torch.py "$snap" "$work/workload.json" "$work/cuda.f32" 2>/dev/null
    fi
  else
    echo "pytorch: skipped (set TORCH_PYTHON to a python with sentence-transformers)"
  fi
}
rows | tee "$work/rows.txt"
# Each row's throughput as a ratio to the best PyTorch row of this run.
python3 - "$work/rows.txt" <<'PY'
import re, sys
rows = [l for l in open(sys.argv[1]) if "tokens/s" in l]
rate = lambda l: float(re.search(r"([0-9.]+) tokens/s", l).group(1))
torch = [rate(l) for l in rows if l.startswith("pytorch") and "(cpu" in l]
if torch:
    best = max(torch)
    print(f"ratios to the best PyTorch CPU row ({best:.0f} tokens/s):")
    for l in rows:
        print(f"  {rate(l) / best:.2f}x  {l.split(':')[0]}")
PY
