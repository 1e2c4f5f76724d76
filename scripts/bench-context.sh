#!/usr/bin/env bash
# How much notebook content a /context budget carries, raw JSON lines against
# rendered cells, over the golden questions on an index of the shared corpus.
#   scripts/bench-context.sh INDEX [BUDGET]   (default budget 600)
set -euo pipefail
cd "$(dirname "$0")/.."
index="${1:?usage: scripts/bench-context.sh INDEX [BUDGET]}"
scripts/fetch-model.sh >/dev/null
cargo build --release --quiet -p cairn-search --example context_notebooks
echo "machine: $(nproc) cores; $(date -u +%F); index $(cat "$index/CURRENT")"
target/release/examples/context_notebooks "$index" "${2:-600}" golden/queries.yaml golden/heldout.yaml
