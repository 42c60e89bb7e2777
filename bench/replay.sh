#!/usr/bin/env bash
# Benchmark of replay: a generated log of 100 000 records (half tool calls and
# results of every kind, produced by running each tool for real) replayed to JSON
# with `dsh replay --json`, against `jq -c . LOG > /dev/null` on the same file in
# the same run. Prints the time ratio (target <= 1.0) and dsh's peak RSS.
set -euo pipefail
cd "$(dirname "$0")/.."
export CGO_ENABLED=0 # dsh as the README builds it: static
command -v jq >/dev/null || { echo "replay.sh needs jq (apt-get install jq)" >&2; exit 1; }
RUNS=${RUNS:-3}
N=${N:-100000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

go build -o "$tmp/dsh" ./cmd/dsh
go run ./bench/internal/genlog -n "$N" -o "$tmp/bench.jsonl"
size=$(stat -c %s "$tmp/bench.jsonl")
echo "log: $N records, $((size / 1024 / 1024)) MiB"

# best wall time (seconds) of RUNS runs of a command; the last run's peak RSS (KiB) goes to $tmp/rss
best() {
  local b=""
  for _ in $(seq "$RUNS"); do
    /usr/bin/time -f "%e %M" -o "$tmp/t" "$@" >/dev/null
    read -r t rss <"$tmp/t"
    echo "$rss" >"$tmp/rss"
    if [ -z "$b" ] || awk "BEGIN{exit !($t < $b)}"; then b=$t; fi
  done
  echo "$b"
}

cat "$tmp/bench.jsonl" >/dev/null # warm the page cache for both
jq_t=$(best jq -c . "$tmp/bench.jsonl")
dsh_t=$(best "$tmp/dsh" replay --json "$tmp/bench.jsonl")
dsh_rss=$(cat "$tmp/rss")
echo "jq -c .            : ${jq_t}s"
echo "dsh replay --json  : ${dsh_t}s, peak RSS $((dsh_rss / 1024)) MiB"
awk -v a="$dsh_t" -v b="$jq_t" 'BEGIN{ printf "ratio dsh/jq: %.2f (target <= 1.0)\n", (b > 0 ? a / b : 0) }'
