#!/usr/bin/env bash
# Benchmark of the web view: a session of 1000 tool calls (a realistic mix whose
# results come from running each tool for real) rendered by the server (Go
# benchmark) and opened in headless chromium, without the race detector. There is
# no reference tool for a web page; the load time is compared with the 1 s budget.
# Prints the server's render time, the browser's load time, the ratio to the budget
# and the peak RSS of the process serving the page.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v chromium >/dev/null || { echo "web.sh needs chromium (apt-get install chromium)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

go test -c -o "$tmp/web.test" ./internal/web
(cd internal/web && "$tmp/web.test" -test.run '^$' -test.bench '^BenchmarkSessionPage$' -test.benchtime 10x) |
  awk '/^BenchmarkSessionPage/ { printf "server render of the 1000-call page: %.0f ms\n", $3 / 1e6 }'

# Peak RSS of the test process, which is the server (chromium runs apart).
rss() {
  if [ -x /usr/bin/time ]; then
    /usr/bin/time -f "%M" -o "$tmp/rss" "$@"
  else
    "$@" &
    local pid=$!
    local peak=0
    while kill -0 "$pid" 2>/dev/null; do
      local v
      v=$(awk '/VmHWM/ { print $2 }' "/proc/$pid/status" 2>/dev/null || echo 0)
      [ "${v:-0}" -gt "$peak" ] && peak=$v
      sleep 0.05
    done
    wait "$pid"
    echo "$peak" >"$tmp/rss"
  fi
}
(cd internal/web && DSH_REQUIRE_BROWSER=1 DSH_ARTIFACTS="$tmp/shots" rss "$tmp/web.test" -test.run '^TestBrowser$' -test.count 1) >"$tmp/out" || {
  cat "$tmp/out" >&2
  exit 1
}
line=$(grep '^web:' "$tmp/out")
echo "$line"
ms=$(sed -E 's/.* loaded in ([0-9]+)ms.*/\1/' <<<"$line")
awk -v a="$ms" 'BEGIN { printf "ratio load/budget: %.2f (target <= 1.0, budget 1000 ms)\n", a / 1000 }'
echo "peak RSS of the server (test process): $(($(cat "$tmp/rss") / 1024)) MiB"
