#!/usr/bin/env bash
# Packs a built cairn for a release: the binary, its shell completions, its
# man page, the README, the docs and the agent skill, as cairn-<target>.tar.gz with a sha256sum-style
# .sha256 beside it (stable names, so `releases/latest/download/…` works).
#   scripts/package.sh BINARY TARGET OUT_DIR
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${1:?usage: scripts/package.sh BINARY TARGET OUT_DIR}"
target="${2:?target triple}"
out="${3:?output folder}"
name="cairn-$target"
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/$name/completions" "$stage/$name/man" "$out"
cp "$bin" "$stage/$name/cairn"
for shell in bash zsh fish powershell elvish; do
  "$bin" completions "$shell" > "$stage/$name/completions/cairn.$shell"
done
"$bin" man > "$stage/$name/man/cairn.1"
cp README.md "$stage/$name/"
mkdir -p "$stage/$name/docs" && cp docs/*.md "$stage/$name/docs/"
# The agent skill, as `cairn skill` prints it.
mkdir -p "$stage/$name/skills/cairn" && cp skills/cairn/SKILL.md "$stage/$name/skills/cairn/"
tar -C "$stage" -czf "$out/$name.tar.gz" "$name"
(cd "$out" && sha256sum "$name.tar.gz" > "$name.tar.gz.sha256")
echo "$out/$name.tar.gz"
