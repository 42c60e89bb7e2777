#!/usr/bin/env bash
# Start-up of `dsh acp` in a fresh process, as an editor pays it (issue 39,
# items 3 and 4a): this tree, a build of BEFORE (default 8b3ff7a, the build
# before the work) and the floor — the ACP Go SDK's example agent, a minimal Go
# binary that answers initialize — measured run for run in turn (RUNS, default
# 20): spawn → initialize, session/new in that process, idle RSS and PSS after
# both, and a new log's fsync on the same disk; beside them the floor linked
# with the libraries dsh links (bench/internal/depfloor: the MCP SDK,
# Markdown, …), which run their package initialisation in every process: what
# dsh cannot go below while it links them. Prints a table, then one line
# per target that bench scripts grep:
#   RATIO start-initialize <x>x target <= 2.5x
#   RATIO idle-rss-MiB <MiB> target <= 20
#   RATIO session-new-beyond-fsync-ms <ms> target <= 2
# and, for the comparison with BEFORE, start-initialize-vs-before and
# session-new-vs-before. dsh is built as the README builds it.
set -euo pipefail
cd "$(dirname "$0")/.."
export CGO_ENABLED=0

runs=${RUNS:-20}
before=${BEFORE:-8b3ff7a}
tmp=$(mktemp -d)
trap 'git worktree remove --force "$tmp/before" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT

go build -o "$tmp/dsh" ./cmd/dsh
git worktree add --detach "$tmp/before" "$before" >/dev/null 2>&1
(cd "$tmp/before" && go build -o "$tmp/dsh-before" ./cmd/dsh)
go build -o "$tmp/floor" github.com/coder/acp-go-sdk/example/agent
go build -o "$tmp/depfloor" ./bench/internal/depfloor
go build -o "$tmp/acpbench" ./bench/internal/acpbench
# The linker's freshly written pages sit in the page cache differently from a
# copied (installed) file's, which shows as ~4 MiB of resident pages: each
# binary is measured as a copy, as it would be installed.
for b in dsh dsh-before floor depfloor; do
	cp "$tmp/$b" "$tmp/$b.copy" && mv "$tmp/$b.copy" "$tmp/$b"
done

"$tmp/acpbench" -dsh "$tmp/dsh" -before "$tmp/dsh-before" -floor "$tmp/floor" -depfloor "$tmp/depfloor" -runs "$runs"
