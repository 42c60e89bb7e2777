#!/usr/bin/env bash
# session/load through the real `dsh acp`, as now / target: the median latency
# of loading CALLS (10 000) calls of every built-in tool (target <= 300 ms,
# issue 20), and the peak RSS of loading a BIG (500) MB log of RESULT-byte
# (4 MiB) tool results (target <= 100 MiB, issue 19). BIG=0 skips the second.
# BEFORE=<git revision> (or BEFORE_BIN=<a dsh binary>) also loads the mixed log
# with that build, interleaved, printing now / before. RATIO lines give each
# load over a bare decode of the log (target <= 1.3x, issue 39).
set -euo pipefail
cd "$(dirname "$0")/.."
export CGO_ENABLED=0 # dsh as the README builds it: static
tmp=$(mktemp -d)
trap 'git worktree remove --force "$tmp/before" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT

go build -o "$tmp/dsh" ./cmd/dsh
go build -o "$tmp/loadbench" ./bench/internal/loadbench
before=()
if [ -n "${BEFORE_BIN:-}" ]; then
	before=(-before "$BEFORE_BIN")
elif [ -n "${BEFORE:-}" ]; then
	git worktree add --detach "$tmp/before" "$BEFORE" >/dev/null 2>&1
	(cd "$tmp/before" && go build -o "$tmp/dsh-before" ./cmd/dsh)
	before=(-before "$tmp/dsh-before")
fi
TMPDIR=${BENCH_TMPDIR:-${TMPDIR:-/tmp}} "$tmp/loadbench" -dsh "$tmp/dsh" "${before[@]}" -runs "${RUNS:-5}" \
	-calls "${CALLS:-10000}" -big "${BIG:-500}" -result "${RESULT:-4194304}"
