#!/usr/bin/env bash
# Benchmarks the read tool through `dsh tool`: a 2000-line window at the end of a
# ~1 GiB file of ~10M lines, measured in one run against
#   wc -l FILE                 (target: dsh <= 1.5x its time)
#   sed -n 'A,Bp' FILE         (target: dsh <= 0.5x its time)
# and dsh's peak RSS (target: <= 32 MiB). Every command runs once to warm the page
# cache, then the best of 3 runs counts. Wall and CPU (user+sys) are both printed:
# on a busy machine the CPU figures are the steadier ones. The Go benchmark
# BenchmarkReadTail measures the same scan in process.
#
# The lines average ~105 bytes, so the 50 KiB output cap shows ~480 of the 2000
# requested lines; the scan (every byte, to count totalLines exactly) is the same.
set -euo pipefail
cd "$(dirname "$0")/.."
export CGO_ENABLED=0 # dsh as the README builds it: static

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/dsh" ./cmd/dsh
mkdir "$tmp/ws"
file=$tmp/ws/big.txt

# Peak RSS: GNU time if present, else poll the process's VmHWM until it exits.
if [ -x /usr/bin/time ] && /usr/bin/time -f %M -o /dev/null true 2>/dev/null; then
  rss_prefix=(/usr/bin/time -f %M -o "$tmp/rss")
else
  cat >"$tmp/hwm.sh" <<'EOF'
out=$1; shift
"$@" &
pid=$! max=0
while [ -r "/proc/$pid/status" ]; do
  while read -r k v _; do
    if [ "$k" = VmHWM: ] && [ "$v" -gt "$max" ]; then max=$v; fi
  done <"/proc/$pid/status" 2>/dev/null || true
  sleep 0.01
done
echo "$max" >"$out"
wait "$pid"
EOF
  rss_prefix=(bash "$tmp/hwm.sh" "$tmp/rss")
fi

# best CMD... runs CMD once to warm up, then 3 times; it sets secs and cpu to the
# best wall and user+sys times, and rss_kb to the peak RSS of the best run.
best() {
  "$@" >/dev/null
  secs='' cpu='' rss_kb=''
  local s u y c
  for _ in 1 2 3; do
    {
      TIMEFORMAT='%3R %3U %3S'
      time "${rss_prefix[@]}" "$@" >/dev/null
    } 2>"$tmp/times"
    read -r s u y <"$tmp/times"
    c=$(awk -v u="$u" -v y="$y" 'BEGIN { printf "%.3f", u + y }')
    if [ -z "$secs" ] || awk -v a="$s" -v b="$secs" 'BEGIN { exit !(a < b) }'; then
      secs=$s rss_kb=$(tail -n 1 "$tmp/rss")
    fi
    if [ -z "$cpu" ] || awk -v a="$c" -v b="$cpu" 'BEGIN { exit !(a < b) }'; then cpu=$c; fi
  done
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

# ~1 MiB of varied lines, repeated 1024 times: fast to make, ~1 GiB in all.
awk 'BEGIN {
  s = "the quick brown fox jumps over the lazy dog; pack my box with five dozen liquor jugs! 0123456789 ";
  s = s s;
  for (i = 1; i <= 10000; i++) printf "%05d %s\n", i, substr(s, 1, 50 + (i * 37) % 98)
}' >"$tmp/block"
for _ in $(seq 1024); do cat "$tmp/block"; done >"$file"
rm "$tmp/block"
size=$(stat -c %s "$file")
lines=$(wc -l <"$file")
a=$((lines - 1999)) b=$lines
args=$(printf '{"path":"big.txt","offset":%d,"limit":2000}' "$a")
printf 'file: %d bytes (%.2f GiB), %d lines; window %d-%d\n' "$size" "$(awk -v s="$size" 'BEGIN { print s / 2^30 }')" "$lines" "$a" "$b"

# The read must be right before it is fast.
env -C "$tmp/ws" "$tmp/dsh" tool --json read "$args" >"$tmp/out.json"
grep -q "\"totalLines\":$lines" "$tmp/out.json" || { echo "FAIL: dsh reported a wrong totalLines" >&2; exit 1; }
grep -q "\"number\":$a," "$tmp/out.json" || { echo "FAIL: the window does not start at line $a" >&2; exit 1; }

best wc -l "$file"
wc_secs=$secs wc_cpu=$cpu wc_rss=$rss_kb
best sed -n "${a},${b}p" "$file"
sed_secs=$secs sed_cpu=$cpu sed_rss=$rss_kb
best env -C "$tmp/ws" "$tmp/dsh" tool --json read "$args"
dsh_secs=$secs dsh_cpu=$cpu dsh_rss=$rss_kb

printf '%-26s wall %6ss  cpu %6ss  peak RSS %6d KiB\n' "wc -l" "$wc_secs" "$wc_cpu" "$wc_rss"
printf '%-26s wall %6ss  cpu %6ss  peak RSS %6d KiB\n' "sed -n '$a,${b}p'" "$sed_secs" "$sed_cpu" "$sed_rss"
printf '%-26s wall %6ss  cpu %6ss  peak RSS %6d KiB\n' "dsh tool read (--json)" "$dsh_secs" "$dsh_cpu" "$dsh_rss"
printf 'ratio dsh/wc -l:  wall %s  cpu %s  (target <= 1.5)\n' "$(ratio "$dsh_secs" "$wc_secs")" "$(ratio "$dsh_cpu" "$wc_cpu")"
printf 'ratio dsh/sed -n: wall %s  cpu %s  (target <= 0.5)\n' "$(ratio "$dsh_secs" "$sed_secs")" "$(ratio "$dsh_cpu" "$sed_cpu")"
printf 'dsh peak RSS: %.1f MiB (target <= 32)\n' "$(awk -v k="$dsh_rss" 'BEGIN { print k / 1024 }')"
