#!/usr/bin/env bash
# Benchmark of a hook run (issue 39 item 2): a command hook that does nothing
# (`true`, its JSON input written and its output read) under the session's
# supervisor, against a plain `bash -c true` and against a hook run under a
# supervisor of its own (how hooks ran before). ROUNDS interleaved rounds of
# N runs each; prints the medians of wall time and of the children's CPU per
# run, and the ratios (target: hook / bash -c true <= 1.2).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-5}
n=${N:-300}
go test -run '^$' -bench '^BenchmarkHookRun$' -benchtime "${n}x" -count "$rounds" ./internal/hooks |
  awk '
    /^BenchmarkHookRun\// {
      split($1, p, "/"); name = p[2]; sub(/-[0-9]+$/, "", name)
      wall[name] = wall[name] " " $3; cpu[name] = cpu[name] " " $5
    }
    function median(list,   a, n, i, j, t) {
      n = split(list, a, " ")
      for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
      return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    END {
      for (k in wall) { w[k] = median(wall[k]) / 1e6; c[k] = median(cpu[k]) }
      printf "%-16s %10s %14s\n", "per run", "wall ms", "child CPU ms"
      split("bash-c-true hook own-supervisor", order, " ")
      for (i = 1; i <= 3; i++) printf "%-16s %10.2f %14.2f\n", order[i], w[order[i]], c[order[i]]
      printf "hook / bash -c true:           wall %.2fx, CPU %.2fx (target <= 1.2)\n", w["hook"] / w["bash-c-true"], c["hook"] / c["bash-c-true"]
      printf "own supervisor / bash -c true: wall %.2fx, CPU %.2fx (before)\n", w["own-supervisor"] / w["bash-c-true"], c["own-supervisor"] / c["bash-c-true"]
    }'
