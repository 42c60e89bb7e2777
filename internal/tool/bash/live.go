package bash

import (
	"sync"
	"time"
)

// Live output is coalesced: consumers get at most one chunk per liveInterval, and a
// chunk keeps the head and tail of what arrived in that interval, so a command that
// floods its output cannot flood the consumers or grow memory.
const (
	liveInterval = 50 * time.Millisecond
	liveHead     = 8 << 10
	liveTail     = 24 << 10
)

// live forwards a running command's output to emit in coalesced chunks of valid
// UTF-8. Write may be called from the reading goroutine while the ticker flushes.
type live struct {
	emit func(string)

	mu      sync.Mutex
	pending *headTail
	carry   []byte // the start of a rune cut by the previous flush

	stop chan struct{}
	done chan struct{}
}

func startLive(emit func(string)) *live {
	l := &live{emit: emit, pending: newHeadTail(liveHead, liveTail), stop: make(chan struct{}), done: make(chan struct{})}
	go l.loop()
	return l
}

func (l *live) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.pending.Write(p)
}

func (l *live) loop() {
	defer close(l.done)
	t := time.NewTicker(liveInterval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			l.flush(false)
		case <-l.stop:
			l.flush(true)
			return
		}
	}
}

// close flushes what is left and stops the ticker; no chunk is emitted after it
// returns.
func (l *live) close() {
	close(l.stop)
	<-l.done
}

func (l *live) flush(final bool) {
	l.mu.Lock()
	p := l.pending
	if p.empty() && (!final || len(l.carry) == 0) {
		l.mu.Unlock()
		return
	}
	l.pending = newHeadTail(liveHead, liveTail)
	carry := l.carry
	l.carry = nil
	var chunk string
	if p.omitted() > 0 {
		chunk = p.String() // the carried rune start is lost with the omitted bytes
	} else {
		tail, _ := p.tail.since(0)
		b := append(append(carry, p.head...), tail...)
		if !final {
			b, l.carry = splitIncomplete(b)
			l.carry = append([]byte(nil), l.carry...)
		}
		chunk = sanitize(b)
	}
	l.mu.Unlock()
	l.emit(chunk)
}
