#!/usr/bin/env bash
# The one test command: the README's, and what .ci/run runs after its lints.
# It fetches the model, installs the parties the tests talk to where this
# machine allows (Debian's chromium and nginx-light where apt may run; the
# OAuth provider and the MCP Python SDK, Slack's SDK, the MCP Apps host, the
# MCP conformance suite, axe-core, a real model server, promtool and the
# clients' own packaging tools, all under target/), runs every test of
# the workspace with the embedder's f32 pass (answers that do not depend on
# the CPU), and ends with the passed, failed and skipped counts, naming each
# skipped test and what it needs.
#
#   scripts/test.sh              what cannot be installed here is skipped, and named
#   scripts/test.sh --require    (CI) nothing may be skipped: a missing party fails its test
#   scripts/test.sh --require -- -p cairn-search   (arguments after -- go to cargo test)
set -euo pipefail
cd "$(dirname "$0")/.."

require=0
if [ "${1:-}" = "--require" ]; then
  require=1
  shift
fi
[ "${1:-}" = "--" ] && shift

# What a party's install says when it cannot be had here: fatal under --require.
missing() {
  if [ "$require" = 1 ]; then
    echo "test.sh: $1 could not be installed, and --require was given" >&2
    exit 1
  fi
  echo "test.sh: $1 could not be installed here; the tests that need it will be skipped" >&2
}

scripts/fetch-model.sh >/dev/null || missing "the default model (scripts/fetch-model.sh)"

# Debian's browser (the browser tests, axe-core) and nginx (the replicas test).
apt_missing=""
command -v chromium >/dev/null || command -v google-chrome >/dev/null || apt_missing="chromium"
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || apt_missing="$apt_missing nginx-light"
if [ -n "$apt_missing" ]; then
  sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo -n"
  # shellcheck disable=SC2086 # the package names, split on purpose
  if ! { $sudo apt-get install -y -q $apt_missing >/dev/null 2>&1 ||
    { $sudo apt-get update -q >/dev/null 2>&1 && $sudo apt-get install -y -q $apt_missing >/dev/null 2>&1; }; }; then
    missing "$apt_missing (apt-get)"
  fi
fi
axe_dir=target/axe
if [ ! -f "$axe_dir/node_modules/axe-core/axe.min.js" ]; then
  npm install --silent --no-audit --no-fund --prefix "$axe_dir" axe-core@4.14.1 >/dev/null 2>&1 ||
    missing "axe-core (npm)"
fi
[ -f "$axe_dir/node_modules/axe-core/axe.min.js" ] &&
  export CAIRN_AXE_JS="$PWD/$axe_dir/node_modules/axe-core/axe.min.js"

# The real OAuth parties, Slack's Python SDK, the official MCP Apps host, the
# MCP conformance suite with its Node 22, and a real OpenAI-compatible model
# server (node-llama-cpp and Gemma 3 270M) (npm and PyPI, under target/).
for party in oauth-test-parties slack-sdk mcp-apps-host mcp-conformance llm-test-server promtool client-tools; do
  scripts/$party.sh || missing "scripts/$party.sh"
done

if [ "$require" = 1 ]; then
  export CAIRN_REQUIRE_BROWSER=1 CAIRN_REQUIRE_NGINX=1 CAIRN_REQUIRE_OAUTH_PARTIES=1 \
    CAIRN_REQUIRE_SLACK_SDK=1 CAIRN_REQUIRE_MCP_APPS=1 CAIRN_REQUIRE_MCP_CONFORMANCE=1 \
    CAIRN_REQUIRE_MODEL=1 CAIRN_REQUIRE_LLM_SERVER=1 CAIRN_REQUIRE_PROMTOOL=1 \
    CAIRN_REQUIRE_CLIENT_TOOLS=1
fi

log="$(mktemp)"
skips="$(mktemp)"
trap 'rm -f "$log" "$skips"' EXIT
status=0
CAIRN_SKIP_LOG="$skips" CAIRN_CPU_PRECISION=f32 cargo test --workspace --no-fail-fast "$@" 2>&1 |
  tee "$log" || status=$?

# One closing line over every test binary, then each skipped test by name.
awk -v skipped="$(sort -u "$skips" | grep -c . || true)" \
  '/^test result:/ { p += $4; f += $6 } END { printf "%d passed, %d failed, %d skipped\n", p, f, skipped }' "$log"
sort -u "$skips" | sed 's/^/  skipped /'
exit "$status"
