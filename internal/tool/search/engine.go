package search

import (
	"bytes"
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"golang.org/x/sys/unix"
)

// Scanning: each worker reads a file in chunks of complete lines into a buffer of
// its own, so a scan allocates only for the lines it keeps.
const (
	chunkBytes   = 256 << 10
	maxLineGrow  = 64 << 20 // a "line" longer than this is not text: the file is skipped
	batchFiles   = 64       // files per unit of work
	workersQueue = 4        // batches in flight per worker
)

// lineHit is one line kept for the output: a match (ranges non-nil) or context.
type lineHit struct {
	line   int
	text   string
	ranges [][2]int
}

// fileHits is what a scan found in one file.
type fileHits struct {
	rel   string // relative to the search root; "" for a file searched alone
	count int    // matching lines (1 for a files_with_matches scan: it stops there)
	lines []lineHit
}

// grepResult is what a scan keeps: the entries to show, in path order, and the
// totals of everything found.
type grepResult struct {
	files    []fileHits
	total    int // matching lines (files for files_with_matches)
	nfiles   int // matching files
	searched int // files read
}

// batch is a unit of work: some files of one directory, in order.
type batch struct {
	seq   int
	dir   *dirNode
	names []string
}

type batchResult struct {
	seq      int
	files    []fileHits
	searched int
}

// run scans the target: one file, or a tree walked in order while workers scan
// its files in parallel and a collector puts their results back in walk order.
func (q *grepQuery) run(ctx context.Context, t target) (grepResult, error) {
	keep := 0 // matching lines a worker keeps per file
	if q.mode == outContent {
		keep = q.p.Offset + q.limit
	}
	var full atomic.Bool // the collector has all it will show: workers only count
	newScanner := func() *scanner {
		return &scanner{q: q, buf: make([]byte, chunkBytes), keep: keep, full: &full}
	}
	if !t.isDir {
		s := newScanner()
		var res grepResult
		res.searched = 1
		if h, ok := s.file(unix.AT_FDCWD, t.abs, true); ok && h.count > 0 {
			c := newCollector(q, &full)
			c.add(batchResult{files: []fileHits{h}})
			return c.res, nil
		}
		return res, nil
	}

	workers := max(runtime.GOMAXPROCS(0), 1)
	jobs := make(chan batch, workers*workersQueue)
	results := make(chan batchResult, workers*workersQueue)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := newScanner()
			for b := range jobs {
				r := batchResult{seq: b.seq}
				if ctx.Err() == nil {
					for _, name := range b.names {
						r.searched++
						if h, ok := s.file(b.dir.fd(), name, false); ok && h.count > 0 {
							h.rel = b.dir.join(name)
							r.files = append(r.files, h)
						}
					}
				}
				b.dir.release()
				results <- r
			}
		}()
	}
	c := newCollector(q, &full)
	collected := make(chan struct{})
	go func() {
		defer close(collected)
		for r := range results {
			c.add(r)
		}
	}()

	w := newWalker(t.top, t.abs, walkOptions{keepDir: func(rel, name string) bool {
		return q.skipDir == nil || !q.skipDir(rel, name)
	}})
	seq := 0
	err := w.walk(ctx, t.abs, func(d *dirNode, files []string) error {
		if q.keep != nil {
			kept := files[:0:0]
			for _, f := range files {
				if q.keep(d.join(f), f) {
					kept = append(kept, f)
				}
			}
			files = kept
		}
		for len(files) > 0 {
			n := min(len(files), batchFiles)
			d.hold()
			select {
			case jobs <- batch{seq: seq, dir: d, names: files[:n]}:
			case <-ctx.Done():
				d.release()
				return ctx.Err()
			}
			seq++
			files = files[n:]
		}
		return nil
	})
	close(jobs)
	wg.Wait()
	close(results)
	<-collected
	if err == nil {
		err = ctx.Err()
	}
	return c.res, err
}

// collector folds batch results in walk order into the entries to show.
type collector struct {
	q        *grepQuery
	full     *atomic.Bool
	next     int
	pending  map[int]batchResult
	skip     int // entries still to skip (offset)
	need     int // entries still to show
	res      grepResult
	linesFor bool // entries are lines (content), not files
}

func newCollector(q *grepQuery, full *atomic.Bool) *collector {
	return &collector{q: q, full: full, pending: map[int]batchResult{}, skip: q.p.Offset, need: q.limit,
		linesFor: q.mode == outContent}
}

func (c *collector) add(r batchResult) {
	c.pending[r.seq] = r
	for {
		r, ok := c.pending[c.next]
		if !ok {
			return
		}
		delete(c.pending, c.next)
		c.next++
		c.res.searched += r.searched
		for _, f := range r.files {
			c.file(f)
		}
	}
}

func (c *collector) file(f fileHits) {
	c.res.nfiles++
	if c.linesFor || c.q.mode == outCount {
		c.res.total += f.count
	} else {
		c.res.total++
	}
	if !c.linesFor {
		switch {
		case c.skip > 0:
			c.skip--
		case c.need > 0:
			c.need--
			f.lines = nil
			c.res.files = append(c.res.files, f)
		}
		c.full.Store(c.need == 0)
		return
	}
	s := min(c.skip, f.count)
	c.skip -= s
	lines := f.lines[min(s, len(f.lines)):]
	lines = lines[:min(len(lines), c.need)]
	c.need -= len(lines)
	if len(lines) > 0 {
		f.lines = lines
		c.res.files = append(c.res.files, f)
	}
	c.full.Store(c.need == 0)
}

// scanner is one worker's reader: its buffer is reused for every file.
type scanner struct {
	q    *grepQuery
	buf  []byte
	keep int
	full *atomic.Bool
	st   unix.Stat_t
}

var errBinary = errors.New("binary")

// file scans one file (name relative to dirfd). ok is false for a file that is
// not searched: gone, not a regular file, binary (a NUL byte anywhere).
func (s *scanner) file(dirfd int, name string, follow bool) (fileHits, bool) {
	flags := unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NONBLOCK | unix.O_NOCTTY
	if !follow {
		flags |= unix.O_NOFOLLOW
	}
	fd, err := unix.Openat(dirfd, name, flags, 0)
	if err != nil {
		return fileHits{}, false
	}
	defer func() { _ = unix.Close(fd) }()
	if unix.Fstat(fd, &s.st) != nil || s.st.Mode&unix.S_IFMT != unix.S_IFREG {
		return fileHits{}, false
	}
	h := fileHits{}
	err = s.scan(fd, s.st.Size, &h)
	if len(s.buf) > 4*chunkBytes {
		s.buf = make([]byte, chunkBytes) // a long line grew it: do not keep that
	}
	if err != nil {
		return fileHits{}, false
	}
	return h, true
}

// scan reads fd to its end chunk by chunk, each chunk cut after its last newline
// and the rest carried into the next.
func (s *scanner) scan(fd int, size int64, h *fileHits) error {
	var (
		carry    int   // bytes at the start of buf from the previous chunk
		read     int64 // bytes read so far
		line     = 1   // line number at buf[0]
		mode     = s.q.mode
		stopEach = mode == outFiles
	)
	for {
		if carry == len(s.buf) {
			if len(s.buf) >= maxLineGrow {
				return errBinary
			}
			grown := make([]byte, 2*len(s.buf))
			copy(grown, s.buf[:carry])
			s.buf = grown
		}
		n, err := readOnce(fd, s.buf[carry:])
		if err != nil {
			return err
		}
		read += int64(n)
		// A regular file ends at its size; one that grew is read until read says so.
		eof := n == 0 || read >= size
		data := s.buf[:carry+n]
		if bytes.IndexByte(data[carry:], 0) >= 0 {
			return errBinary
		}
		cut := len(data)
		if !eof {
			cut = bytes.LastIndexByte(data, '\n') + 1
			if cut == 0 { // one line fills the buffer: grow it and read on
				carry = len(data)
				continue
			}
		}
		region := data[:cut]
		counted := 0 // region bytes whose newlines are in line
		stop := false
		// Line numbers are counted only while this file's lines may be shown.
		tracking := mode == outContent && len(h.lines) < s.keep && !s.full.Load()
		s.q.m.lines(region, func(start, end int) bool {
			h.count++
			if stopEach {
				stop = true
				return false
			}
			if tracking {
				line += bytes.Count(region[counted:start], []byte{'\n'})
				counted = start
				h.lines = append(h.lines, matchLine(s.q.m, line, region[start:end]))
				tracking = len(h.lines) < s.keep && !s.full.Load()
			}
			return true
		})
		if stop || eof {
			return nil
		}
		if tracking {
			line += bytes.Count(region[counted:], []byte{'\n'})
		}
		carry = copy(s.buf, data[cut:])
	}
}

// readOnce reads once from fd into b, retrying an interrupted read.
func readOnce(fd int, b []byte) (int, error) {
	for {
		n, err := unix.Read(fd, b)
		if !errors.Is(err, unix.EINTR) {
			return max(n, 0), err
		}
	}
}

// lineText is a line as shown: a CR before its newline dropped, cut to
// maxLineBytes at a character boundary, invalid UTF-8 replaced.
func lineText(b []byte) string {
	w := window(bytes.TrimSuffix(b, []byte{'\r'}), 0)
	return w.text
}

// shown is the part of a line shown: offset o of the line is at o+shift in text,
// whose bytes [lo, hi) are the line's (the rest marks a cut).
type shown struct {
	text          string
	shift, lo, hi int
}

// window is the part of a line shown, from near byte from on: at most
// maxLineBytes of it, cut at character boundaries and marked where cut, invalid
// UTF-8 replaced.
func window(b []byte, from int) shown {
	start := 0
	if len(b) > maxLineBytes && from > maxLineBytes/5 {
		start = from - maxLineBytes/5
		for start > 0 && !utf8.RuneStart(b[start]) {
			start--
		}
	}
	end := len(b)
	if end-start > maxLineBytes {
		end = start + maxLineBytes
		for end > start && !utf8.RuneStart(b[end]) {
			end--
		}
	}
	lead, tail := "", ""
	if start > 0 {
		lead = "[…] "
	}
	if end < len(b) {
		tail = " […]"
	}
	body := strings.ToValidUTF8(string(b[start:end]), "\uFFFD")
	return shown{text: lead + body + tail, shift: len(lead) - start, lo: len(lead), hi: len(lead) + len(body)}
}

// matchLine is a matching line as kept for the output: the window around its
// first match, with the ranges of the matches in it. A line whose window holds
// none of them (only with invalid UTF-8 in it) keeps a zero-width range at 0, so
// that it still reads as a match.
func matchLine(m *matcher, n int, b []byte) lineHit {
	b = bytes.TrimSuffix(b, []byte{'\r'})
	locs := m.ranges(b)
	from := 0
	if len(locs) > 0 {
		from = locs[0][0]
	}
	w := window(b, from)
	var ranges [][2]int
	if utf8.Valid(b) {
		for _, l := range locs {
			s, e := l[0]+w.shift, min(l[1]+w.shift, w.hi)
			if s >= w.lo && s <= w.hi && e >= s {
				ranges = append(ranges, [2]int{s, e})
			}
		}
	} else { // replacement characters moved the offsets: match the text shown
		for _, r := range m.ranges([]byte(w.text[w.lo:w.hi])) {
			ranges = append(ranges, [2]int{r[0] + w.lo, r[1] + w.lo})
		}
	}
	if len(ranges) == 0 {
		ranges = [][2]int{{0, 0}}
	}
	return lineHit{line: n, text: w.text, ranges: ranges}
}
