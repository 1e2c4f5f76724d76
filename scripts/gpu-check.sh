#!/usr/bin/env bash
# The GPU path, checked and measured in one command on a machine with an
# NVIDIA GPU (docs/OPERATIONS.md, "On a GPU"; figures go in docs/BENCHMARKS.md):
#
#   scripts/gpu-check.sh OUT_DIR
#
# 1. what `cairn doctor` sees;
# 2. the GPU tests: the fixture model and all-MiniLM-L6-v2 on `--device cuda`
#    against the CPU f32 pass (CAIRN_REQUIRE_GPU=1: a missing GPU fails them);
# 3. scripts/bench-embed.sh with its cuda rows (cairn and PyTorch on this GPU);
# 4. a cold build of the shared corpus with `--device cuda`: wall time,
#    tokens/s, peak host memory, peak GPU memory, and its index_version
#    against a CPU build's;
# 5. the golden questions on the GPU-built version against the CPU-built one.
#
# It writes OUT_DIR/gpu-check.md (the figures) and the raw outputs beside it.
#
# Environment:
#   CAIRN_GPU_BIN      a folder holding cairn, embed_bench and embed-tests, all
#                      built with --features cuda (scripts/gpu-bundle.sh makes
#                      one); default: built here with cargo
#   CAIRN_CORPUS       the corpus (default ../shared/corpus)
#   CAIRN_GOLDEN       golden questions (default ../shared/golden/queries.yaml)
#   CAIRN_BENCH_WORKLOAD  bench-embed's workload, made beforehand (optional)
#   CAIRN_CPU_VERSION  the index_version a CPU build of this corpus published;
#   CAIRN_CPU_EVAL     and `cairn eval --json` of it. Without them a CPU build
#                      runs here as well (minutes more).
#   TORCH_PYTHON       a python with torch (CUDA) and sentence-transformers
#                      (default python3)
set -euo pipefail
cd "$(dirname "$0")/.."
out="$(mkdir -p "${1:?usage: gpu-check.sh OUT_DIR}" && cd "$1" && pwd)"
corpus="$(cd "${CAIRN_CORPUS:-../shared/corpus}" && pwd)"
golden="${CAIRN_GOLDEN:-../shared/golden/queries.yaml}"
work="$(mktemp -d)"
pid=""
# The GPU-memory sampler and the scratch indexes go whatever ends the run.
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$work"' EXIT
report="$out/gpu-check.md"
: >"$report"
say() { echo "$*" | tee -a "$report"; }

bin="${CAIRN_GPU_BIN:-}"
if [ -z "$bin" ]; then
  cargo build --release --quiet --features cuda --bin cairn
  cargo build --release --quiet -p cairn-embed --features cuda --example embed_bench
  tests="$(cargo test --release -p cairn-embed --features cuda --lib --no-run --message-format=json 2>/dev/null |
    python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["kind"] == ["lib"]:
        print(m["executable"])' | tail -1)"
  bin="$work/bin"
  mkdir -p "$bin"
  cp target/release/cairn target/release/examples/embed_bench "$bin/"
  cp "$tests" "$bin/embed-tests"
fi
bin="$(cd "$bin" && pwd)"

# Runs a command; its last line of stderr says its wall time and peak RSS.
timed() {
  python3 scripts/measure.py "$@"
}

# Samples the GPU's used memory every 100 ms into $1 until stopped.
sample_gpu() { nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 100 >"$1" 2>/dev/null & echo $!; }
peak_mib() { sort -n "$1" | tail -1; }

say "# GPU check, $(date -u +%F)"
say ""
say "- GPU: $(nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv,noheader)"
say "- CPU: $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p')"
say "- cairn: $("$bin/cairn" --version)"
say ""
say "## doctor"
"$bin/cairn" doctor --index "$work/no-index" | grep -E '^(ok|warn|FAIL) +(gpu|cpu|model) ' | sed 's/^/    /' | tee -a "$report" || true

say ""
say "## GPU tests (CAIRN_REQUIRE_GPU=1)"
CAIRN_REQUIRE_GPU=1 "$bin/embed-tests" gpu:: --test-threads 1 >"$out/gpu-tests.log" 2>&1 ||
  say "    GPU TESTS FAILED (see gpu-tests.log)"
{ grep -E '^test |test result' "$out/gpu-tests.log" || true; } | sed 's/^/    /' | tee -a "$report"

say ""
say "## bench-embed (2,000 texts)"
CAIRN_BENCH_CUDA=1 CAIRN_BENCH_CPU="${CAIRN_BENCH_CPU:-f32}" EMBED_BENCH="$bin/embed_bench" \
  CAIRN_BENCH_DIR="$work/bench" TORCH_PYTHON="${TORCH_PYTHON:-python3}" \
  scripts/bench-embed.sh >"$out/bench-embed.log" 2>&1 || say "    BENCH FAILED (see bench-embed.log)"
sed 's/^/    /' "$out/bench-embed.log" | tee -a "$report"

say ""
say "## cold build of the shared corpus with --device cuda"
pid="$(sample_gpu "$work/gpu-mem")"
idle="$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | head -1)"
timed "$bin/cairn" build --config "$corpus/repositories.yml" --out "$work/gpu-index" \
  --cache "$work/gpu-cache" --device cuda --json >"$out/build-gpu.json" 2>"$work/build-gpu.err" || {
  tail -20 "$work/build-gpu.err" | tee -a "$report"
  exit 1
}
kill "$pid" 2>/dev/null || true
say "    $(tail -1 "$work/build-gpu.err"); GPU memory peak $(peak_mib "$work/gpu-mem") MiB (idle $idle MiB)"
python3 - "$out/build-gpu.json" <<'PY' | tee -a "$report"
import json, sys
s = json.load(open(sys.argv[1]))
print(f"    index_version {s['index_version']}: {s['embedded']} chunks embedded, "
      f"{s['embedded_tokens']} tokens in {s['embed_seconds']:.1f} s of model time "
      f"({s['tokens_per_second']:.0f} tokens/s); build {s['wall_seconds']:.1f} s")
PY
gpu_version="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["index_version"])' "$out/build-gpu.json")"

cpu_version="${CAIRN_CPU_VERSION:-}"
cpu_eval="${CAIRN_CPU_EVAL:-}"
if [ -z "$cpu_version" ]; then
  say ""
  say "## the same build on the CPU"
  timed "$bin/cairn" build --config "$corpus/repositories.yml" --out "$work/cpu-index" \
    --cache "$work/cpu-cache" --device cpu --json >"$out/build-cpu.json" 2>"$work/build-cpu.err"
  say "    $(tail -1 "$work/build-cpu.err")"
  cpu_version="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["index_version"])' "$out/build-cpu.json")"
  "$bin/cairn" eval "$golden" --index "$work/cpu-index" --json >"$out/eval-cpu.json"
  cpu_eval="$out/eval-cpu.json"
fi
if [ "$gpu_version" = "$cpu_version" ]; then
  say "    index_version equals the CPU build's ($cpu_version)"
else
  say "    index_version DIFFERS: GPU $gpu_version, CPU $cpu_version"
fi

say ""
say "## golden questions on the GPU-built version"
"$bin/cairn" eval "$golden" --index "$work/gpu-index" --json >"$out/eval-gpu.json"
python3 - "$out/eval-gpu.json" "${cpu_eval:-}" <<'PY' | sed 's/^/    /' | tee -a "$report"
import json, sys
gpu = {r["mode"]: r for r in json.load(open(sys.argv[1]))}
cpu = {r["mode"]: r for r in json.load(open(sys.argv[2]))} if len(sys.argv) > 2 and sys.argv[2] else {}
for mode, r in gpu.items():
    m = r["overall"]
    line = f"{mode}: " + ", ".join(f"{k} {v:.3f}" for k, v in m.items() if isinstance(v, float))
    if mode in cpu:
        c = {o["id"]: o for o in cpu[mode]["outcomes"]}
        moved = [o["id"] for o in r["outcomes"] if o["id"] in c and
                 (o["first_relevant"] != c[o["id"]]["first_relevant"])]
        reordered = [o["id"] for o in r["outcomes"] if o["id"] in c and o["top"] != c[o["id"]]["top"]]
        cm = cpu[mode]["overall"]
        line += "; CPU build: " + ", ".join(f"{k} {v:.3f}" for k, v in cm.items() if isinstance(v, float))
        line += f"; questions whose first relevant hit moved: {len(moved)} {moved[:10]}"
        line += f"; whose top hits changed at all: {len(reordered)}"
    print(line)
PY
say ""
say "raw outputs: $out"
