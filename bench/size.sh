#!/usr/bin/env bash
# Binary size and idle memory of `dsh acp` (issue: fast again, item 4): builds
# dsh the way the README says (`CGO_ENABLED=0 go build ./cmd/dsh`) and prints
# its size and the median idle RSS / PSS after initialize + session/new, split
# into anonymous and file-backed pages — against the targets (binary <= 80 MiB,
# idle RSS <= 30 MiB). With BEFORE=<commit> it builds that commit the same way
# and prints now / before / ratio.
set -euo pipefail
cd "$(dirname "$0")/.."
export CGO_ENABLED=0 # dsh as the README builds it: static

tmp=$(mktemp -d)
trap 'git worktree remove --force "$tmp/before" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT

go build -o "$tmp/dsh" ./cmd/dsh
go build -o "$tmp/sizebench" ./bench/internal/sizebench
bins=("$tmp/dsh")
if [ -n "${BEFORE:-}" ]; then
	git worktree add --detach "$tmp/before" "$BEFORE" >/dev/null 2>&1
	(cd "$tmp/before" && go build -o "$tmp/dsh-before" ./cmd/dsh)
	bins+=("$tmp/dsh-before")
fi
"$tmp/sizebench" -runs "${RUNS:-5}" "${bins[@]}"
