#!/usr/bin/env bash
# Installs the official MCP conformance suite (@modelcontextprotocol/conformance,
# npm) and the Node 22 it needs (npm's node@22 package) under
# target/conformance, for tests/e2e/conformance.rs. Pinned; rerunning is
# cheap once they are there.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=target/conformance
if [ ! -x "$dir/node_modules/.bin/conformance" ] || [ ! -x "$dir/node_modules/.bin/node" ]; then
  npm install --silent --no-audit --no-fund --prefix "$dir" \
    @modelcontextprotocol/conformance@0.1.16 node@22.23.3 >/dev/null
fi
echo "mcp conformance: $(node -p "require('./$dir/node_modules/@modelcontextprotocol/conformance/package.json').version") on node $("$dir/node_modules/.bin/node" --version)"
