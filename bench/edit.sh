#!/usr/bin/env bash
# Benchmarks the write and edit tools through `dsh tool`, in one run:
#   1. replace_all of a common token in a 100 MB file vs `sed -i` on a copy
#      (target: time ratio <= 1.5, peak RSS <= 4x the file size);
#   2. overwriting a 10k-line file with 100 scattered changes vs `diff -u` of the
#      two versions (target: <= 2x), plus the in-process diff from `go test -bench`;
#   3. overwriting a 100k-line file with a completely different one (target:
#      under 2 s, bounded memory).
# Each dsh run is one `dsh tool -` process that reads the file (the stamps rule
# wants a read first) and then changes it. Wall and CPU (user+sys) time are both
# printed: on a busy machine the CPU figures are the steadier ones.
set -euo pipefail
cd "$(dirname "$0")/.."
export CGO_ENABLED=0 # dsh as the README builds it: static

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/dsh" ./cmd/dsh
mkdir "$tmp/ws"
# dsh_calls runs JSON-lines calls from stdin in the workspace, in one session.
dsh_calls=(env -C "$tmp/ws" "$tmp/dsh" tool --json -)

# Peak RSS: GNU time if present, else poll the process's VmHWM until it exits.
if [ -x /usr/bin/time ] && /usr/bin/time -f %M -o /dev/null true 2>/dev/null; then
  rss_prefix=(/usr/bin/time -f %M -o "$tmp/rss")
else
  cat >"$tmp/hwm.sh" <<'EOF'
out=$1; shift
"$@" <&0 &
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

# measure CMD... runs CMD (with the caller's redirections) and sets secs (wall),
# cpu (user+sys of CMD and its children) and rss_kb (peak RSS).
measure() {
  {
    TIMEFORMAT='%3R %3U %3S'
    time "${rss_prefix[@]}" "$@" 2>>"$tmp/stderr" || true
  } 2>"$tmp/times"
  local user sys
  read -r secs user sys <"$tmp/times"
  cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.3f", u + s }')
  rss_kb=$(tail -n 1 "$tmp/rss")
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
mib() { echo $(($1 / 1024)); }

# json_file PATH prints the file as a JSON string (the generated data is ASCII
# without quotes or backslashes, so only newlines need escaping).
json_file() { awk 'BEGIN { ORS = ""; print "\"" } { print $0 "\\n" } END { print "\"" }' "$1"; }

echo "== 1. replace_all of a common token in a 100 MB file vs sed -i"
awk 'BEGIN { for (i = 0; i < 23000; i++) printf "\ttotal := count + offset%d // count the lines\n", i % 10 }' >"$tmp/chunk"
: >"$tmp/big.txt"
while [ "$(stat -c %s "$tmp/big.txt")" -lt 100000000 ]; do cat "$tmp/chunk" >>"$tmp/big.txt"; done
size=$(stat -c %s "$tmp/big.txt")
cp "$tmp/big.txt" "$tmp/sed.txt"
cp "$tmp/big.txt" "$tmp/ws/big.txt"
sync
measure sed -i 's/count/tally/g' "$tmp/sed.txt"
sed_secs=$secs sed_cpu=$cpu sed_rss=$rss_kb
echo '{"name":"read","args":{"path":"big.txt","limit":1}}' >"$tmp/read.jsonl"
measure "${dsh_calls[@]}" <"$tmp/read.jsonl" >"$tmp/out.jsonl"
read_secs=$secs
cp "$tmp/read.jsonl" "$tmp/edit.jsonl"
echo '{"name":"edit","args":{"path":"big.txt","old_string":"count","new_string":"tally","replace_all":true}}' >>"$tmp/edit.jsonl"
measure "${dsh_calls[@]}" <"$tmp/edit.jsonl" >"$tmp/out.jsonl"
cmp -s "$tmp/sed.txt" "$tmp/ws/big.txt" || { echo "FAIL: dsh and sed disagree" >&2; exit 1; }
printf 'file: %d bytes, %d sites\n' "$size" "$(($(wc -l <"$tmp/big.txt") * 2))"
printf 'sed -i:         wall %ss  cpu %ss  peak RSS %d MiB\n' "$sed_secs" "$sed_cpu" "$(mib "$sed_rss")"
printf 'dsh read+edit:  wall %ss  cpu %ss  peak RSS %d MiB  (a read alone: wall %ss)\n' \
  "$secs" "$cpu" "$(mib "$rss_kb")" "$read_secs"
printf 'ratio dsh/sed: wall %s, cpu %s (target <= 1.5); peak RSS / file size: %s (target <= 4)\n' \
  "$(ratio "$secs" "$sed_secs")" "$(ratio "$cpu" "$sed_cpu")" "$(ratio $((rss_kb * 1024)) "$size")"
rm -f "$tmp/big.txt" "$tmp/sed.txt" "$tmp/ws/big.txt" "$tmp/chunk"

echo
echo "== 2. overwrite a 10k-line file with 100 scattered changes vs diff -u"
awk 'BEGIN { srand(7); for (i = 1; i <= 10000; i++) printf "line %d: %08x%08x\n", i, int(rand() * 2^32), int(rand() * 2^32) }' >"$tmp/old10k.txt"
awk 'BEGIN { srand(11); while (n < 100) { k = int(rand() * 10000) + 1; if (!(k in c)) { c[k] = 1; n++ } } }
     { if (NR in c) print "changed " $0; else print }' "$tmp/old10k.txt" >"$tmp/new10k.txt"
{
  echo '{"name":"read","args":{"path":"t10k.txt","limit":1}}'
  printf '{"name":"write","args":{"path":"t10k.txt","content":%s}}\n' "$(json_file "$tmp/new10k.txt")"
} >"$tmp/write10k.jsonl"
runs=20
# Both loops copy the old file first, so the copy costs the same on each side.
measure bash -c 'for _ in $(seq "$1"); do cp "$2" "$3"; diff -u "$2" "$4" >/dev/null || true; done' \
  _ "$runs" "$tmp/old10k.txt" "$tmp/ws/t10k.txt" "$tmp/new10k.txt"
diff_secs=$secs diff_cpu=$cpu
diff_hunks=$(diff -u "$tmp/old10k.txt" "$tmp/new10k.txt" | grep -c '^@@' || true)
measure bash -c 'for _ in $(seq "$1"); do cp "$2" "$3"; "${@:5}" <"$4" >/dev/null; done' \
  _ "$runs" "$tmp/old10k.txt" "$tmp/ws/t10k.txt" "$tmp/write10k.jsonl" "${dsh_calls[@]}"
cmp -s "$tmp/new10k.txt" "$tmp/ws/t10k.txt" || { echo "FAIL: write did not land" >&2; exit 1; }
dsh_secs=$secs dsh_cpu=$cpu
# The same processes with the read only: what starting dsh and reading cost.
head -n 1 "$tmp/write10k.jsonl" >"$tmp/read10k.jsonl"
measure bash -c 'for _ in $(seq "$1"); do cp "$2" "$3"; "${@:5}" <"$4" >/dev/null; done' \
  _ "$runs" "$tmp/old10k.txt" "$tmp/ws/t10k.txt" "$tmp/read10k.jsonl" "${dsh_calls[@]}"
base_secs=$secs base_cpu=$cpu
cp "$tmp/old10k.txt" "$tmp/ws/t10k.txt"
"${dsh_calls[@]}" <"$tmp/write10k.jsonl" >"$tmp/out.jsonl"
hunks=$(tail -n 1 "$tmp/out.jsonl" | grep -o '"oldStart"' | wc -l)
per() { awk -v t="$1" -v n="$runs" 'BEGIN { printf "%.2f", t / n * 1000 }'; }
printf 'diff -u:         per run wall %s ms  cpu %s ms  (%d hunks)\n' "$(per "$diff_secs")" "$(per "$diff_cpu")" "$diff_hunks"
printf 'dsh read+write:  per run wall %s ms  cpu %s ms  (%d hunks in meta and %d in the card; whole process)\n' \
  "$(per "$dsh_secs")" "$(per "$dsh_cpu")" $((hunks / 2)) $((hunks / 2))
printf 'dsh read only:   per run wall %s ms  cpu %s ms  (process start and the read)\n' "$(per "$base_secs")" "$(per "$base_cpu")"
sub() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a - b }'; }
printf 'ratio dsh/diff: whole processes wall %s, cpu %s; the write call alone (cpu) %s (target <= 2)\n' \
  "$(ratio "$dsh_secs" "$diff_secs")" "$(ratio "$dsh_cpu" "$diff_cpu")" "$(ratio "$(sub "$dsh_cpu" "$base_cpu")" "$diff_cpu")"
go test -run '^$' -bench 'BenchmarkDiff(Scattered10k|Disjoint100k)' -benchtime 20x ./internal/tool/fs >"$tmp/gobench.txt"
inproc_ms=$(awk '/^BenchmarkDiffScattered10k/ { printf "%.2f", $3 / 1e6 }' "$tmp/gobench.txt")
printf 'the diff alone, in process (go test -bench): %s ms; ratio to a diff -u run (cpu): %s\n' \
  "$inproc_ms" "$(ratio "$inproc_ms" "$(per "$diff_cpu")")"

echo
echo "== 3. overwrite a 100k-line file with a completely different one"
awk 'BEGIN { for (i = 0; i < 100000; i++) printf "old line %d\n", i }' >"$tmp/old100k.txt"
awk 'BEGIN { for (i = 0; i < 100000; i++) printf "new line %d\n", i }' >"$tmp/new100k.txt"
cp "$tmp/old100k.txt" "$tmp/ws/t100k.txt"
{
  echo '{"name":"read","args":{"path":"t100k.txt","limit":1}}'
  printf '{"name":"write","args":{"path":"t100k.txt","content":%s}}\n' "$(json_file "$tmp/new100k.txt")"
} >"$tmp/write100k.jsonl"
measure diff -u "$tmp/old100k.txt" "$tmp/new100k.txt" >/dev/null
printf 'diff -u:         wall %ss  cpu %ss  peak RSS %d MiB\n' "$secs" "$cpu" "$(mib "$rss_kb")"
measure "${dsh_calls[@]}" <"$tmp/write100k.jsonl" >"$tmp/out.jsonl"
cmp -s "$tmp/new100k.txt" "$tmp/ws/t100k.txt" || { echo "FAIL: write did not land" >&2; exit 1; }
printf 'dsh read+write:  wall %ss  cpu %ss  peak RSS %d MiB  (files of %d KiB; target < 2 s)\n' \
  "$secs" "$cpu" "$(mib "$rss_kb")" $(($(stat -c %s "$tmp/new100k.txt") / 1024))
printf 'the diff alone, in process (go test -bench): %s ms\n' \
  "$(awk '/^BenchmarkDiffDisjoint100k/ { printf "%.2f", $3 / 1e6 }' "$tmp/gobench.txt")"
