package host

import (
	"sync"

	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/tool"
)

// maxInflight bounds the bytes of the records a load has folded and not yet
// replayed: a log of large tool results (images, fetched pages, a job's
// output, several MiB each) must not fill memory with records in a queue.
const maxInflight = 1 << 20

// replayBatch is how many records a load hands its replay at once.
const replayBatch = 32

// replayAhead is how many batches may wait for the replay. With none, the
// fold and the replay took turns more than they overlapped: each waited for
// the other about half of a load (10 200 calls: 297 ms; 209 ms with two).
const replayAhead = 2

// The batch being replayed, those waiting and the one being filled must all
// be in the tools' memos of decoded meta, or the replay decodes them again.
const _ = uint(tool.MemoSize - (replayAhead+2)*replayBatch)

// bigRecord is the size from which a load gives the memory of a record back
// once it is replayed: a forced collection costs little beside handling it.
const bigRecord = 2 << 20

// inflight counts the bytes between the fold and the replay. One record is
// always let through, however large.
type inflight struct {
	mu   sync.Mutex
	cond sync.Cond
	used int
}

func newInflight() *inflight {
	f := &inflight{}
	f.cond.L = &f.mu
	return f
}

// take waits until n more bytes fit.
func (f *inflight) take(n int) {
	f.mu.Lock()
	for f.used > 0 && f.used+n > maxInflight {
		f.cond.Wait()
	}
	f.used += n
	f.mu.Unlock()
}

// tryTake takes n bytes if they fit without waiting.
func (f *inflight) tryTake(n int) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.used > 0 && f.used+n > maxInflight {
		return false
	}
	f.used += n
	return true
}

// drain waits until nothing is in flight: after a record larger than the
// budget, the next is decoded only once that one is replayed, so that the two
// and what decoding and replaying them take are never in memory together.
func (f *inflight) drain() {
	f.mu.Lock()
	for f.used > 0 {
		f.cond.Wait()
	}
	f.mu.Unlock()
}

// give returns n bytes.
func (f *inflight) give(n int) {
	f.mu.Lock()
	f.used -= n
	f.mu.Unlock()
	f.cond.Broadcast()
}

// recordSize is about what a record holds in memory.
func recordSize(r session.Record) int {
	n := len(r.Text) + len(r.Chunk) + len(r.Args) + len(r.Preview) + 256
	for _, c := range r.Content {
		n += len(c.Text) + len(c.Data)
	}
	if r.Result != nil {
		n += len(r.Result.Meta)
		for _, c := range r.Result.Content {
			n += len(c.Text) + len(c.Data)
		}
	}
	return n
}
