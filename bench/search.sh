#!/usr/bin/env bash
# Benchmarks the search tools through `dsh tool` on the Go toolchain's own source
# tree, $(go env GOROOT)/src (~11 000 files, ~160 MB), in one run against ripgrep
# and GNU grep:
#   literal           grep "func main"                 vs rg -n / grep -rn
#   regex             grep "func \([a-z]+ \*[A-Za-z]+\) Close\("
#   case-insensitive  grep "deprecated", ignore_case    vs rg -n -i / grep -rni
#   files-with-matches grep "context.Context"           vs rg -l / grep -rl
#   glob              glob "**/*_test.go"              vs rg --files -g / find -name
# Targets: dsh <= 2x rg and <= 0.5x grep -rn (find for the glob) in every case,
# peak RSS <= 64 MiB. Every command runs once to warm the page cache, then the
# best of 3 counts; wall and CPU (user+sys) are printed, CPU being the steadier
# on a shared machine. The in-process time of the tool (bench/internal/searchbench,
# best of 5) shows how much of dsh's figure is its process start.
#
# Match sets: dsh's must equal rg's, as sorted path:line lists (path lists for -l
# and the glob), collected by paging through the tool with offset like a model.
# GOROOT/src is not a git checkout, so neither tool applies its .gitignore files
# (ripgrep, like dsh, honours .gitignore only inside a repository); both skip
# hidden entries and binary files and neither follows symlinks, so plain `rg`
# is the comparable command. testdata directories are searched by both.
# grep -rn searches everything (hidden, binary, ignored), so it is timed only.
# The regex uses explicit classes: rg's \w is Unicode-aware, RE2's is ASCII.
set -euo pipefail
cd "$(dirname "$0")/.."
export CGO_ENABLED=0 # dsh as the README builds it: static

if ! command -v rg >/dev/null; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ripgrep >/dev/null
fi
if ! /usr/bin/time -f %M true >/dev/null 2>&1; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq time >/dev/null
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/dsh" ./cmd/dsh
go build -o "$tmp/searchbench" ./bench/internal/searchbench
src=$(go env GOROOT)/src
cd "$src"
printf 'tree: %s, %d files, %s\n' "$src" "$(find . -type f | wc -l)" "$(du -sh . | cut -f1)"

# best CMD... runs CMD once to warm up, then 3 times; it sets secs and cpu to the
# best wall and user+sys times, and rss_kb to the largest peak RSS.
best() {
  "$@" >/dev/null 2>&1 || true
  secs='' cpu='' rss_kb=0
  local s u y c r
  for _ in 1 2 3; do
    /usr/bin/time -f '%e %U %S %M' -o "$tmp/t" "$@" >/dev/null 2>&1 || true
    read -r s u y r <"$tmp/t"
    c=$(awk -v u="$u" -v y="$y" 'BEGIN { printf "%.2f", u + y }')
    if [ -z "$secs" ] || awk -v a="$s" -v b="$secs" 'BEGIN { exit !(a < b) }'; then secs=$s; fi
    if [ -z "$cpu" ] || awk -v a="$c" -v b="$cpu" 'BEGIN { exit !(a < b) }'; then cpu=$c; fi
    if [ "$r" -gt "$rss_kb" ]; then rss_kb=$r; fi
  done
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) b = 0.01; printf "%.2f", a / b }'; }

fail=0
summary=()
# bench NAME DSH_TOOL DSH_ARGS RG_CMD... -- OTHER_CMD...
bench() {
  local name=$1 tool=$2 args=$3
  shift 3
  local rg_cmd=() other=()
  while [ "$1" != -- ]; do rg_cmd+=("$1"); shift; done
  shift
  other=("$@")
  best "$tmp/dsh" tool --json "$tool" "$args"
  local d_s=$secs d_c=$cpu d_r=$rss_kb
  local inproc
  inproc=$("$tmp/searchbench" time . "$tool" "$args")
  best "${rg_cmd[@]}"
  local r_s=$secs r_c=$cpu
  best "${other[@]}"
  local o_s=$secs o_c=$cpu
  local wr wo cr co
  wr=$(ratio "$d_s" "$r_s") wo=$(ratio "$d_s" "$o_s") cr=$(ratio "$d_c" "$r_c") co=$(ratio "$d_c" "$o_c")
  printf '\n== %s\n' "$name"
  printf '  %-14s wall %6ss  cpu %6ss  peak RSS %6d KiB  (in process: %ss)\n' dsh "$d_s" "$d_c" "$d_r" "$inproc"
  printf '  %-14s wall %6ss  cpu %6ss\n' rg "$r_s" "$r_c"
  printf '  %-14s wall %6ss  cpu %6ss\n' "${other[0]}" "$o_s" "$o_c"
  printf '  dsh/rg wall %s cpu %s (target <= 2)   dsh/%s wall %s cpu %s (target <= 0.5)   RSS %.1f MiB (target <= 64)\n' \
    "$wr" "$cr" "${other[0]}" "$wo" "$co" "$(awk -v k="$d_r" 'BEGIN { print k / 1024 }')"
  summary+=("$(printf '%-20s dsh %5ss (in process %ss)  rg %5ss  %-5s %5ss  dsh/rg %s  dsh/%s %s  RSS %d KiB' \
    "$name" "$d_s" "$inproc" "$r_s" "${other[0]}" "$o_s" "$wr" "${other[0]}" "$wo" "$d_r")")
  if awk -v a="$wr" -v b="$wo" -v r="$d_r" 'BEGIN { exit !(a > 2 || b > 0.5 || r > 65536) }'; then
    echo "  MISSED a target"
  fi
}

# same NAME DSH_LINES_ARGS RG_CMD...: dsh's match set must be rg's.
same() {
  local name=$1 args=$2
  shift 2
  "$tmp/searchbench" lines . "$args" >"$tmp/dsh.txt"
  "$@" | LC_ALL=C sort >"$tmp/rg.txt"
  LC_ALL=C sort -o "$tmp/dsh.txt" "$tmp/dsh.txt"
  if cmp -s "$tmp/dsh.txt" "$tmp/rg.txt"; then
    printf '  match set of %s: %d entries, identical to rg\n' "$name" "$(wc -l <"$tmp/rg.txt")"
  else
    printf '  FAIL: match set of %s differs from rg (dsh %d, rg %d):\n' "$name" "$(wc -l <"$tmp/dsh.txt")" "$(wc -l <"$tmp/rg.txt")"
    diff "$tmp/rg.txt" "$tmp/dsh.txt" | head -n 10
    fail=1
  fi
}
lines() { rg -n --no-heading --color never "$@" | cut -d: -f1,2; }

re='func \([a-z]+ \*[A-Za-z]+\) Close\('
bench literal grep '{"pattern":"func main"}' rg -n 'func main' -- grep -rn 'func main' .
same literal '{"pattern":"func main"}' lines 'func main'
bench regex grep "$(jq -cn --arg p "$re" '{pattern: $p}')" rg -n "$re" -- grep -rnE "$re" .
same regex "$(jq -cn --arg p "$re" '{pattern: $p}')" lines "$re"
bench case-insensitive grep '{"pattern":"deprecated","ignore_case":true}' rg -n -i deprecated -- grep -rni deprecated .
same case-insensitive '{"pattern":"deprecated","ignore_case":true}' lines -i deprecated
bench files-with-matches grep '{"pattern":"context.Context","output":"files_with_matches"}' rg -l context.Context -- grep -rl context.Context .
same files-with-matches '{"pattern":"context.Context","output":"files_with_matches"}' rg -l context.Context
bench glob glob '{"pattern":"**/*_test.go"}' rg --files -g '*_test.go' -- find . -name '*_test.go'
n_dsh=$("$tmp/dsh" tool --json glob '{"pattern":"**/*_test.go"}' | jq '.result.meta.total')
n_rg=$(rg --files -g '*_test.go' | wc -l)
if [ "$n_dsh" = "$n_rg" ]; then
  printf '  glob total: %d files, as rg --files finds\n' "$n_rg"
else
  printf '  FAIL: glob found %s files, rg --files %s\n' "$n_dsh" "$n_rg"
  fail=1
fi

printf '\n== summary (wall, best of 3)\n'
printf '%s\n' "${summary[@]}"
exit "$fail"
