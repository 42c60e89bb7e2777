#!/usr/bin/env bash
# Benchmarks checkpoints and undo, in one run: a checkpoint (dsh's snapshot of
# the workspace into its shadow store, outside the repository) on a copy of Go's
# own src (~10 000 files, a git repository), as a ratio to `git stash create` on
# the same tree with the same change (target: <= 1.5x), and the latency of an
# undo of a prompt that edited, created and deleted files.
#   bench/undo.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
go run ./bench/internal/undobench -src "$(go env GOROOT)/src" -runs "${1:-10}"
