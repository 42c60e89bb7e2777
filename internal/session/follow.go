package session

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// pollInterval is how often Follow looks for growth of the file.
const pollInterval = 100 * time.Millisecond

// Follow tails a log written by another process: it calls fn with every record,
// then with new ones as the file grows, until ctx is done (it returns nil). A
// partial last line is held until its newline arrives; it is read again from the
// file each time, so a torn line that the writer's Open truncates away is never
// glued to what follows. A complete line after the header that does not decode is
// delivered as a TypeDamaged record and following goes on. An error from fn, a
// bad header or a shrinking file stops it.
func Follow(ctx context.Context, path string, fn func(Record) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }() // read-only: nothing to lose
	d := decoder{name: path, lenient: true}
	var off int64 // just past the last complete line delivered
	buf := make([]byte, 0, 1<<20)
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-timer.C:
		}
		buf = buf[:0]
		for {
			if len(buf) == cap(buf) {
				buf = append(buf, 0)[:len(buf)] // a line longer than buf: grow
			}
			n, rerr := f.ReadAt(buf[len(buf):cap(buf)], off+int64(len(buf)))
			buf = buf[:len(buf)+n]
			k, err := deliver(ctx, &d, buf, fn)
			if err != nil || ctx.Err() != nil {
				return err
			}
			off += int64(k)
			buf = buf[:copy(buf, buf[k:])]
			if errors.Is(rerr, io.EOF) {
				break
			}
			if rerr != nil {
				return rerr
			}
		}
		if fi, err := f.Stat(); err != nil {
			return err
		} else if fi.Size() < off {
			return fmt.Errorf("session log %s shrank while being followed", path)
		}
		timer.Reset(pollInterval)
	}
}

// deliver decodes and delivers the complete lines at the start of buf and returns
// how many bytes they took.
func deliver(ctx context.Context, d *decoder, buf []byte, fn func(Record) error) (int, error) {
	k := 0
	for {
		i := bytes.IndexByte(buf[k:], '\n')
		if i < 0 {
			return k, nil
		}
		r, ok, err := d.decode(buf[k : k+i])
		if err != nil {
			return k, err
		}
		k += i + 1
		if !ok {
			continue
		}
		if ctx.Err() != nil {
			return k, nil
		}
		if err := fn(r); err != nil {
			return k, err
		}
	}
}
