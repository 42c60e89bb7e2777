package session

import (
	"io"
	"os"
)

// Tail reads a log a little at a time: each Next delivers the complete
// records written since the one before, so a reader that keeps up with a live
// log (the hooks' transcript) never reads it whole twice. Lines that do not
// decode are delivered as TypeDamaged records, as Follow delivers them.
type Tail struct {
	path string
	off  int64 // just past the last complete line delivered
	d    decoder
}

// NewTail returns a Tail of the log at path, from its start.
func NewTail(path string) *Tail {
	return &Tail{path: path, d: decoder{name: path, lenient: true}}
}

// Next calls fn with each complete record after the last one delivered. A
// torn or partial last line waits for the next call.
func (t *Tail) Next(fn func(Record) error) error {
	f, err := os.Open(t.path)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }() // read-only: nothing to lose
	if _, err := f.Seek(t.off, io.SeekStart); err != nil {
		return err
	}
	n, err := scan(f, 64<<10, func(line []byte) error {
		r, ok, err := t.d.decode(line)
		if err != nil || !ok {
			return err
		}
		return fn(r)
	})
	t.off += n
	return err
}
