package fs

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dsh-dev/dsh/internal/lsp"
	"github.com/dsh-dev/dsh/internal/tool"
	"github.com/dsh-dev/dsh/internal/workspace"
)

// diagModule writes a Go module of pkgs packages of files files each, every
// package importing the one before it, and returns the file the benchmark edits
// (in the middle package, which half the module depends on).
func diagModule(b *testing.B, root string, pkgs, files int) string {
	b.Helper()
	write := func(rel, text string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	write("go.mod", "module example.com/big\n\ngo 1.22\n")
	for p := range pkgs {
		for f := range files {
			var s strings.Builder
			fmt.Fprintf(&s, "package p%03d\n\n", p)
			if p > 0 && f == 0 {
				fmt.Fprintf(&s, "import \"example.com/big/p%03d\"\n\nvar Prev = p%03d.F0()\n\n", p-1, p-1)
			}
			fmt.Fprintf(&s, "// F%d returns a number.\nfunc F%d() int {\n\treturn %d\n}\n", f, f, f)
			for k := range 20 {
				fmt.Fprintf(&s, "\nfunc h%d_%d(x int) int { return x*%d + F%d() }\n", f, k, k, f)
			}
			write(fmt.Sprintf("p%03d/f%d.go", p, f), s.String())
		}
	}
	return fmt.Sprintf("p%03d/f0.go", pkgs/2)
}

// BenchmarkEditDiagnostics times edits of a 1 000-file module whose result
// waits for gopls's diagnostics of the file, once gopls is warm: each edit
// alternately introduces a type error and fixes it, and both must be seen.
// It reports the median and p95 of an edit's whole call, and gopls's RSS
// apart from this process's (the client's side: dsh's).
func BenchmarkEditDiagnostics(b *testing.B) {
	dir := os.Getenv("DSH_TEST_GO")
	if dir == "" {
		home, _ := os.UserHomeDir()
		dir = filepath.Join(home, ".cache", "dsh-test-go")
	}
	bin := filepath.Join(dir, "bin", "gopls")
	if _, err := os.Stat(bin); err != nil {
		b.Skip("gopls is not installed: " + bin)
	}
	root := b.TempDir()
	rel := diagModule(b, root, 100, 10)
	ws, err := workspace.New(root, false)
	if err != nil {
		b.Fatal(err)
	}
	sess := tool.NewSession("bench", ws)
	defer func() { _ = sess.Close() }()
	m := lsp.NewManager(ws.Root(), lsp.Config{Wait: 30 * time.Second, Servers: map[string]lsp.Server{"go": {Command: []string{bin}}}, Trust: lsp.NewTrust(true, false, nil, "")})
	lsp.Attach(sess, m)
	runCall(b, sess, Read(), map[string]any{"path": rel})
	good, bad := "\treturn 0\n", "\treturn \"zero\"\n"
	edit := func(from, to string) (time.Duration, string) {
		start := time.Now()
		_, _, r := runCall(b, sess, Edit(), map[string]any{"path": rel, "old_string": from, "new_string": to})
		return time.Since(start), r.TextOf()
	}
	// Warm: the first edit starts gopls and waits out its workspace load.
	if _, text := edit(good, bad); !strings.Contains(text, rel+":") {
		b.Fatalf("warm-up edit saw no error: %s", text)
	}
	if _, text := edit(bad, good); !strings.Contains(text, "no errors") {
		b.Fatalf("warm-up fix left errors: %s", text)
	}
	var times []time.Duration
	b.ResetTimer()
	for i := range b.N {
		from, to, want := good, bad, rel+":"
		if i%2 == 1 {
			from, to, want = bad, good, "no errors"
		}
		d, text := edit(from, to)
		if !strings.Contains(text, want) {
			b.Fatalf("edit %d: want %q in %s", i, want, text)
		}
		times = append(times, d)
	}
	b.StopTimer()
	slices.Sort(times)
	q := func(p float64) float64 { return float64(times[int(p*float64(len(times)-1))].Microseconds()) / 1000 }
	b.ReportMetric(q(0.5), "median-ms")
	b.ReportMetric(q(0.95), "p95-ms")
	for _, pg := range m.Pids() {
		b.ReportMetric(float64(rssKB(pg))/1024, "gopls-RSS-MiB")
	}
	b.ReportMetric(float64(rssKB(os.Getpid()))/1024, "client-RSS-MiB")
}

// rssKB is a process's resident set in KiB (0 if unknown).
func rssKB(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return n
		}
	}
	return 0
}
