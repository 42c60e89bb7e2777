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
// UTF-8. Write may be called from the reading goroutine while a timer flushes.
// The timer is armed by the first output after a flush, so a command that
// prints nothing costs no goroutine and no wake-up.
type live struct {
	emit func(string)

	// emitting is held across a flush and its emit: chunks go out in order,
	// and none after close.
	emitting sync.Mutex

	mu      sync.Mutex
	pending *headTail
	carry   []byte      // the start of a rune cut by the previous flush
	timer   *time.Timer // armed while output waits for its flush
	closed  bool
}

func startLive(emit func(string)) *live {
	return &live{emit: emit, pending: newHeadTail(liveHead, liveTail)}
}

func (l *live) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.timer == nil && !l.closed {
		l.timer = time.AfterFunc(liveInterval, l.tick)
	}
	return l.pending.Write(p)
}

func (l *live) tick() {
	l.emitting.Lock()
	defer l.emitting.Unlock()
	l.mu.Lock()
	closed := l.closed
	l.timer = nil
	l.mu.Unlock()
	if !closed {
		l.flush(false)
	}
}

// close flushes what is left and stops the timer; no chunk is emitted after it
// returns.
func (l *live) close() {
	l.emitting.Lock()
	defer l.emitting.Unlock()
	l.mu.Lock()
	l.closed = true
	if l.timer != nil {
		l.timer.Stop()
	}
	l.mu.Unlock()
	l.flush(true)
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
