#!/usr/bin/env bash
# session/load through the real `dsh acp`, as now / target: the median latency
# of loading CALLS (10 000) calls of every built-in tool (target <= 300 ms,
# issue 20), and the peak RSS of loading a BIG (500) MB log of RESULT-byte
# (4 MiB) tool results (target <= 100 MiB, issue 19). BIG=0 skips the second.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

go build -o "$tmp/dsh" ./cmd/dsh
go build -o "$tmp/loadbench" ./bench/internal/loadbench
TMPDIR=${BENCH_TMPDIR:-${TMPDIR:-/tmp}} "$tmp/loadbench" -dsh "$tmp/dsh" -runs "${RUNS:-5}" \
	-calls "${CALLS:-10000}" -big "${BIG:-500}" -result "${RESULT:-4194304}"
