#!/usr/bin/env bash
# Many sessions in one `dsh acp` (issue: fast again): N (100) sessions opened
# and prompted at once — wall time and peak RSS (targets: peak <= 80 MiB) — and
# the memory kept per finished session (target <= 0.2 MiB), for this tree and
# for a build of BEFORE (default 321f09d, the previous build the issue measured against), in one
# run: now / before / ratio. Then the same number of sessions, each in a
# workspace of its own (each takes a first snapshot): wall time with
# checkpoints on vs off (target <= 1.15x), and the build before's.
set -euo pipefail
cd "$(dirname "$0")/.."
export CGO_ENABLED=0 # dsh as the README builds it: static

before=${BEFORE:-321f09d}
tmp=$(mktemp -d)
trap 'git worktree remove --force "$tmp/before" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT

go build -o "$tmp/dsh" ./cmd/dsh
git worktree add --detach "$tmp/before" "$before" >/dev/null 2>&1
(cd "$tmp/before" && go build -o "$tmp/dsh-before" ./cmd/dsh)
go build -o "$tmp/concbench" ./bench/internal/concbench
"$tmp/concbench" -dsh "$tmp/dsh" -before "$tmp/dsh-before" -n "${N:-100}" -runs "${RUNS:-3}"
"$tmp/concbench" -dsh "$tmp/dsh" -before "$tmp/dsh-before" -n "${N:-100}" -runs "${RUNS:-3}" -separate
