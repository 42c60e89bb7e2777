package session

import (
	"bytes"
	"cmp"
	"crypto/rand"
	"encoding/base32"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
)

const ext = ".jsonl"

// Dir returns the session directory: override if non-empty, else
// $XDG_STATE_HOME/dsh/sessions, else ~/.local/state/dsh/sessions. It does not
// create it. A relative XDG_STATE_HOME is ignored, as the XDG spec requires.
func Dir(override string) (string, error) {
	if override != "" {
		return override, nil
	}
	if x := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "dsh", "sessions"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("session dir: %w (set XDG_STATE_HOME or --session-dir)", err)
	}
	return filepath.Join(home, ".local", "state", "dsh", "sessions"), nil
}

var idEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// NewID returns a new session id: the UTC start time, so that ids sort by age,
// then 40 random bits, e.g. 20250314-093012-k3f9x2ab.
func NewID(now time.Time) string {
	var b [5]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return now.UTC().Format("20060102-150405") + "-" + idEncoding.EncodeToString(b[:])
}

// ValidID reports whether s can be a session id: it becomes a file name, so only
// [a-z0-9-], not starting with '-' (a flag), and of sane length.
func ValidID(s string) bool {
	if s == "" || len(s) > 128 || s[0] == '-' {
		return false
	}
	for _, c := range []byte(s) {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			return false
		}
	}
	return true
}

// Resolve turns a session id, a unique prefix of one, or a path to a log into a
// log path. Anything with a path separator or ending in .jsonl is a path; anything
// else must be a valid id, so an id never escapes dir. Untrusted input (a web
// request) should be matched against List instead, as paths are accepted here.
func Resolve(dir, idOrPath string) (string, error) {
	if idOrPath == "" {
		return "", errors.New(`no session given (run "dsh sessions" to list them)`)
	}
	if strings.ContainsRune(idOrPath, '/') || strings.ContainsRune(idOrPath, filepath.Separator) ||
		strings.HasSuffix(idOrPath, ext) {
		fi, err := os.Stat(idOrPath)
		if err != nil {
			return "", fmt.Errorf("session log: %w", err)
		}
		if !fi.Mode().IsRegular() {
			return "", fmt.Errorf("session log %s is not a file", idOrPath)
		}
		return idOrPath, nil
	}
	if !ValidID(idOrPath) {
		return "", fmt.Errorf("invalid session id %q: ids are made of a-z, 0-9 and '-'", idOrPath)
	}
	p := filepath.Join(dir, idOrPath+ext)
	if _, err := os.Stat(p); err == nil {
		return p, nil
	}
	ids, err := ids(dir)
	if err != nil {
		return "", err
	}
	var match []string
	for _, id := range ids {
		if strings.HasPrefix(id, idOrPath) {
			match = append(match, id)
		}
	}
	switch len(match) {
	case 0:
		return "", fmt.Errorf(`no session %q in %s (run "dsh sessions" to list them)`, idOrPath, dir)
	case 1:
		return filepath.Join(dir, match[0]+ext), nil
	}
	if len(match) > 5 {
		match = append(match[:5], "…")
	}
	return "", fmt.Errorf("session %q is ambiguous: %s", idOrPath, strings.Join(match, ", "))
}

// ids returns the ids of the logs in dir, sorted; a missing dir has none.
func ids(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	var out []string
	for _, e := range ents {
		id, ok := strings.CutSuffix(e.Name(), ext)
		if ok && ValidID(id) && e.Type().IsRegular() {
			out = append(out, id)
		}
	}
	return out, nil
}

// Info summarises a log for listings.
type Info struct {
	ID, Path, Cwd string
	FirstPrompt   string    // the text of the first user record, if any
	Start         time.Time // the header's time
	Updated       time.Time // the time of the last complete record that is not a checkpoint
	// Live is true while a dsh process has the log open for writing (it holds the
	// writer's lock), so more records may come: a viewer should follow it.
	Live    bool
	Records int // complete lines, header included
	// Parent is a child session's parent (a subagent's): its header's.
	Parent *Parent
	// Title is the name the session was last given (a title record), if any.
	Title string
}

// Name is what a listing calls the session: its title, else its first
// prompt.
func (in Info) Name() string {
	if in.Title != "" {
		return in.Title
	}
	return in.FirstPrompt
}

// List returns the sessions in dir, most recently updated first. It decodes only
// the header, the first user record and the last record; it counts lines without
// decoding them. Files that are not readable logs (empty, corrupt header, newer
// format) are left out. A missing dir lists nothing.
func List(dir string) ([]Info, error) {
	ids, err := ids(dir)
	if err != nil {
		return nil, err
	}
	out := make([]Info, 0, len(ids))
	for _, id := range ids {
		in, err := summarize(filepath.Join(dir, id+ext))
		if err != nil {
			continue
		}
		in.ID = id
		out = append(out, in)
	}
	slices.SortFunc(out, func(a, b Info) int {
		return cmp.Or(b.Updated.Compare(a.Updated), b.Start.Compare(a.Start), strings.Compare(b.ID, a.ID))
	})
	return out, nil
}

// headLines is how many lines List reads looking for the first user record.
const headLines = 64

var errStop = errors.New("stop")

func summarize(path string) (Info, error) {
	in := Info{Path: path}
	f, err := os.Open(path)
	if err != nil {
		return in, err
	}
	defer func() { _ = f.Close() }() // read-only: nothing to lose

	d := decoder{name: path}
	var last Record
	_, err = scan(f, 64<<10, func(line []byte) error {
		r, ok, err := d.decode(line)
		switch {
		case err != nil:
			return err
		case !ok:
			return nil
		case r.Type == TypeHeader:
			in.Cwd, in.Start, in.Parent = r.Cwd, r.Time, r.Parent
		case r.Type == TypeUser:
			in.FirstPrompt = r.Text
			return errStop
		}
		last = r
		if d.line >= headLines {
			return errStop
		}
		return nil
	})
	if err != nil && !errors.Is(err, errStop) {
		return in, err
	}
	if !d.header {
		return in, fmt.Errorf("session log %s: no header", path)
	}
	in.Updated = last.Time
	if err := tail(f, &in); err != nil {
		return in, err
	}
	in.Live = locked(path)
	return in, nil
}

// tail counts the complete lines of f and takes Updated from the last one
// that is not a checkpoint.
func tail(f *os.File, in *Info) error {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	buf := make([]byte, 256<<10)
	var size, lastNL int64 = 0, -1
	var prevNL int64
	var title [2]int64 // the last title record's line: start, end
	// The last line that is not a checkpoint's: a prompt's "after" is logged
	// in the background, and must not make its session look the newest.
	var when [2]int64
	for {
		n, err := f.Read(buf)
		for i := 0; i < n; {
			j := bytes.IndexByte(buf[i:n], '\n')
			if j < 0 {
				break
			}
			prevNL, lastNL = lastNL, size+int64(i+j)
			in.Records++
			if isType(f, buf[:n], size, prevNL+1, lastNL, titlePrefix) {
				title = [2]int64{prevNL + 1, lastNL}
			}
			if !isType(f, buf[:n], size, prevNL+1, lastNL, checkpointPrefix) {
				when = [2]int64{prevNL + 1, lastNL}
			}
			i += j + 1
		}
		size += int64(n)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
	}
	if lastNL < 0 {
		return nil
	}
	if title[1] > 0 {
		line := make([]byte, title[1]-title[0])
		var r Record
		if _, err := f.ReadAt(line, title[0]); err == nil && json.Unmarshal(line, &r) == nil {
			in.Title = r.Text
		}
	}
	if when[1] == 0 {
		return nil
	}
	line := make([]byte, when[1]-when[0])
	if _, err := f.ReadAt(line, when[0]); err != nil {
		return err
	}
	// Only the time is needed: a probe skips decoding the record's body.
	var p struct {
		Time time.Time `json:"time"`
	}
	if json.Unmarshal(line, &p) == nil && !p.Time.IsZero() {
		in.Updated = p.Time
	}
	return nil
}

// Live reports whether a dsh process has the log at path open for writing, as
// Info.Live does for a listed session.
func Live(path string) bool { return locked(path) }

// titlePrefix and checkpointPrefix start every title and checkpoint record's
// line: the log writes the type first.
var (
	titlePrefix      = []byte(`{"type":"title"`)
	checkpointPrefix = []byte(`{"type":"checkpoint"`)
)

// isType says the line from start to end (offsets in f) is a record of the
// type its prefix names (titlePrefix, checkpointPrefix),
// looking at buf, the bytes of f from off on, where it can: a line begun in
// an earlier read is probed in the file.
func isType(f *os.File, buf []byte, off, start, end int64, prefix []byte) bool {
	if end-start < int64(len(prefix)) {
		return false
	}
	if start >= off {
		return bytes.HasPrefix(buf[start-off:], prefix)
	}
	head := make([]byte, len(prefix))
	_, err := f.ReadAt(head, start)
	return err == nil && bytes.Equal(head, prefix)
}
