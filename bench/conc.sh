#!/usr/bin/env bash
# Many sessions in one `dsh acp` (issue: fast again): N (100) sessions opened
# and prompted at once — wall time and peak RSS (targets: peak <= 80 MiB) — and
# the memory kept per finished session (target <= 0.2 MiB), for this tree and
# for a build of BEFORE (default 3819471, the commit before this round), in one
# run: now / before / ratio.
set -euo pipefail
cd "$(dirname "$0")/.."

before=${BEFORE:-3819471}
tmp=$(mktemp -d)
trap 'git worktree remove --force "$tmp/before" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT

go build -o "$tmp/dsh" ./cmd/dsh
git worktree add --detach "$tmp/before" "$before" >/dev/null 2>&1
(cd "$tmp/before" && go build -o "$tmp/dsh-before" ./cmd/dsh)
go build -o "$tmp/concbench" ./bench/internal/concbench
"$tmp/concbench" -dsh "$tmp/dsh" -before "$tmp/dsh-before" -n "${N:-100}" -runs "${RUNS:-3}"
