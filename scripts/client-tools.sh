#!/usr/bin/env bash
# Installs the client ecosystems' own tools under target/clients, pinned:
# the official MCPB CLI (@anthropic-ai/mcpb: validates and packs the MCP
# bundle), Claude Code (`claude plugin validate`: the plugin and its
# marketplace) and the Gemini CLI (`gemini extensions validate`: the
# extension). scripts/package.sh and tests/e2e/packages.rs use them.
# Rerunning is cheap once they are there.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=target/clients
bin="$dir/node_modules/.bin"
if [ ! -x "$bin/mcpb" ] || [ ! -x "$bin/claude" ] || [ ! -x "$bin/gemini" ]; then
  npm install --silent --no-audit --no-fund --prefix "$dir" \
    @anthropic-ai/mcpb@2.1.2 @anthropic-ai/claude-code@2.1.332 @google/gemini-cli@0.61.0 >/dev/null
fi
echo "mcpb $("$bin/mcpb" --version), claude $("$bin/claude" --version 2>/dev/null | head -1), gemini $("$bin/gemini" --version 2>/dev/null | head -1)"
