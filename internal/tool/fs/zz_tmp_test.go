package fs

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

func TestZZAdversarial(t *testing.T) {
	for _, alpha := range []int{1000} {
		r := rand.New(rand.NewPCG(1, uint64(alpha)))
		gen := func() string {
			var b strings.Builder
			for range 100000 {
				b.WriteString(strings.Repeat("x", r.IntN(alpha)))
				b.WriteString("\n")
			}
			return b.String()
		}
		a, b := gen(), gen()
		t0 := time.Now()
		h, o := diffTexts(a, b, newHunkBudget()); t.Logf("difftexts %v %d %d", time.Since(t0), len(h), o); t0 = time.Now(); al, bl := diffSplitLines(a), diffSplitLines(b)
		d := &differ{work: diffWorkFactor*(len(al)+len(bl)) + 4096}
		d.region(0, 0, al, bl)
		t.Logf("alpha %d: %v edits %d work left %d", alpha, time.Since(t0), len(d.out), d.work)
	}
}
