#!/usr/bin/env bash
# Installs the real OAuth parties the end-to-end OAuth test starts:
# oidc-provider (a certified OpenID provider, npm) under target/oidc, and the
# official MCP Python SDK (PyPI) in a virtual environment at target/mcp-py.
# Both are pinned; rerunning is cheap once they are there.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -f target/oidc/node_modules/oidc-provider/package.json ]; then
  npm install --silent --no-audit --no-fund --prefix target/oidc oidc-provider@9.13.3 >/dev/null
fi
if [ ! -x target/mcp-py/bin/python ] || ! target/mcp-py/bin/python -c 'import mcp' 2>/dev/null; then
  python3 -m venv target/mcp-py
  target/mcp-py/bin/pip install --quiet --disable-pip-version-check mcp==2.3.0
fi
echo "oauth test parties: oidc-provider $(node -p 'require("./target/oidc/node_modules/oidc-provider/package.json").version'), mcp $(target/mcp-py/bin/python -c 'import importlib.metadata as m; print(m.version("mcp"))')"
