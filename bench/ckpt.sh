#!/usr/bin/env bash
# Checkpoints that cost nothing you can feel (issue 39, item 1), for this tree
# and a build of BEFORE (default 8b3ff7a, the build before the change), in one
# run, on a copy of Go's own src: a one-write prompt over the same prompt with
# checkpoints off (<= 1.1x), what checkpoints add to a one-command prompt over
# one stat walk of the tree after the same pause (<= 1.1x), the first prompt in a new workspace
# over a warm one (<= 1.2x); then 100 concurrent sessions in separate
# workspaces over the same with checkpoints off (<= 1.15x, concbench).
# One line per target:  RATIO <name> <value>x target <= <t>x
#   bench/ckpt.sh            RUNS=5 N=100 BEFORE=8b3ff7a
set -euo pipefail
cd "$(dirname "$0")/.."
export CGO_ENABLED=0 # dsh as the README builds it: static

before=${BEFORE:-8b3ff7a}
tmp=$(mktemp -d)
trap 'git worktree remove --force "$tmp/before" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT

go build -o "$tmp/dsh" ./cmd/dsh
git worktree add --detach "$tmp/before" "$before" >/dev/null 2>&1
(cd "$tmp/before" && go build -o "$tmp/dsh-before" ./cmd/dsh)
go build -o "$tmp/ckptbench" ./bench/internal/ckptbench
go build -o "$tmp/concbench" ./bench/internal/concbench
"$tmp/ckptbench" -dsh "$tmp/dsh" -before "$tmp/dsh-before" -src "$(go env GOROOT)/src" -runs "${RUNS:-5}"
"$tmp/concbench" -dsh "$tmp/dsh" -before "$tmp/dsh-before" -n "${N:-100}" -runs "${RUNS:-3}" -separate
