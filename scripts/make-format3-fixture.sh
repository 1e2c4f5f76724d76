#!/usr/bin/env bash
# Writes tests/e2e/data/format3/: an index in format 3, the oldest format
# this cairn claims to read (OLDEST_READABLE_FORMAT), written by the cairn
# that wrote format 3 (commit 85a5d14^, the parent of the commit that made
# format 4) over one small repository and the tests' tiny model. The result
# is committed; `tests/e2e/compat.rs` reads it with today's binary.
#
# Usage (from the repository root):
#   git worktree add /tmp/old3 85a5d14^
#   (cd /tmp/old3 && cargo build --bin cairn)   # then copy target/debug/cairn out
#   scripts/make-format3-fixture.sh OLD_CAIRN TINY_MODEL_DIR
# where TINY_MODEL_DIR holds cairn_embed::fixtures::write_tiny_bert's files
# (deterministic: the test writes the same bytes again).
set -euo pipefail
old="$1"
model="$2"
out="tests/e2e/data/format3"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# One repository, committed at a fixed time by a fixed author, so the
# commit id (and with it the index version) is the same on every run.
repo="$work/repos/alpha"
mkdir -p "$repo/src/alpha" "$repo/docs"
cat > "$repo/README.md" <<'MD'
# Alpha

Alpha fits light curves.

## Install

pip install alpha

## Usage

Call fit_model on your data.
It returns a Model.
MD
cat > "$repo/src/alpha/core.py" <<'PY'
"""Core of alpha."""
import math


def fit_model(data, t_E=1.0):
    """Fit a point lens model to data."""
    return [math.sqrt(x) for x in data]


class Model:
    def __init__(self, t_0, u_0):
        self.t_0 = t_0
        self.u_0 = u_0

    def magnification(self, time):
        if time < 0:
            raise ValueError("time must be positive")
        return 1.0 + self.u_0 * time
PY
cat > "$repo/docs/guide.md" <<'MD'
# Guide

## Fitting

Pass your photometry to fit_model; the Einstein time t_E defaults to one day.

## Magnification

Model.magnification(time) gives the magnification at a time.
MD
export GIT_AUTHOR_NAME=cairn GIT_AUTHOR_EMAIL=cairn@example.org \
  GIT_COMMITTER_NAME=cairn GIT_COMMITTER_EMAIL=cairn@example.org \
  GIT_AUTHOR_DATE="2026-11-24T00:00:00Z" GIT_COMMITTER_DATE="2026-11-24T00:00:00Z"
git -C "$repo" init -q -b main
git -C "$repo" add -A
git -C "$repo" commit -q -m "alpha"

mkdir -p "$work/config"
cat > "$work/config/repositories.yml" <<'YML'
science:
  - name: alpha
    url: ../repos/alpha
    web_url: https://github.com/example/alpha
YML
"$old" build --config "$work/config/repositories.yml" --out "$work/index" \
  --cache "$work/cache" --model-dir "$model"

rm -rf "$out"
mkdir -p "$out"
cp -r "$work/index/versions" "$work/index/CURRENT" "$out/"
grep -o '"format_version": *[0-9]*' "$out"/versions/*/manifest.json
du -sh "$out"
