#!/usr/bin/env python3
"""The PyTorch side of scripts/bench-embed.sh: sentence-transformers on the
same model files, workload and cores as cairn. Prints tokens/s, single-query
p50/p99 and peak RSS, and, given cairn's vectors, their minimum cosine with
PyTorch's.

usage: embed_torch.py MODEL_DIR WORKLOAD.json [CAIRN_VECTORS.f32]

TORCH_DEVICE=cuda runs it on the first GPU (batches of 256 rather than 32,
and the GPU's peak memory is printed too); TORCH_DTYPE=float16 or bfloat16
runs the model in that precision; TORCH_AUTOCAST=bf16 runs it under bf16
autocast (on a CPU with AMX, oneDNN's tiles: the fastest setting a PyTorch
user gets there).
"""
import contextlib
import json
import os
import resource
import sys
import time

import numpy as np
import torch
from sentence_transformers import SentenceTransformer

QUERIES = [
    "emcee multiprocessing Pool",
    "how do I mark the true parameter values on a corner plot",
    "dynesty could not find a single point that have a valid log-likelihood",
    "MulensModel PSPL parameter names",
]


def main():
    model_dir, workload = sys.argv[1], sys.argv[2]
    device = os.environ.get("TORCH_DEVICE", "cpu")
    dtype = os.environ.get("TORCH_DTYPE", "float32")
    autocast = os.environ.get("TORCH_AUTOCAST") == "bf16"
    cast = (lambda: torch.autocast(device, dtype=torch.bfloat16)) if autocast else contextlib.nullcontext
    batch = 256 if device == "cuda" else 32
    torch.set_num_threads(os.cpu_count() or 1)
    texts = json.load(open(workload))
    model = SentenceTransformer(model_dir, device=device)
    model.to(getattr(torch, dtype))
    model.max_seq_length = 256
    tok = model.tokenizer
    tokens = sum(min(len(tok(t)["input_ids"]), 256) for t in texts)
    with torch.inference_mode(), cast():
        # Once before the clock: a GPU loads its kernels on first use.
        model.encode(texts[:64], batch_size=batch, normalize_embeddings=True)
        start = time.perf_counter()
        vecs = model.encode(texts, batch_size=batch, normalize_embeddings=True, convert_to_numpy=True)
        vecs = vecs.astype(np.float32)
        took = time.perf_counter() - start
        lat = []
        for i in range(300):
            q = f"{QUERIES[i % len(QUERIES)]} {i}"
            t = time.perf_counter()
            model.encode([q], normalize_embeddings=True)
            lat.append((time.perf_counter() - t) * 1e3)
    lat.sort()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    on = "cpu, bf16 autocast" if autocast else "cpu"
    if device == "cuda":
        gpu_mb = torch.cuda.max_memory_allocated() / 2**20
        on = f"{torch.cuda.get_device_name(0)}, {dtype}, batch {batch}, peak GPU memory {gpu_mb:.0f} MB"
    print(
        f"pytorch {torch.__version__} ({on}): {len(texts)} texts, {tokens} tokens in {took:.2f} s: "
        f"{tokens / took:.0f} tokens/s; query p50 {lat[149]:.2f} ms p99 {lat[296]:.2f} ms; peak RSS {rss:.0f} MB"
    )
    if len(sys.argv) > 3:
        ours = np.fromfile(sys.argv[3], dtype="<f4").reshape(len(texts), -1)
        cos = (ours * vecs).sum(1) / (np.linalg.norm(ours, axis=1) * np.linalg.norm(vecs, axis=1))
        print(f"cairn vs pytorch: cosine min {cos.min():.6f}, mean {cos.mean():.6f} over {len(texts)} texts")


if __name__ == "__main__":
    main()
