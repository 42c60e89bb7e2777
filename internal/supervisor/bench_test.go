package supervisor

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

// reportCPU reports the CPU time per operation of the processes the benchmark
// started: on a loaded machine, wall time measures mostly the wait for a CPU.
func reportCPU(b *testing.B, since time.Duration) {
	b.ReportMetric(float64((childCPU()-since).Microseconds())/float64(b.N)/1000, "child-cpu-ms/op")
}

// BenchmarkStart measures one short command under a supervisor of its own
// (this test binary re-executed) and under a session's, against plain os/exec
// of the same command.
func BenchmarkStart(b *testing.B) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		b.Skip("no bash")
	}
	b.Run("os-exec", func(b *testing.B) {
		defer reportCPU(b, childCPU())
		for b.Loop() {
			if err := exec.Command(bash, "-c", "true").Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("supervisor", func(b *testing.B) {
		defer reportCPU(b, childCPU())
		benchmarkStart(b, bash, Start)
	})
	b.Run("session", func(b *testing.B) {
		defer reportCPU(b, childCPU())
		s := new(Session)
		defer s.Close() // reaps the supervisor, whose CPU and its commands' then count
		benchmarkStart(b, bash, s.Start)
	})
}

func benchmarkStart(b *testing.B, bash string, start func(Spec) (*Process, error)) {
	for b.Loop() {
		p, err := start(Spec{Path: bash, Args: []string{"bash", "-c", "true"}, Env: os.Environ(), Output: os.Stderr})
		if err != nil {
			b.Fatal(err)
		}
		if e := p.Wait(); e.Status.ExitStatus() != 0 {
			b.Fatal(e.Status)
		}
	}
}
