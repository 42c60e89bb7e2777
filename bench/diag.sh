#!/usr/bin/env bash
# Benchmark of diagnostics after edits: the edit tool on a generated 1 000-file
# Go module (100 packages of 10 files, each package importing the one before),
# with gopls warm, each edit alternately introducing a type error and fixing
# it, and its result waiting for gopls's diagnostics of the file. Prints the
# median and p95 of an edit's whole call (target: p95 <= 1.5 s), gopls's RSS
# and, apart, this process's (the client's side, dsh's). gopls comes from
# $DSH_TEST_GO/bin (default ~/.cache/dsh-test-go), where .ci/run installs it.
set -euo pipefail
cd "$(dirname "$0")/.."

export DSH_TEST_GO="${DSH_TEST_GO:-$HOME/.cache/dsh-test-go}"
if [ ! -x "$DSH_TEST_GO/bin/gopls" ]; then
  GOBIN="$DSH_TEST_GO/bin" go install golang.org/x/tools/gopls@v0.23.0
fi
out=$(go test -run '^$' -bench 'BenchmarkEditDiagnostics$' -benchtime "${EDITS:-40}x" ./internal/tool/fs)
line=$(grep '^BenchmarkEditDiagnostics' <<<"$out" | tail -n 1)
metric() { awk -v m="$1" '{ for (i = 2; i < NF; i++) if ($(i + 1) == m) print $i }' <<<"$line"; }
echo "$line"
printf 'edit + diagnostics, gopls warm (%s edits): median %s ms, p95 %s ms (target p95 <= 1500 ms)\n' \
  "${EDITS:-40}" "$(metric median-ms)" "$(metric p95-ms)"
printf 'RSS: gopls %s MiB; client (dsh side) %s MiB\n' "$(metric gopls-RSS-MiB)" "$(metric client-RSS-MiB)"
