#!/usr/bin/env python3
"""Offline measure of a MaxSim second stage over cairn's top N (issue 19, lever 4).

    cairn serve --index INDEX --no-auth --bind 127.0.0.1:8931 &
    TORCH_PYTHON scripts/exp-maxsim.py http://127.0.0.1:8931 30

Needs a Python with torch, transformers and pyyaml (not part of the build or
the tests) and the default model in the hub cache (scripts/fetch-model.sh).
For each question of the three golden files: cairn's top N hits (/search), each
hit's text (/retrieve), MiniLM token states of query and passage, MaxSim (mean
over query tokens of the best cosine against passage tokens), then the top N
reordered several ways; recall@5 and MRR@10 per file for each ordering.
"""
import glob, json, os, sys, time, urllib.request
import numpy as np, torch, yaml
from transformers import AutoModel, PreTrainedTokenizerFast

base, N = sys.argv[1], int(sys.argv[2])
snap = glob.glob(os.path.expanduser(os.environ.get('HF_HOME', '~/.cache/huggingface')) + '/hub/models--sentence-transformers--all-MiniLM-L6-v2/snapshots/*')[0]
tok = PreTrainedTokenizerFast(tokenizer_file=snap + '/tokenizer.json')
tok.pad_token = '[PAD]'
model = AutoModel.from_pretrained(snap).eval()
torch.set_num_threads(2)

def post(path, body):
    r = urllib.request.Request(base + path, data=json.dumps(body).encode(), headers={'content-type': 'application/json'})
    return json.load(urllib.request.urlopen(r))

def states(texts, maxlen):
    enc = tok(texts, padding=True, truncation=True, max_length=maxlen, return_tensors='pt', return_special_tokens_mask=True)
    special = enc.pop('special_tokens_mask')
    with torch.no_grad():
        h = model(**enc).last_hidden_state
    h = torch.nn.functional.normalize(h, dim=-1)
    keep = enc['attention_mask'].bool() & ~special.bool()
    return [h[i][keep[i]] for i in range(len(texts))]

def hit(rel, h):
    for r in rel:
        if r['doc_id'] != h['doc_id']:
            continue
        if 'lines' not in r or r['lines'] is None:
            return True
        a, b = r['lines']
        if h['start_line'] <= b and a <= h['end_line']:
            return True
    return False

def metrics(rows):
    rec = np.mean([1.0 if r and r <= 5 else 0.0 for r in rows])
    mrr = np.mean([1.0 / r if r and r <= 10 else 0.0 for r in rows])
    return rec, mrr

orders = {}
t_model = 0.0
for f in ['golden/queries.yaml', 'golden/heldout.yaml', 'golden/random.yaml']:
    qs = yaml.safe_load(open(os.path.join(os.path.dirname(__file__), '..', f)))
    ranks = {}
    for q in qs:
        if q.get('kind') == 'guard':
            continue
        filters = {k: (v if isinstance(v, list) else [v]) for k, v in (q.get('filters') or {}).items()}
        body = {'query': q['query'], 'limit': N}
        body.update(filters)
        hits = post('/search', body)['hits']
        texts = []
        for h in hits:
            r = post('/retrieve', {'doc_id': h['doc_id'], 'start': h['start_line'], 'end': h['end_line']})
            texts.append(h['doc_id'] + '\n' + (h.get('title') or '') + '\n' + r['text'])
        t0 = time.time()
        qs_ = states([q['query']], 64)[0]
        ps = states(texts, 256) if texts else []
        t_model += time.time() - t0
        ms = [float((qs_ @ p.T).max(dim=1).values.mean()) if len(p) else 0.0 for p in ps]
        base_rank = list(range(len(hits)))
        ms_rank = sorted(base_rank, key=lambda i: -ms[i])
        pos_ms = {i: r for r, i in enumerate(ms_rank)}
        variants = {
            'cairn': base_rank,
            'maxsim': ms_rank,
        }
        for k in (5, 10, 30):
            for w in (0.5, 1.0):
                variants[f'rrf k={k} w={w}'] = sorted(base_rank, key=lambda i: -(1 / (k + i) + w / (k + pos_ms[i])))
        for name, order in variants.items():
            first = next((r + 1 for r, i in enumerate(order) if hit(q['relevant'], hits[i])), None)
            ranks.setdefault(name, []).append(first)
    for name, rows in ranks.items():
        orders.setdefault(name, {})[f] = metrics(rows)
print(f'model time {t_model:.1f} s in all')
for name, per in orders.items():
    tot = sum(r + m for r, m in per.values())
    print(f'{name:18} ' + '  '.join(f'{f.split("/")[1][:6]} {r:.3f}/{m:.3f}' for f, (r, m) in per.items()) + f'  sum {tot:.3f}')
