#!/usr/bin/env bash
# Benchmark of `dsh acp` startup, as an editor sees it: medians of RUNS runs of
# spawn → initialize response, session/new latency, session/load latency of a
# generated 100-call session, and idle RSS (VmRSS after initialize + session/new).
# Targets: initialize <= 15 ms, session/new <= 20 ms, session/load <= 50 ms,
# idle RSS <= 16 MiB. The reference is the ACP Go SDK's example agent — a bare Go
# agent with no tools — measured in the same run; ratios are dsh / reference.
set -euo pipefail
cd "$(dirname "$0")/.."

runs=${RUNS:-10}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

go build -o "$tmp/dsh" ./cmd/dsh
go build -o "$tmp/acpbench" ./bench/internal/acpbench
go build -o "$tmp/reference" github.com/coder/acp-go-sdk/example/agent

"$tmp/acpbench" -dsh "$tmp/dsh" -ref "$tmp/reference" -runs "$runs"
