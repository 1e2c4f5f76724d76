#!/usr/bin/env bash
# Builds what scripts/gpu-check.sh runs, with --features cuda, into one folder
# that can be copied to a GPU machine with no Rust toolchain:
#
#   scripts/gpu-bundle.sh DIR      (DIR/cairn, DIR/embed_bench, DIR/embed-tests)
#
# Where no nvcc is on PATH, scripts/cuda-toolkit.sh provides CUDA 13.0 from
# PyPI. The binaries need, on the GPU machine, NVIDIA's driver (libcuda.so.1)
# and CUDA 13's libcudart, libcublas, libcublasLt, libcurand and libnvrtc on
# the library path (a CUDA 13 toolkit, or PyTorch's nvidia-* wheels).
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${1:?usage: gpu-bundle.sh DIR}"
if ! command -v nvcc >/dev/null; then
  cuda_env="$(scripts/cuda-toolkit.sh)"
  eval "$cuda_env"
fi
cargo build --release --features cuda --bin cairn
cargo build --release -p cairn-embed --features cuda --example embed_bench
tests="$(cargo test --release -p cairn-embed --features cuda --lib --no-run --message-format=json |
  python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["kind"] == ["lib"]:
        print(m["executable"])' | tail -1)"
mkdir -p "$dir"
cp target/release/cairn target/release/examples/embed_bench "$dir/"
cp "$tests" "$dir/embed-tests"
strip "$dir"/*
ls -la "$dir"
