#!/usr/bin/env bash
# Builds the MCP Apps host that tests/e2e/mcp_apps.rs runs in Chromium: the
# official @modelcontextprotocol/ext-apps AppBridge (npm, with the MCP SDK
# packages it needs) bundled by esbuild (npm) into target/mcp-apps/host.js,
# beside a host.html that loads it. Pinned; rerunning is cheap once built.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=target/mcp-apps
if [ ! -f "$dir/host.js" ] || [ tests/e2e/data/mcp-apps-host.mjs -nt "$dir/host.js" ]; then
  if [ ! -x "$dir/node_modules/.bin/esbuild" ]; then
    npm install --silent --no-audit --no-fund --prefix "$dir" \
      @modelcontextprotocol/ext-apps@2.0.4 @modelcontextprotocol/client@2.4.0 \
      @modelcontextprotocol/core@2.4.0 zod@4.6.7 esbuild@0.25.12 >/dev/null
  fi
  cp tests/e2e/data/mcp-apps-host.mjs "$dir/host-entry.mjs"
  "$dir/node_modules/.bin/esbuild" "$dir/host-entry.mjs" --bundle --format=iife \
    --platform=browser --log-level=warning --outfile="$dir/host.js"
  printf '<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>MCP Apps test host</title><script src="host.js"></script></head><body><main><h1>Host</h1></main></body></html>\n' > "$dir/host.html"
fi
echo "mcp apps host: ext-apps $(node -p "require('./$dir/node_modules/@modelcontextprotocol/ext-apps/package.json').version"), $(wc -c < "$dir/host.js") bytes"
