#!/usr/bin/env bash
# Puts Prometheus's promtool (Debian's prometheus package, unpacked, never
# installed or started) at target/promtool/usr/bin/promtool:
# tests/e2e/operator.rs lints cairn's /metrics with `promtool check metrics`.
# Rerunning is free once it is there.
set -euo pipefail
cd "$(dirname "$0")/.."
tool=target/promtool/usr/bin/promtool
if [ ! -x "$tool" ]; then
  dl="$(mktemp -d)"
  trap 'rm -rf "$dl"' EXIT
  (cd "$dl" && { apt-get download prometheus >/dev/null 2>&1 ||
    { apt-get update -q >/dev/null 2>&1 && apt-get download prometheus >/dev/null 2>&1; }; })
  mkdir -p target/promtool
  dpkg-deb -x "$dl"/prometheus_*.deb target/promtool
fi
"$tool" --version 2>&1 | head -1
