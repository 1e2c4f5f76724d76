#!/usr/bin/env bash
# A whole search at FACTOR times the shared corpus, on a real version: INDEX's
# current version copied FACTOR times by `bench_scale version` (copy c's
# repositories are `<name>-cNNN`, every twentieth copy public and the others
# in group `staff`; the copies' vectors carry the scale benchmark's seeded
# noise; written by the builder cairn build uses, with tantivy, content,
# trigrams and the approximate index), then
#   * `bench_search` (embedding, BM25, vectors, fusion, focus: the engine's
#     whole search, one new question at a time) for a caller who sees everything;
#   * `cairn serve` answering 100 new questions over HTTP, as a caller who
#     sees everything and as one without groups (the public 5 %), and its
#     peak RSS (VmHWM) after them.
#   scripts/bench-scale-search.sh INDEX [FACTOR=100]
# MEMORY_LIMIT_MB=N runs the server in a cgroup (v1) memory limit of N MB
# (page cache included; needs root): whether it answers within that memory.
# MODE=bm25|vector asks the server for one side of the search only.
# TOUCHED=1 drops the page cache before the server starts (needs root) and
# prints, after the questions, how much of each kind of the version's files
# is in the page cache: what serving those questions read (fincore).
# Work goes under $CAIRN_BENCH_DIR (default a temp dir; 100x needs ~12 GB of
# disk and ~12 GB of memory while writing the version).
set -euo pipefail
cd "$(dirname "$0")/.."
index="${1:?usage: scripts/bench-scale-search.sh INDEX [FACTOR]}"
factor="${2:-100}"
work="${CAIRN_BENCH_DIR:-$(mktemp -d)}"
scripts/fetch-model.sh >/dev/null
# CAIRN_BIN=DIR: cairn, bench_search and bench_scale from DIR (another
# build, to compare two in one sitting) instead of building them here.
bin="${CAIRN_BIN:-target/release}" examples="${CAIRN_BIN:-target/release/examples}"
if [ -z "${CAIRN_BIN:-}" ]; then
  cargo build --release --quiet
  cargo build --release --quiet -p cairn-search --example bench_search --example bench_scale
fi
echo "machine: $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p'); $(date -u +%F)"
if [ ! -f "$work/index/CURRENT" ]; then
  /usr/bin/time -v "$examples/bench_scale" version "$index" "$factor" "$work/index" \
    2> "$work/version.time"
fi
grep -E "Elapsed|Maximum resident" "$work/version.time" | sed 's/^\s*/writing the version: /'
version="$(cat "$work/index/CURRENT")"
du -sh "$work/index/versions/$version" | sed 's/^/version size: /'
du -ch "$work/index/versions/$version"/ann-* | tail -1 | sed 's/^/approximate index: /'
"$examples/bench_search" "$work/index" golden/random.yaml 1

# The server: 100 new questions as each caller, then its peak RSS. The
# anonymous callers' CPU budget is lifted: this measures latency, and a
# search that waits on the disk would spend it (issue 40's budget).
port=$((20000 + RANDOM % 20000))
rm -f "$work/tokens.json"
token="$("$bin/cairn" token add staff --groups staff --tokens "$work/tokens.json" 2>/dev/null)"
cgroup=""
if [ -n "${MEMORY_LIMIT_MB:-}" ]; then
  cgroup="/sys/fs/cgroup/memory/cairn-bench-$$"
  mkdir "$cgroup"
  echo $((MEMORY_LIMIT_MB * 1024 * 1024)) > "$cgroup/memory.limit_in_bytes"
  echo "serving in a memory limit of $MEMORY_LIMIT_MB MB (page cache included)"
  # Pages already cached are charged to whoever read them first: drop them,
  # so the server's own reads are charged to its limit.
fi
if [ -n "${MEMORY_LIMIT_MB:-}${TOUCHED:-}" ]; then
  sync
  echo 3 > /proc/sys/vm/drop_caches
fi
CGROUP="$cgroup" sh -c '[ -z "$CGROUP" ] || echo $$ > "$CGROUP/cgroup.procs"; exec "$@"' serve \
  "$bin/cairn" serve --index "$work/index" --bind "127.0.0.1:$port" \
  --tokens "$work/tokens.json" --public-read --anonymous-cpu-budget-ms 0 \
  > "$work/serve.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true; sleep 1; [ -z "$cgroup" ] || rmdir "$cgroup" 2>/dev/null || true' EXIT
for _ in $(seq 1 120); do
  curl -fsS "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break
  sleep 1
done
python3 - "$port" "$token" "${MODE:-hybrid}" <<'PY'
import json, sys, time, urllib.request, yaml
port, token, mode = sys.argv[1], sys.argv[2], sys.argv[3]
questions = [q["query"] for q in yaml.safe_load(open("golden/random.yaml"))]
for caller, headers in (("everything", {"Authorization": f"Bearer {token}"}), ("public", {})):
    ms = []
    for i, q in enumerate(questions):
        body = json.dumps({"query": f"{q} ({caller} {i})", "mode": mode}).encode()
        req = urllib.request.Request(f"http://127.0.0.1:{port}/search", body,
                                     {"Content-Type": "application/json", **headers})
        t = time.perf_counter()
        urllib.request.urlopen(req).read()
        ms.append((time.perf_counter() - t) * 1e3)
    ms.sort()
    print(f"serve /search as {caller}: p50 {ms[len(ms)//2]:.2f} ms  p99 {ms[int(len(ms)*0.99)]:.2f} ms  ({len(ms)} new questions)")
PY
grep -E "VmHWM|RssAnon|RssFile" "/proc/$server/status" | sed 's/^/cairn serve /'
if [ -n "$cgroup" ]; then
  echo "cgroup peak $(( $(cat "$cgroup/memory.max_usage_in_bytes") / 1048576 )) MB, limit hit $(cat "$cgroup/memory.failcnt") times"
fi
if [ -n "${TOUCHED:-}" ]; then
  fincore --bytes --noheadings --output RES,SIZE,FILE "$work/index/versions/$version"/* \
    "$work/index/versions/$version"/*/* 2>/dev/null | python3 -c '
import collections, re, sys
kinds = collections.defaultdict(lambda: [0, 0])
for line in sys.stdin:
    res, size, path = line.split(None, 2)
    name = path.strip().rsplit("/", 1)[-1]
    kind = re.sub(r"^ann-[0-9]+-", "ann-*-", name)
    kind = re.sub(r"^[0-9a-f]{32}\.", "tantivy *.", kind)
    kinds[kind][0] += int(res); kinds[kind][1] += int(size)
total = sum(r for r, _ in kinds.values())
print(f"in the page cache after the questions: {total / 2**20:.0f} MB")
for kind, (res, size) in sorted(kinds.items(), key=lambda kv: -kv[1][0]):
    if res >= 2**20:
        print(f"  {kind:32} {res / 2**20:8.0f} MB of {size / 2**20:8.0f} MB")
'
fi
