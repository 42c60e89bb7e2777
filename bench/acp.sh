#!/usr/bin/env bash
# Benchmark of `dsh acp` startup, as an editor sees it, for this tree and for a
# build of BEFORE (default 321f09d, the previous build the issue measured against), interleaved
# in one run: medians of RUNS runs of spawn → initialize, session/new, idle RSS
# and PSS (after initialize + session/new), session/load of a written log of
# CALLS (10 000) calls of every built-in tool, a one-shot `dsh tool read`, and
# the binary's size — now / before / ratio. Targets (issue: fast again):
# session/new <= before, idle RSS <= 30 MiB, session/load <= 300 ms, tool read
# <= before, binary <= 80 MiB. REF=1 also runs the old comparison with the ACP
# Go SDK's example agent.
set -euo pipefail
cd "$(dirname "$0")/.."
export CGO_ENABLED=0 # dsh as the README builds it: static

runs=${RUNS:-10}
before=${BEFORE:-321f09d}
tmp=$(mktemp -d)
trap 'git worktree remove --force "$tmp/before" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT

go build -o "$tmp/dsh" ./cmd/dsh
git worktree add --detach "$tmp/before" "$before" >/dev/null 2>&1
(cd "$tmp/before" && go build -o "$tmp/dsh-before" ./cmd/dsh)
go build -o "$tmp/acpbench" ./bench/internal/acpbench

"$tmp/acpbench" -dsh "$tmp/dsh" -before "$tmp/dsh-before" -runs "$runs" -calls "${CALLS:-10000}"
if [ -n "${REF:-}" ]; then
	go build -o "$tmp/reference" github.com/coder/acp-go-sdk/example/agent
	"$tmp/acpbench" -dsh "$tmp/dsh" -ref "$tmp/reference" -runs "$runs" -calls 100
fi
