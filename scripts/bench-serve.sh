#!/usr/bin/env bash
# Load test of `cairn serve` on loopback with wrk: search (distinct queries)
# and retrieve side by side, then the same again with two hot swaps during the
# run. Prints requests/s, p50/p99 per endpoint, errors and the server's RSS.
#
#   scripts/bench-serve.sh INDEX [SECONDS=60] [CONNECTIONS=32] [RETRIEVE_RATE=6000]
#
# Search connections send as fast as answers come back. Retrieve connections are
# paced to RETRIEVE_RATE requests/s in all (0: unpaced): on 2 cores an unpaced
# retrieve stream (tens of thousands a second) takes the CPU that search needs,
# which is not what a bot's mix of calls looks like.
#
# The 216 search queries repeat, so after the first pass the server's
# query-vector cache answers the embedding. NEW_QUESTIONS=1 makes every search
# a question never asked before (a random number appended), which measures
# the embedding too.
#
# INDEX must hold at least two versions under versions/ (the swaps flip CURRENT
# between the live one and the newest other one): build it twice, e.g. the
# second time with another --weights file. Needs wrk (`apt-get install wrk`).
# BIN=PATH serves with another cairn binary (default target/release/cairn), to
# compare two builds on one machine in one sitting.
set -euo pipefail
cd "$(dirname "$0")/.."

index="${1:?usage: scripts/bench-serve.sh INDEX [SECONDS] [CONNECTIONS]}"
secs="${2:-60}"
conns="${3:-32}"
rate="${4:-6000}"
bin="${BIN:-target/release/cairn}"
command -v wrk >/dev/null || { echo "wrk is needed: apt-get install wrk" >&2; exit 1; }
[ -x "$bin" ] || cargo build --release --quiet

live="$(cat "$index/CURRENT")"
other="$(ls -t "$index/versions" | grep -vx "$live" | head -1 || true)"
[ -n "$other" ] || { echo "$index needs a second version for the hot swaps" >&2; exit 1; }

work="$(mktemp -d)"
server=""
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null || true
  printf '%s' "$live" > "$index/CURRENT.tmp" && mv "$index/CURRENT.tmp" "$index/CURRENT"
  rm -rf "$work"
}
trap cleanup EXIT

token="$("$bin" token add bench --tokens "$work/tokens.json" 2>/dev/null)"
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
CAIRN_LOG=warn "$bin" serve --index "$index" --bind "127.0.0.1:$port" \
  --tokens "$work/tokens.json" --watch-ms 200 --queue 256 2>"$work/server.log" &
server=$!
for _ in $(seq 300); do
  curl -fs "http://127.0.0.1:$port/ready" >/dev/null 2>&1 && break
  sleep 0.1
done
url="http://127.0.0.1:$port"

# Distinct queries: each golden question in eight phrasings.
python3 - "$work" "${NEW_QUESTIONS:-0}" <<'PY'
import json, re, sys
work, new = sys.argv[1], sys.argv[2] == "1"
qs = re.findall(r'^\s*query:\s*"(.*)"\s*$', open("golden/queries.yaml").read(), re.M)
forms = ["{}", "how do I {}", "{} example", "explain {}", "{} in python",
         "where is {} documented", "{} parameters", "why {}"]
queries = [f.format(q) for q in qs for f in forms]
with open(f"{work}/search.lua", "w") as f:
    f.write("local q = " + json.dumps(queries).replace("[", "{").replace("]", "}") + "\n")
    f.write(f"local new = {'true' if new else 'false'}\n")
    f.write("""
local i = 0
-- Each wrk thread its own random sequence, so threads never repeat each other.
local threads = 0
setup = function(thread)
  threads = threads + 1
  thread:set("id", threads)
end
init = function(args)
  math.randomseed(os.time() * 1000 + id)
end
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
request = function()
  i = i + 1
  local query = q[(i % #q) + 1]
  if new then query = string.format("%s %d", query, math.random(1, 1000000000)) end
  local body = string.format('{"query": %q, "limit": 10}', query)
  return wrk.format(nil, "/search", nil, body)
end
""")
PY
# Retrieve targets: the spans the first searches cite.
curl -fs -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
  -d '{"query": "fit a model to data", "limit": 50}' "$url/search" |
  python3 -c '
import json, sys
hits = json.load(sys.stdin)["hits"]
bodies = [json.dumps({"doc_id": h["doc_id"], "start": h["start_line"], "end": h["end_line"]}) for h in hits]
print("local b = " + json.dumps(bodies).replace("[", "{").replace("]", "}"))
print("""
local i = 0
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
request = function()
  i = i + 1
  return wrk.format(nil, "/retrieve", nil, b[(i % #b) + 1])
end
""")' > "$work/retrieve.lua"
if [ "$rate" -gt 0 ]; then
  # Each of the retrieve connections waits its share of the interval.
  echo "delay = function() return $(( (conns / 2) * 1000 / rate )) end" >> "$work/retrieve.lua"
fi
for f in search retrieve; do
  printf 'wrk.headers["Authorization"] = "Bearer %s"\n' "$token" >> "$work/$f.lua"
  cat >> "$work/$f.lua" <<'LUA'
done = function(summary, latency, requests)
  local errors = summary.errors.connect + summary.errors.read + summary.errors.write
    + summary.errors.status + summary.errors.timeout
  io.write(string.format("RESULT %d %.1f %.2f %.2f %d\n", summary.requests,
    summary.requests / (summary.duration / 1e6), latency:percentile(50) / 1000,
    latency:percentile(99) / 1000, errors))
end
LUA
done

run() {
  local label="$1" half=$((conns / 2))
  wrk -t1 -c"$half" -d"${secs}s" -s "$work/search.lua" "$url" >"$work/search.out" &
  local a=$!
  wrk -t1 -c"$half" -d"${secs}s" -s "$work/retrieve.lua" "$url" >"$work/retrieve.out" &
  local b=$!
  if [ "$label" = "with two hot swaps" ]; then
    for target in "$other" "$live"; do
      sleep "$((secs / 3))"
      printf '%s' "$target" > "$index/CURRENT.tmp" && mv "$index/CURRENT.tmp" "$index/CURRENT"
    done
  fi
  wait "$a" "$b"
  echo "== $label ($secs s, $conns connections: $half search, $half retrieve paced to ${rate:-0}/s (0: unpaced))"
  for ep in search retrieve; do
    read -r n rps p50 p99 errs < <(grep '^RESULT' "$work/$ep.out" | cut -d' ' -f2-)
    printf '%-9s %7d requests  %8.1f req/s  p50 %7.2f ms  p99 %7.2f ms  errors %d\n' \
      "$ep" "$n" "$rps" "$p50" "$p99" "$errs"
  done
}

run "steady"
run "with two hot swaps"
swaps="$(curl -fs -H "Authorization: Bearer $token" "$url/metrics" | grep '^cairn_index_swaps_total' || true)"
echo "swaps: ${swaps:-none}"
grep -E 'VmHWM|VmRSS' "/proc/$server/status" | tr -s ' \t' ' '
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(date -u +%F)"
