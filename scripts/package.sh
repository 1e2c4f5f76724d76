#!/usr/bin/env bash
# Packs a built cairn for a release: the binary, its shell completions, its
# man page, the README, the docs and the agent skill, as cairn-<target>.tar.gz with a sha256sum-style
# .sha256 beside it (stable names, so `releases/latest/download/…` works);
# and the MCP bundle cairn-<target>.mcpb (manifest.json and the binary, for
# Claude Desktop and other MCPB hosts), its manifest checked and the bundle
# packed by the official @anthropic-ai/mcpb CLI (MCPB names it; default
# target/clients/node_modules/.bin/mcpb, which scripts/client-tools.sh installs).
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

# The MCP bundle: the host starts `cairn mcp`, on the index folder the user
# picks at install (or, left empty, the one found as every command finds it).
mcpb="${MCPB:-target/clients/node_modules/.bin/mcpb}"
version="$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)"
exe=cairn
case "$target" in *windows*) exe=cairn.exe ;; esac
case "$target" in
  *apple*) platform=darwin ;;
  *windows*) platform=win32 ;;
  *) platform=linux ;;
esac
bundle="$stage/bundle"
mkdir -p "$bundle/server"
cp "$bin" "$bundle/server/$exe"
cp skills/cairn/SKILL.md "$bundle/"
cat > "$bundle/manifest.json" <<JSON
{
  "\$schema": "https://raw.githubusercontent.com/anthropics/mcpb/main/schemas/mcpb-manifest-v0.4.schema.json",
  "manifest_version": "0.4",
  "name": "cairn",
  "display_name": "cairn",
  "version": "$version",
  "description": "Citation search over scientific software repositories: exact lines at pinned commits, with permalinks.",
  "author": { "name": "cairn contributors", "url": "https://github.com/cairn-search/cairn" },
  "repository": { "type": "git", "url": "https://github.com/cairn-search/cairn" },
  "license": "MIT OR Apache-2.0",
  "keywords": ["search", "citations", "scientific-software"],
  "server": {
    "type": "binary",
    "entry_point": "server/$exe",
    "mcp_config": {
      "command": "\${__dirname}/server/$exe",
      "args": ["mcp", "--index", "\${user_config.index}"]
    }
  },
  "user_config": {
    "index": {
      "type": "directory",
      "title": "Index folder",
      "description": "The cairn index root to serve (cairn build --out, or cairn pull): the folder holding CURRENT.",
      "required": true
    }
  },
  "tools_generated": true,
  "compatibility": { "platforms": ["$platform"] }
}
JSON
if [ -x "$mcpb" ]; then
  "$mcpb" validate "$bundle/manifest.json"
  "$mcpb" pack "$bundle" "$out/$name.mcpb" >/dev/null
  (cd "$out" && sha256sum "$name.mcpb" > "$name.mcpb.sha256")
  echo "$out/$name.mcpb"
else
  echo "package.sh: no MCPB CLI at $mcpb (scripts/client-tools.sh installs it): $name.mcpb not made" >&2
  if [ "${CAIRN_REQUIRE_MCPB:-0}" = 1 ]; then exit 1; fi
fi
