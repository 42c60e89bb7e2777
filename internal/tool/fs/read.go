package fs

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/tool"
	"github.com/dsh-dev/dsh/internal/workspace"
)

var (
	//go:embed read.md
	readDescription string
	//go:embed read_guidance.md
	readGuidance string
)

// ReadParams are the arguments of the read tool.
type ReadParams struct {
	Path   string `json:"path" jsonschema_description:"The file to read: relative to the current directory, or absolute."`
	Offset int    `json:"offset,omitzero" jsonschema:"minimum=1" jsonschema_description:"The 1-based line number to start reading at. Defaults to 1."`
	Limit  int    `json:"limit,omitzero" jsonschema:"minimum=1" jsonschema_description:"The maximum number of lines to read. Defaults to 2000."`
}

// Read returns the read tool: a window of a text file as numbered lines, or an image.
func Read() tool.Tool {
	return tool.New(tool.Spec[ReadParams, readMeta]{
		Name:          "read",
		Hook:          readHook,
		Unhook:        readUnhook,
		HookResponse:  readResponse,
		Description:   readDescription,
		Guidance:      readGuidance,
		ReadOnly:      true,
		Permission:    tool.PermNone,
		Kind:          card.ToolRead,
		Execute:       readExecute,
		PresentCall:   func(p ReadParams, _ *readMeta) card.Call { return presentReadCall(p) },
		PresentResult: presentReadResult,
		Fold:          func(s *tool.Session, _ ReadParams, r tool.Result, m *readMeta) { foldStamp(s, r, readStampOf(m)) },
		Touched: func(_ ReadParams, r tool.Result, m *readMeta) []string {
			if r.IsError || m == nil {
				return nil
			}
			return []string{m.Path}
		},
	})
}

const (
	readDefaultLimit = 2000
	readMaxLineChars = 2000
	readMaxBytes     = 50 << 10 // numbered output per call
	readMaxImage     = 5 << 20
	readSniffBytes   = 8 << 10
	// readChunkBytes is the read size of the streaming scan: large enough that
	// syscalls vanish next to the vectorised newline count, small enough that the
	// chunk is still in cache when it is counted.
	readChunkBytes = 256 << 10
	// readLineKeep bounds the bytes kept of one line: any line longer than that
	// has more than readMaxLineChars characters and is cut anyway.
	readLineKeep = 4*readMaxLineChars + 8
	// readMaxSuggestDir bounds the directory entries scanned for suggestions.
	readMaxSuggestDir = 1000
)

var (
	readBOM       = []byte("\xEF\xBB\xBF")
	readTruncated = fmt.Sprintf("… (line truncated to %d characters)", readMaxLineChars)
)

func readExecute(ctx context.Context, env tool.Env, p ReadParams, _ *readMeta) (tool.Result, *readMeta, error) {
	r, m := readFile(ctx, env, p)
	return r, m, nil
}

func readFile(ctx context.Context, env tool.Env, p ReadParams) (tool.Result, *readMeta) {
	loc, err := env.Session.Workspace.Locate(p.Path)
	if err != nil {
		return tool.Errorf("Cannot read %s: %v.", p.Path, err), nil
	}
	// Look before opening: a device is not opened at all. The open itself never
	// blocks (a FIFO), and what was opened is checked again.
	fi, err := loc.Lstat()
	if err != nil {
		if errors.Is(err, iofs.ErrNotExist) {
			return readNotFound(p.Path, loc), nil
		}
		return tool.Errorf("Cannot read %s: %v.", p.Path, err), nil
	}
	if r, bad := readRefuse(p.Path, fi); bad {
		return r, nil
	}
	f, err := loc.Open()
	if err != nil {
		return tool.Errorf("Cannot read %s: %v.", p.Path, err), nil
	}
	defer func() { _ = f.Close() }()
	// The stamp must describe what is actually read, so it comes from the open file.
	if fi, err = f.Stat(); err != nil {
		return tool.Errorf("Cannot read %s: %v.", p.Path, err), nil
	}
	if r, bad := readRefuse(p.Path, fi); bad {
		return r, nil
	}

	head := make([]byte, readSniffBytes)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return tool.Errorf("Cannot read %s: %v.", p.Path, err), nil
	}
	head = head[:n]
	if mime := readImageType(head); mime != "" {
		return readImage(f, p.Path, fi.Size(), mime), nil
	}
	if readLooksBinary(head) {
		return tool.Errorf("Cannot read %s: it looks like a binary file. Only text files and PNG, JPEG, GIF or WebP images can be read.", p.Path), nil
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return tool.Errorf("Cannot read %s: %v.", p.Path, err), nil
	}

	offset := max(p.Offset, 1)
	limit := p.Limit
	if limit <= 0 {
		limit = readDefaultLimit
	}
	var src io.Reader = f
	size := fi.Size()
	fromEditor := editorReads(env, loc, fi)
	if fromEditor {
		text, err := env.Session.Files.ReadText(ctx, loc)
		switch {
		case errors.Is(err, tool.ErrUseDisk):
			fromEditor = false
		case err != nil:
			return tool.Errorf("Cannot read %s: the editor did not give it: %v.", p.Path, err), nil
		default:
			src, size = strings.NewReader(text), int64(len(text))
		}
	}
	h := newPrefixHash()
	w, err := readScan(ctx, io.TeeReader(src, h), offset, limit, stampHashBytes, size)
	if err != nil {
		return tool.Errorf("Cannot read %s: %v.", p.Path, err), nil
	}
	if w.total > 0 && offset > w.total && !w.atLeast {
		return tool.Errorf("Offset %d is beyond the end of %s, which has %s. Use an offset from 1 to %d.",
			offset, p.Path, readPlural(w.total, "line"), w.total), nil
	}
	abs := loc.Abs()
	return tool.Result{Content: []card.Content{card.Text(readEnvelope(abs, readBody(w)))}}, &readMeta{
		Path:              abs,
		Offset:            offset,
		Lines:             w.lines,
		TotalLines:        w.total,
		TotalLinesAtLeast: w.atLeast,
		Lang:              langFromPath(abs),
		Stamp:             stampOf(loc.Real(), fi, h),
		Editor:            fromEditor,
	}
}

// editorMaxBytes bounds what is read from an editor, which sends a file whole:
// a larger file is read from the disk.
const editorMaxBytes = 8 << 20

// editorReads says whether a text file is read through the session's editor:
// one that offers reads, for a file of the workspace that is not too large,
// while no process of the session runs (one could swap the path the editor
// opens by name).
func editorReads(env tool.Env, loc workspace.File, fi iofs.FileInfo) bool {
	f := env.Session.Files
	return f != nil && f.CanRead() && fi.Size() <= editorMaxBytes && env.Session.Workspace.Contains(loc.Abs()) &&
		!env.Session.Running()
}

// readRefuse refuses what is not a regular file.
func readRefuse(display string, fi iofs.FileInfo) (tool.Result, bool) {
	switch {
	case fi.IsDir():
		return tool.Errorf("Cannot read %s: it is a directory, not a file. List it with a shell command instead.", display), true
	case !fi.Mode().IsRegular():
		return tool.Errorf("Cannot read %s: it is not a regular file (%v).", display, fi.Mode().Type()), true
	}
	return tool.Result{}, false
}

func readStampOf(m *readMeta) *fileStamp {
	if m == nil {
		return nil
	}
	return m.Stamp
}

// readBody renders the numbered lines and the footer that tells the model whether
// the file goes on and exactly where to resume.
func readBody(w readWindow) string {
	var b strings.Builder
	for _, l := range w.lines {
		b.WriteString(strconv.Itoa(l.Number))
		b.WriteString(": ")
		b.WriteString(l.Text)
		b.WriteByte('\n')
	}
	if len(w.lines) > 0 {
		b.WriteByte('\n')
	}
	switch {
	case w.total == 0:
		b.WriteString("(File is empty - total 0 lines)")
	case len(w.lines) > 0 && (w.lines[len(w.lines)-1].Number < w.total || w.atLeast):
		first, last := w.lines[0].Number, w.lines[len(w.lines)-1].Number
		lead := "File has more lines."
		if w.capped {
			lead = fmt.Sprintf("Output capped at %d KiB.", readMaxBytes>>10)
		}
		of := strconv.Itoa(w.total)
		if w.atLeast {
			of = "at least " + of
		}
		fmt.Fprintf(&b, "(%s Showing lines %d-%d of %s. Use offset=%d to continue.)", lead, first, last, of, last+1)
	default:
		fmt.Fprintf(&b, "(End of file - total %s)", readPlural(w.total, "line"))
	}
	return b.String()
}

func readPlural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return strconv.Itoa(n) + " " + unit + "s"
}

// readWindow is what one streaming pass over a file yields.
type readWindow struct {
	lines []card.ReadLine // never nil
	total int             // the number of lines in the file
	// atLeast: the count stopped at the scan bound, and the file has more.
	atLeast bool
	capped  bool // the byte cap ended the window early
}

// chunkFor is the scan's read size for a source of size bytes (0 or less: not
// known, as for /proc's files): a small file needs no 256 KiB buffer, which a
// hundred sessions reading at once each allocated and zeroed. One byte more
// than the size reads it whole and sees its end in the next read; a file that
// grew meanwhile is read in chunks of at least 4 KiB.
func chunkFor(size int64) int {
	if size <= 0 || size >= readChunkBytes {
		return readChunkBytes
	}
	return max(int(size)+1, 4<<10)
}

// readScan streams r once: it counts newlines up to line offset, keeps at most
// limit lines and readMaxBytes of numbered output, and then counts the remaining
// newlines without keeping anything, so memory stays O(window) for any file size.
// A final line without a newline counts as a line. Once the window is complete
// and bound bytes have been seen, it stops counting: the total is then a lower
// bound (atLeast), so reading the start of a huge file stays fast. sizeHint is
// r's size as far as it is known (chunkFor).
func readScan(ctx context.Context, r io.Reader, offset, limit int, bound, sizeHint int64) (readWindow, error) {
	w := readWindow{lines: []card.ReadLine{}}
	end := math.MaxInt
	if limit <= math.MaxInt-offset {
		end = offset + limit - 1
	}
	var (
		buf      = make([]byte, chunkFor(sizeHint))
		newlines int    // '\n' seen so far: the current line is newlines+1
		size     int64  // bytes seen so far
		last     byte   // the last byte seen
		line     []byte // the kept prefix of the current line, inside the window
		lineLen  int    // the current line's length in bytes, inside the window
		used     int    // bytes of numbered output so far
		done     bool   // the window is complete: only count from here on
	)
	finish := func() {
		n := newlines + 1
		if done || n < offset {
			return
		}
		text := readLineText(line, lineLen, n == 1)
		cost := len(strconv.Itoa(n)) + len(": ") + len(text) + len("\n")
		if used+cost > readMaxBytes {
			w.capped, done = true, true
			return
		}
		used += cost
		w.lines = append(w.lines, card.ReadLine{Number: n, Text: text})
		done = n >= end
	}
	keep := func(b []byte) {
		lineLen += len(b)
		if room := readLineKeep - len(line); room > 0 {
			line = append(line, b[:min(len(b), room)]...)
		}
	}
	for {
		if err := ctx.Err(); err != nil {
			return w, err
		}
		k, rerr := r.Read(buf)
		chunk := buf[:k]
		if k > 0 {
			size += int64(k)
			last = chunk[k-1]
		}
		for len(chunk) > 0 {
			switch {
			case done:
				newlines += bytes.Count(chunk, []byte{'\n'})
				chunk = nil
			case newlines+1 < offset:
				need := offset - 1 - newlines
				if c := bytes.Count(chunk, []byte{'\n'}); c < need {
					newlines += c
					chunk = nil
					continue
				}
				for ; need > 0; need-- {
					chunk = chunk[bytes.IndexByte(chunk, '\n')+1:]
					newlines++
				}
			default:
				i := bytes.IndexByte(chunk, '\n')
				if i < 0 {
					keep(chunk)
					chunk = nil
					continue
				}
				keep(chunk[:i])
				finish()
				newlines++
				line, lineLen = line[:0], 0
				chunk = chunk[i+1:]
			}
		}
		if errors.Is(rerr, io.EOF) {
			break
		}
		if rerr != nil {
			return w, rerr
		}
		if !done && size >= bound && newlines+1 >= offset && lineLen > readLineKeep {
			// A window line longer than the bound: it is cut anyway, and finding
			// its end (and the lines after it) could mean scanning the whole file.
			finish()
			done = true
		}
		if done && size >= bound {
			var one [1]byte
			_, err := io.ReadFull(r, one[:])
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return w, err
			}
			// More follows: the line in progress, or one starting after it.
			w.total, w.atLeast = newlines+1, true
			return w, nil
		}
	}
	if size > 0 && last != '\n' {
		finish()
		newlines++
	}
	w.total = newlines
	return w, nil
}

// readLineText turns the kept bytes of a line of full bytes into display text: a
// BOM (first line) and a CR before the newline go, invalid UTF-8 becomes U+FFFD so
// the JSON stays valid, and a line over readMaxLineChars characters is cut with a
// marker.
func readLineText(b []byte, full int, first bool) string {
	cut := full > len(b)
	if first {
		b = bytes.TrimPrefix(b, readBOM)
	}
	if !cut {
		b = bytes.TrimSuffix(b, []byte{'\r'})
	}
	s := strings.ToValidUTF8(string(b), "\uFFFD")
	if !cut && utf8.RuneCountInString(s) <= readMaxLineChars {
		return s
	}
	n := 0
	for i := range s {
		if n == readMaxLineChars {
			s = s[:i]
			break
		}
		n++
	}
	return s + readTruncated
}

// readImageType returns the MIME type of a supported image from its magic bytes.
func readImageType(head []byte) string {
	switch {
	case bytes.HasPrefix(head, []byte("\x89PNG\r\n\x1a\n")):
		return "image/png"
	case bytes.HasPrefix(head, []byte("\xFF\xD8\xFF")):
		return "image/jpeg"
	case bytes.HasPrefix(head, []byte("GIF87a")), bytes.HasPrefix(head, []byte("GIF89a")):
		return "image/gif"
	case len(head) >= 12 && string(head[:4]) == "RIFF" && string(head[8:12]) == "WEBP":
		return "image/webp"
	}
	return ""
}

func readImage(f *os.File, display string, size int64, mime string) tool.Result {
	if size > readMaxImage {
		return tool.Errorf("Cannot read %s: the image is %.1f MiB; images up to %d MiB can be read.",
			display, float64(size)/(1<<20), readMaxImage>>20)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return tool.Errorf("Cannot read %s: %v.", display, err)
	}
	data, err := io.ReadAll(io.LimitReader(f, readMaxImage+1))
	if err != nil {
		return tool.Errorf("Cannot read %s: %v.", display, err)
	}
	if len(data) > readMaxImage {
		return tool.Errorf("Cannot read %s: the image grew past %d MiB while being read.", display, readMaxImage>>20)
	}
	return tool.Result{Content: []card.Content{card.Image(mime, base64.StdEncoding.EncodeToString(data))}}
}

// readLooksBinary judges the first bytes of a file: a NUL byte, or more than 30%
// control bytes and invalid UTF-8, means binary.
func readLooksBinary(head []byte) bool {
	if bytes.IndexByte(head, 0) >= 0 {
		return true
	}
	bad := 0
	for i := 0; i < len(head); {
		c := head[i]
		if c < utf8.RuneSelf {
			if c == 0x7f || (c < 0x20 && !strings.ContainsRune("\t\n\v\f\r\b\x1b", rune(c))) {
				bad++
			}
			i++
			continue
		}
		if !utf8.FullRune(head[i:]) {
			break // a character cut by the end of the sample
		}
		r, n := utf8.DecodeRune(head[i:])
		if r == utf8.RuneError && n == 1 {
			bad++
		}
		i += n
	}
	return bad*10 > len(head)*3
}

// readNotFound explains a missing file and suggests similarly named files beside it.
func readNotFound(display string, loc workspace.File) tool.Result {
	names, err := loc.Siblings(readMaxSuggestDir) // a partial listing still helps
	if len(names) == 0 && err != nil {
		if errors.Is(err, iofs.ErrNotExist) {
			return tool.Errorf("File not found: %s (its directory %s does not exist either).", display, filepath.Dir(display))
		}
		return tool.Errorf("File not found: %s.", display)
	}
	similar := readSimilar(filepath.Base(loc.Abs()), names, 3)
	if len(similar) == 0 {
		return tool.Errorf("File not found: %s.", display)
	}
	for i, s := range similar {
		similar[i] = filepath.Join(filepath.Dir(display), s)
	}
	return tool.Errorf("File not found: %s. Did you mean: %s?", display, strings.Join(similar, ", "))
}

// readSimilar picks up to n names like base, best first: the same name in another
// case, a few typos away, the same stem with another extension, containing its stem.
func readSimilar(base string, names []string, n int) []string {
	type scored struct {
		name  string
		score int
	}
	lb := strings.ToLower(base)
	stem := strings.TrimSuffix(lb, filepath.Ext(lb))
	budget := max(2, utf8.RuneCountInString(lb)/4)
	var found []scored
	for _, name := range names {
		ln := strings.ToLower(name)
		ns := strings.TrimSuffix(ln, filepath.Ext(ln))
		score := -1
		d, near := readDistance(lb, ln, budget)
		switch {
		case ln == lb:
			score = 0
		case near:
			score = 1 + d
		case stem != "" && ns == stem:
			score = 2 + budget // after every typo-close name
		case len(stem) >= 3 && strings.Contains(ln, stem):
			score = 3 + budget
		}
		if score >= 0 {
			found = append(found, scored{name, score})
		}
	}
	slices.SortFunc(found, func(a, b scored) int {
		if a.score != b.score {
			return a.score - b.score
		}
		return strings.Compare(a.name, b.name)
	})
	out := make([]string, 0, n)
	for _, f := range found[:min(n, len(found))] {
		out = append(out, f.name)
	}
	return out
}

// readDistance is the Levenshtein distance of a and b if it is at most budget.
func readDistance(a, b string, budget int) (int, bool) {
	ra, rb := []rune(a), []rune(b)
	if len(ra) > 128 || len(rb) > 128 || max(len(ra)-len(rb), len(rb)-len(ra)) > budget {
		return 0, false
	}
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			sub := prev[j-1]
			if ra[i-1] != rb[j-1] {
				sub++
			}
			cur[j] = min(sub, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	d := prev[len(rb)]
	return d, d <= budget
}
