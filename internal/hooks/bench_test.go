package hooks

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// childCPU is the CPU time of this process's reaped descendants.
func childCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkHookRun measures one run of a command hook that does nothing
// (`true`, its input written and its output read) against a plain
// `bash -c true`: a hook costs its command's fork and exec under the
// session's supervisor, not a supervisor's start (issue 39: at most 1.2x).
func BenchmarkHookRun(b *testing.B) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		b.Skip("no bash")
	}
	cpu := func(b *testing.B, since time.Duration) {
		b.ReportMetric(float64((childCPU()-since).Microseconds())/float64(b.N)/1000, "child-cpu-ms/op")
	}
	b.Run("bash-c-true", func(b *testing.B) {
		defer cpu(b, childCPU())
		for b.Loop() {
			if err := exec.Command(bash, "-c", "true").Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	// own-supervisor is how hooks ran before: a runner whose supervisor is
	// closed gives each run a supervisor of its own.
	for _, name := range []string{"hook", "own-supervisor"} {
		b.Run(name, func(b *testing.B) {
			defer cpu(b, childCPU())
			r, err := New([]Hook{{Event: Stop, Command: "true"}}, b.TempDir(), []string{"PATH=" + os.Getenv("PATH")})
			if err != nil {
				b.Fatal(err)
			}
			defer r.Close() // reaps the supervisor, whose CPU then counts
			if name == "own-supervisor" {
				r.Close()
			}
			for b.Loop() {
				if o := r.Run(b.Context(), Input{Event: Stop}, nil); o.Runs[0].ExitCode != 0 {
					b.Fatalf("%+v", o.Runs[0])
				}
			}
		})
	}
}
