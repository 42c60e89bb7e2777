#!/usr/bin/env bash
# Benchmark of the bash tool.
# 1. Per-command cost: `bash -c true` through `dsh tool --json -` against plain
#    os/exec of the same, in interleaved rounds (the best counts), the ratio
#    (target <= 1.25, RATIO lines), the voluntary context switches a command
#    costs against os/exec's, and a running background job's supervisor
#    memory (target <= 3 MiB private). BEFORE=<git revision> (or BEFORE_BIN=<a
#    dsh binary>) also runs that build and prints now / before.
# 2. The output path: a command printing 1 GiB, run through `dsh tool bash` (live
#    output rendered, as a user sees it), against the same stream into
#    `cat > /dev/null`. Prints the throughput ratio (target >= 0.5) and dsh's peak
#    RSS (target <= 64 MiB). Each side runs RUNS times; the best counts.
#    OUTPUT=0 skips it.
set -euo pipefail
cd "$(dirname "$0")/.."
export CGO_ENABLED=0 # dsh as the README builds it: static

size=$((1 << 30))
runs=${RUNS:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/ws"

go build -o "$tmp/dsh" ./cmd/dsh
go build -o "$tmp/cmdbench" ./bench/internal/cmdbench
before=()
if [ -n "${BEFORE_BIN:-}" ]; then
  before=(-before "$BEFORE_BIN")
elif [ -n "${BEFORE:-}" ]; then
  mkdir "$tmp/before"
  git archive "$BEFORE" | tar -x -C "$tmp/before"
  (cd "$tmp/before" && go build -o "$tmp/dsh-before" ./cmd/dsh)
  before=(-before "$tmp/dsh-before")
fi
"$tmp/cmdbench" -dsh "$tmp/dsh" "${before[@]}" -n "${COMMANDS:-100}" -rounds "${ROUNDS:-5}"
[ "${OUTPUT:-1}" = 0 ] && exit 0

now() { date +%s%N; }

# peak_rss_kib CMD... runs CMD (stdout to /dev/null) and prints its peak RSS in KiB.
if command -v /usr/bin/time >/dev/null 2>&1; then
  peak_rss_kib() {
    /usr/bin/time -f %M -o "$tmp/rss" "$@" >/dev/null
    tail -n 1 "$tmp/rss"
  }
else
  peak_rss_kib() {
    "$@" >/dev/null &
    local pid=$! hwm=0 v
    while kill -0 "$pid" 2>/dev/null; do
      v=$(awk '/^VmHWM:/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
      [ -n "$v" ] && hwm=$v
      sleep 0.01
    done
    wait "$pid"
    echo "$hwm"
  }
fi

best_cat=0 best_dsh=0 rss=0
for _ in $(seq "$runs"); do
  t0=$(now)
  head -c "$size" /dev/zero | cat >/dev/null
  t1=$(now)
  r=$(cd "$tmp/ws" && peak_rss_kib "$tmp/dsh" tool bash "{\"command\":\"head -c $size /dev/zero\"}")
  t2=$(now)
  c=$((t1 - t0)) d=$((t2 - t1))
  if [ "$best_cat" = 0 ] || [ "$c" -lt "$best_cat" ]; then best_cat=$c; fi
  if [ "$best_dsh" = 0 ] || [ "$d" -lt "$best_dsh" ]; then best_dsh=$d; fi
  if [ "$r" -gt "$rss" ]; then rss=$r; fi
done

awk -v size="$size" -v c="$best_cat" -v d="$best_dsh" -v rss="$rss" 'BEGIN {
  mib = size / 1048576
  printf "cat:       %d MiB in %.2f s (%.0f MiB/s)\n", mib, c / 1e9, mib / (c / 1e9)
  printf "bash tool: %d MiB in %.2f s (%.0f MiB/s)\n", mib, d / 1e9, mib / (d / 1e9)
  ratio = c / d
  printf "throughput ratio bash tool / cat: %.2f (target >= 0.5) %s\n", ratio, (ratio >= 0.5 ? "ok" : "MISSED")
  printf "dsh peak RSS: %.1f MiB (target <= 64 MiB) %s\n", rss / 1024, (rss <= 65536 ? "ok" : "MISSED")
}'
