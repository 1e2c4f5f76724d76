#!/usr/bin/env bash
# Screenshots of the web page's three pages (search, passage, browse) at a
# desktop and a phone width, from a real index, with Debian's headless Chromium.
#   scripts/ui-screenshots.sh INDEX [OUT_DIR]   (default docs/ui)
set -euo pipefail
cd "$(dirname "$0")/.."
index="${1:?usage: scripts/ui-screenshots.sh INDEX [OUT_DIR]}"
out="${2:-docs/ui}"
mkdir -p "$out"
cargo build --release --quiet
port=18931
target/release/cairn serve --index "$index" --no-auth --bind "127.0.0.1:$port" >/dev/null 2>&1 &
server=$!
trap 'kill $server 2>/dev/null' EXIT
for _ in $(seq 100); do curl -fs "http://127.0.0.1:$port/ready" >/dev/null && break; sleep 0.2; done
pages=(
  "search|/?q=emcee+multiprocessing+Pool"
  "passage|/doc/general_tools/emcee/src/emcee/ensemble.py?lines=560-570"
  "browse|/browse/general_tools/emcee"
)
for entry in "${pages[@]}"; do
  name="${entry%%|*}"; path="${entry#*|}"
  for size in "desktop 1280,900" "phone 390,844"; do
    set -- $size
    chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
      --window-size="$2" --screenshot="$out/$name-$1.png" "http://127.0.0.1:$port$path" >/dev/null 2>&1
    echo "$out/$name-$1.png"
  done
done
