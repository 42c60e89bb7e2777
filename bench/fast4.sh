#!/usr/bin/env bash
# Issue 39's comparisons in one run, this tree against the build before
# (BEFORE, default 8b3ff7a), ending in one table of ratios. Each part is a
# bench script that prints lines `RATIO <name> <value>x target <= <t>x`:
#   bench/ckpt.sh   checkpoints (skipped, with a message, if missing)
#   bench/start.sh  start-up and session/new (skipped if missing)
#   bench/hooks.sh  a hook run / `bash -c true` (its summary line is read)
#   bench/load.sh   session/load / a bare decode of the log
#   bench/bash.sh   a command / os/exec, back to back and paced
#   bench/chat.sh   chatbench's long session, CALLS (10 000) calls, now / before
# The before build is made once and handed to the scripts that take
# BEFORE_BIN (the others get BEFORE). Scale with RUNS, ROUNDS, COMMANDS, N,
# CALLS; SKIP="ckpt chat" leaves parts out. The default run takes ~10 minutes
# on a quiet 2-core machine. A part that fails is reported and the run goes on.
set -uo pipefail
cd "$(dirname "$0")/.."
export CGO_ENABLED=0 # dsh as the README builds it: static
BEFORE=${BEFORE:-8b3ff7a}
export BEFORE

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/before"
if ! git archive "$BEFORE" | tar -x -C "$tmp/before" ||
	! (cd "$tmp/before" && go build -o "$tmp/dsh-before" ./cmd/dsh); then
	echo "fast4: cannot build $BEFORE" >&2
	exit 1
fi
export BEFORE_BIN="$tmp/dsh-before"

ratios="$tmp/ratios"
: >"$ratios"
skipped() { case " ${SKIP:-} " in *" $1 "*) return 0 ;; esac; return 1; }

# part NAME CMD... runs a bench, shows its output, keeps its RATIO lines.
part() {
	local name=$1
	shift
	if skipped "$name"; then
		echo "== $name: skipped (SKIP)"
		return
	fi
	echo "== $name: $*"
	local t0=$SECONDS
	"$@" 2>&1 | tee "$tmp/$name.out"
	local rc=${PIPESTATUS[0]}
	grep '^RATIO ' "$tmp/$name.out" >>"$ratios"
	[ "$rc" = 0 ] || echo "RATIO $name-failed NaNx target <= 0x" >>"$ratios"
	echo "== $name: exit $rc in $((SECONDS - t0)) s"
}

for s in ckpt start; do
	if [ -x "bench/$s.sh" ] || [ -f "bench/$s.sh" ]; then
		part "$s" bash "bench/$s.sh"
	else
		echo "== $s: bench/$s.sh is missing here; skipped"
	fi
done

if ! skipped hooks; then
	part hooks env ROUNDS="${ROUNDS:-5}" N="${N:-300}" bash bench/hooks.sh
	# hooks.sh prints ratios in its own words: "hook / bash -c true: wall 1.10x, CPU ..."
	sed -n 's|^hook / bash -c true: *wall \([0-9.]*\)x.*|RATIO hook/bash-c-true \1x target <= 1.20x|p' "$tmp/hooks.out" >>"$ratios"
	sed -n 's|^own supervisor / bash -c true: *wall \([0-9.]*\)x.*|RATIO hook/bash-c-true(before) \1x target <= 1.20x|p' "$tmp/hooks.out" >>"$ratios"
fi
part load env RUNS="${RUNS:-5}" CALLS="${LOAD_CALLS:-10200}" BIG=0 bash bench/load.sh
part bash env ROUNDS="${ROUNDS:-5}" COMMANDS="${COMMANDS:-100}" OUTPUT=0 bash bench/bash.sh
part chat env SAMPLES=0 CALLS="${CALLS:-10000}" bash bench/chat.sh

echo
echo "Issue 39, this tree ($(git rev-parse --short HEAD)$(git diff --quiet HEAD || echo +changes)) and $BEFORE; (before) rows are the build before:"
awk '
	BEGIN { printf "%-40s %9s %10s  %s\n", "comparison", "ratio", "target", "" }
	{
		v = $3; sub(/x$/, "", v); t = $6; sub(/x$/, "", t)
		ok = (v != "NaN" && v + 0 <= t + 0) ? "ok" : "MISSED"
		if ($2 ~ /-failed$/) { printf "%-40s %9s %10s  %s\n", $2, "-", "-", "FAILED"; next }
		printf "%-40s %8.2fx %9s  %s\n", $2, v, "<= " t "x", ok
	}' "$ratios"
