#!/usr/bin/env bash
# What `cargo build --features cuda` needs, on a machine with no GPU and no
# system CUDA: NVIDIA's CUDA 13.0 compiler, headers and runtime libraries from
# their PyPI packages, unpacked into target/cuda, and a link-time stand-in for
# the driver library. Prints the build's environment on stdout:
#
#   cuda_env="$(scripts/cuda-toolkit.sh)" && eval "$cuda_env" && cargo build --release --features cuda
#
# (an assignment first, so a failure here stops a `set -e` script; `eval
# "$(…)"` alone would go on without the environment).
#
# Why each part:
# - CUDA 13.0, pinned: candle builds its kernels to PTX at build time, and a
#   driver loads PTX only from a compiler no newer than itself; 13.0 is what
#   the R580 drivers (the oldest with CUDA 13) run, and newer drivers run it too.
# - candle links cudarc with `dynamic-linking`: the binary names libcuda.so.1,
#   libcudart.so.13, libcublas(Lt).so.13, libcurand.so.10 and libnvrtc.so.13,
#   so the linker needs each. All but libcuda come from PyPI as they are.
# - libcuda.so.1 ships only with NVIDIA's driver (the CUDA toolkit carries a
#   stub of it for linking, which no PyPI package does). The stand-in made here
#   is that stub: a library with the driver's soname that defines every driver
#   function cudarc declares, each returning CUDA_ERROR_STUB_LIBRARY (34). It
#   is for the linker only and is never installed or put on a library path;
#   at run time the real driver's libcuda.so.1 is loaded.
#
# The compute capability the kernels are built for: CUDA_COMPUTE_CAP if set,
# else the first GPU's (nvidia-smi), else 90 (Hopper: H100, H200). PTX built
# for N runs on capability N and newer.
set -euo pipefail
cd "$(dirname "$0")/.."

# One pinned set (CUDA 13.0 update 2); bump together.
WHEELS=(
  nvidia-cuda-nvcc==13.0.88
  nvidia-nvvm==13.0.88
  nvidia-cuda-crt==13.0.88
  nvidia-cuda-cccl==13.0.85
  nvidia-cuda-runtime==13.0.96
  nvidia-cuda-nvrtc==13.0.88
  nvidia-curand==10.4.0.35
  nvidia-cublas==13.0.2.14
)
root="$PWD/target/cuda"
toolkit="$root/site/nvidia/cu13"
stamp="$root/complete-$(printf '%s\n' "${WHEELS[@]}" | sha256sum | cut -c1-16)"

say() { echo "cuda-toolkit: $*" >&2; }

# The driver functions cudarc may call, from cudarc's own declarations: the
# stand-in must define every symbol the link can need, and only cudarc names them.
driver_symbols() {
  local manifest
  manifest="$(cargo metadata --format-version 1 --all-features --locked 2>/dev/null |
    python3 -c '
import json, sys
meta = json.load(sys.stdin)
paths = [p["manifest_path"] for p in meta["packages"]
         if p["name"] == "cudarc" and p["version"].startswith("0.19.")]
print(paths[0] if paths else "")')"
  if [ -z "$manifest" ]; then
    say "cudarc 0.19 is not in Cargo.lock's cuda build; update the pin here with candle"
    return 1
  fi
  grep -oE 'load::<_F>\("cu[A-Za-z0-9_]+"\)' "$(dirname "$manifest")/src/driver/sys/mod.rs" |
    sed -E 's/.*\("(.*)"\)/\1/' | sort -u
}

install() {
  rm -rf "$root"
  mkdir -p "$root/wheels" "$root/site"
  say "downloading ${#WHEELS[@]} NVIDIA wheels from PyPI (about 700 MB)"
  python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
    --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    --platform manylinux_2_12_x86_64 --platform manylinux2010_x86_64 \
    --python-version 3.11 -d "$root/wheels" "${WHEELS[@]}" >&2
  for w in "$root"/wheels/*.whl; do
    python3 -m zipfile -e "$w" "$root/site"
  done
  chmod +x "$toolkit"/bin/* "$toolkit"/nvvm/bin/*
  # The linker asks for unversioned names; the wheels carry the sonames.
  local lib
  for lib in cudart cublas cublasLt nvrtc; do
    ln -sf "lib$lib.so.13" "$toolkit/lib/lib$lib.so"
  done
  ln -sf libcurand.so.10 "$toolkit/lib/libcurand.so"

  mkdir -p "$toolkit/lib/stubs"
  local src="$root/libcuda-stub.c"
  {
    echo "/* Link-time stand-in for the NVIDIA driver's libcuda.so.1 (scripts/cuda-toolkit.sh). */"
    driver_symbols | sed -E 's/^(.*)$/int \1(void) { return 34; }/'
  } >"$src"
  gcc -shared -fPIC -Wl,-soname,libcuda.so.1 -o "$toolkit/lib/stubs/libcuda.so" "$src"
  rm -rf "$root/wheels"
  touch "$stamp"
  say "installed into $toolkit ($(grep -c 'return 34' "$src") driver symbols stubbed)"
}

[ -f "$stamp" ] || install

cap="${CUDA_COMPUTE_CAP:-}"
if [ -z "$cap" ] && command -v nvidia-smi >/dev/null; then
  # A driver that is installed but not loaded answers nothing: fall back below.
  cap="$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d '.' || true)"
fi
cap="${cap:-90}"

"$toolkit/bin/nvcc" --version | sed -n 's/^Cuda compilation tools, /cuda-toolkit: nvcc /p' >&2
cat <<EOF
export CUDA_ROOT="$toolkit"
export PATH="$toolkit/bin:\$PATH"
export LIBRARY_PATH="$toolkit/lib:$toolkit/lib/stubs\${LIBRARY_PATH:+:\$LIBRARY_PATH}"
export CUDA_COMPUTE_CAP="$cap"
EOF
