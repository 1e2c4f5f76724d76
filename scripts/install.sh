#!/bin/sh
# Installs cairn from its GitHub release: no Rust toolchain needed, only curl,
# tar and a sha256 tool. Checks the archive's sha256 before installing.
#   curl -fsSL https://github.com/cairn-search/cairn/releases/latest/download/install.sh | sh
# Settings (environment): CAIRN_INSTALL_DIR (default ~/.local/bin),
# CAIRN_VERSION (a release tag, default the latest), CAIRN_INSTALL_BASE (where
# the archives are; default the release's download URL).
set -eu
repo="cairn-search/cairn"
case "${CAIRN_VERSION:-latest}" in
  latest) default_base="https://github.com/$repo/releases/latest/download" ;;
  *) default_base="https://github.com/$repo/releases/download/$CAIRN_VERSION" ;;
esac
base="${CAIRN_INSTALL_BASE:-$default_base}"
dir="${CAIRN_INSTALL_DIR:-$HOME/.local/bin}"
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) target=x86_64-unknown-linux-gnu ;;
  Linux-aarch64 | Linux-arm64) target=aarch64-unknown-linux-gnu ;;
  Darwin-arm64) target=aarch64-apple-darwin ;;
  Darwin-x86_64) target=x86_64-apple-darwin ;;
  *)
    echo "no cairn release for $(uname -s) $(uname -m); build from source (see the README)" >&2
    exit 1
    ;;
esac
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
archive="cairn-$target.tar.gz"
curl -fsSL "$base/$archive" -o "$tmp/$archive"
curl -fsSL "$base/$archive.sha256" -o "$tmp/$archive.sha256"
if command -v sha256sum >/dev/null 2>&1; then
  (cd "$tmp" && sha256sum -c "$archive.sha256" >/dev/null)
else
  (cd "$tmp" && shasum -a 256 -c "$archive.sha256" >/dev/null)
fi
tar -C "$tmp" -xzf "$tmp/$archive"
mkdir -p "$dir"
cp "$tmp/cairn-$target/cairn" "$dir/cairn.new"
chmod 755 "$dir/cairn.new"
mv "$dir/cairn.new" "$dir/cairn"
echo "installed $("$dir/cairn" --version) to $dir/cairn"
echo "completions and the man page are in the archive: $base/$archive"
