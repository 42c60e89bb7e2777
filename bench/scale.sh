#!/usr/bin/env bash
# How dsh's cost grows with a session (issue: one owner for a live session):
# grows one session with the scripted provider to 100, 1 000 and CALLS tool calls
# (prompts of 40 reads) and prints the median per-prompt cost at each and the
# ratio CALLS/100 (target <= 1.5); then, through the real `dsh acp`, the latency
# and peak RSS of session/load of that session (targets <= 300 ms, <= 60 MiB)
# and of a generated BIG MB log (target: bounded, <= 100 MiB).
set -euo pipefail
cd "$(dirname "$0")/.."
export CGO_ENABLED=0 # dsh as the README builds it: static

calls=${CALLS:-10000}
big=${BIG:-500}
lines=${LINES:-10}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

go build -o "$tmp/dsh" ./cmd/dsh
go build -o "$tmp/scalebench" ./bench/internal/scalebench
TMPDIR=${BENCH_TMPDIR:-${TMPDIR:-/tmp}} "$tmp/scalebench" -dsh "$tmp/dsh" -calls "$calls" -big "$big" -lines "$lines"
