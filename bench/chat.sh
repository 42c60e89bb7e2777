#!/usr/bin/env bash
# Benchmark of the terminal chat, in a real terminal (tmux):
#   1. keystroke → frame: the time from a key sent to tmux until the pane shows
#      it in the input, while a command streams 100 MB of output (target: p99
#      <= 50 ms; the figure includes tmux's own send and capture);
#   2. memory: RSS of dsh after a session of CALLS (1000) read calls, each card
#      printed into the scrollback (target <= 80 MiB: the chat keeps no history).
# SAMPLES=0 skips the first. BEFORE=<git revision> (or BEFORE_BIN=<a dsh
# binary>) also runs the second with that build and prints RATIO lines.
set -euo pipefail
cd "$(dirname "$0")/.."
export CGO_ENABLED=0 # dsh as the README builds it: static
command -v tmux >/dev/null || { echo "bench/chat.sh needs tmux" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/dsh" ./cmd/dsh
go build -o "$tmp/chatbench" ./bench/internal/chatbench
before=()
if [ -n "${BEFORE_BIN:-}" ]; then
	before=(-before "$BEFORE_BIN")
elif [ -n "${BEFORE:-}" ]; then
	mkdir "$tmp/before"
	git archive "$BEFORE" | tar -x -C "$tmp/before"
	(cd "$tmp/before" && go build -o "$tmp/dsh-before" ./cmd/dsh)
	before=(-before "$tmp/dsh-before")
fi
"$tmp/chatbench" -dsh "$tmp/dsh" "${before[@]}" -samples "${SAMPLES:-200}" -calls "${CALLS:-1000}"
