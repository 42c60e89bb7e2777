package fs

import (
	"bytes"
	"context"
	"encoding/base64"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"testing/iotest"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/tool"
	"github.com/dsh-dev/dsh/internal/workspace"
)

var update = flag.Bool("update", false, "rewrite golden files")

// readFixture is a session on a fresh temporary workspace.
type readFixture struct {
	t    *testing.T
	root string
	sess *tool.Session
}

func newReadFixture(t *testing.T, allowOutside bool) *readFixture {
	t.Helper()
	root := t.TempDir()
	ws, err := workspace.New(root, allowOutside)
	if err != nil {
		t.Fatal(err)
	}
	// The workspace resolves symlinks in its root; use its spelling.
	return &readFixture{t: t, root: ws.Root(), sess: tool.NewSession("test", ws)}
}

// write creates a file under the root and returns its absolute path.
func (f *readFixture) write(rel string, data []byte) string {
	f.t.Helper()
	p := filepath.Join(f.root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		f.t.Fatal(err)
	}
	return p
}

// run calls the read tool through its erased interface, as the agent does, and
// folds the logged result into the session, as the session host does.
func (f *readFixture) run(args string) tool.Result {
	f.t.Helper()
	r := logged(f.t, res(Read().Run(context.Background(), tool.Env{Session: f.sess}, []byte(args), nil)))
	Read().Fold(f.sess, []byte(args), r)
	return r
}

func readArgs(path string, offset, limit int) string {
	m := map[string]any{"path": path}
	if offset > 0 {
		m["offset"] = offset
	}
	if limit > 0 {
		m["limit"] = limit
	}
	b, err := json.Marshal(m, json.Deterministic(true))
	if err != nil {
		panic(err)
	}
	return string(b)
}

// mustRead runs a read that must succeed and returns its text and decoded meta.
func (f *readFixture) mustRead(path string, offset, limit int) (string, readMeta) {
	f.t.Helper()
	r := f.run(readArgs(path, offset, limit))
	if r.IsError {
		f.t.Fatalf("read %s: unexpected error: %s", path, r.TextOf())
	}
	if len(r.Content) != 1 || r.Content[0].Type != "text" {
		f.t.Fatalf("read %s: want one text block, got %+v", path, r.Content)
	}
	m := tool.DecodeMeta[readMeta](r.Meta)
	if m == nil {
		f.t.Fatalf("read %s: meta does not decode: %s", path, r.Meta)
	}
	return r.Content[0].Text, *m
}

// mustFail runs a read that must fail and returns its message.
func (f *readFixture) mustFail(args string) string {
	f.t.Helper()
	r := f.run(args)
	if !r.IsError {
		f.t.Fatalf("read %s: want an error, got %s", args, r.TextOf())
	}
	if r.Meta != nil {
		f.t.Fatalf("error result carries meta %s", r.Meta)
	}
	return r.TextOf()
}

func readNumbered(n int) []byte {
	var b bytes.Buffer
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.Bytes()
}

func readWantLines(t *testing.T, got []card.ReadLine, first, last int, text func(int) string) {
	t.Helper()
	if len(got) != last-first+1 {
		t.Fatalf("got %d lines, want %d-%d", len(got), first, last)
	}
	for i, l := range got {
		n := first + i
		if l.Number != n || l.Text != text(n) {
			t.Fatalf("line %d = %+v, want {%d %q}", i, l, n, text(n))
		}
	}
}

func readLineN(n int) string { return "line " + strconv.Itoa(n) }

func TestReadWholeSmallFile(t *testing.T) {
	f := newReadFixture(t, false)
	abs := f.write("a.txt", readNumbered(3))
	text, m := f.mustRead("a.txt", 0, 0)
	want := "<path>" + abs + "</path>\n<type>file</type>\n<content>\n" +
		"1: line 1\n2: line 2\n3: line 3\n\n(End of file - total 3 lines)\n</content>"
	if text != want {
		t.Fatalf("text:\n%s\nwant:\n%s", text, want)
	}
	if m.Path != abs || m.Offset != 1 || m.TotalLines != 3 || m.Lang != "" {
		t.Fatalf("meta = %+v", m)
	}
	readWantLines(t, m.Lines, 1, 3, readLineN)
}

func TestReadWindowWithOffsetAndLimit(t *testing.T) {
	f := newReadFixture(t, false)
	f.write("a.py", readNumbered(10))
	text, m := f.mustRead("a.py", 3, 4)
	readWantLines(t, m.Lines, 3, 6, readLineN)
	if m.Offset != 3 || m.TotalLines != 10 || m.Lang != "python" {
		t.Fatalf("meta = %+v", m)
	}
	if !strings.Contains(text, "\n3: line 3\n") || strings.Contains(text, "2: line 2") || strings.Contains(text, "7: line 7") {
		t.Fatalf("window text wrong:\n%s", text)
	}
	if !strings.HasSuffix(text, "\n(File has more lines. Showing lines 3-6 of 10. Use offset=7 to continue.)\n</content>") {
		t.Fatalf("footer wrong:\n%s", text)
	}
	// The window that reaches the end says so.
	text, m = f.mustRead("a.py", 7, 100)
	readWantLines(t, m.Lines, 7, 10, readLineN)
	if !strings.HasSuffix(text, "\n(End of file - total 10 lines)\n</content>") {
		t.Fatalf("footer wrong:\n%s", text)
	}
}

func TestReadDefaultWindowIs2000Lines(t *testing.T) {
	f := newReadFixture(t, false)
	f.write("big.txt", readNumbered(2500))
	text, m := f.mustRead("big.txt", 0, 0)
	readWantLines(t, m.Lines, 1, 2000, readLineN)
	if m.TotalLines != 2500 {
		t.Fatalf("totalLines = %d", m.TotalLines)
	}
	if !strings.Contains(text, "(File has more lines. Showing lines 1-2000 of 2500. Use offset=2001 to continue.)") {
		t.Fatalf("footer wrong: %s", text[len(text)-200:])
	}
}

func TestReadByteCapSaysWhereToResume(t *testing.T) {
	f := newReadFixture(t, false)
	// Several widths, so that the slack left under the cap differs.
	for _, width := range []int{100, 37, 251, 1999} {
		long := strings.Repeat("x", width)
		name := fmt.Sprintf("wide%d.txt", width)
		f.write(name, bytes.Repeat([]byte(long+"\n"), 3000))
		text, m := f.mustRead(name, 1, 3000)

		// The last line that fits, computed independently of the tool.
		used, last := 0, 0
		for n := 1; ; n++ {
			cost := len(fmt.Sprintf("%d: %s\n", n, long))
			if used+cost > 50*1024 {
				break
			}
			used, last = used+cost, n
		}
		readWantLines(t, m.Lines, 1, last, func(int) string { return long })
		if m.TotalLines != 3000 {
			t.Fatalf("width %d: totalLines = %d", width, m.TotalLines)
		}
		footer := fmt.Sprintf("(Output capped at 50 KiB. Showing lines 1-%d of 3000. Use offset=%d to continue.)", last, last+1)
		if !strings.Contains(text, footer) {
			t.Fatalf("width %d: want footer %q in ...%s", width, footer, text[len(text)-200:])
		}
		body, _ := readStripEnvelope(text)
		numberedPart, _, _ := strings.Cut(body, "\n\n(")
		if len(numberedPart)+1 != used {
			t.Fatalf("width %d: numbered output is %d bytes, want %d", width, len(numberedPart)+1, used)
		}
		// Resuming where the footer says continues without a gap.
		_, m2 := f.mustRead(name, last+1, 0)
		if m2.Lines[0].Number != last+1 {
			t.Fatalf("width %d: resume starts at %d", width, m2.Lines[0].Number)
		}
	}
}

func TestReadLongLinesAreCut(t *testing.T) {
	f := newReadFixture(t, false)
	exact := strings.Repeat("a", 2000)
	over := strings.Repeat("b", 2001)
	wide := strings.Repeat("é", 3000)                    // 2 bytes a character
	huge := strings.Repeat("0123456789", 300_000) + "\r" // 3 MB: spans scan chunks
	f.write("long.txt", []byte(exact+"\n"+over+"\n"+wide+"\n"+huge+"\n"+"after\n"))
	text, m := f.mustRead("long.txt", 0, 0)
	want := []string{
		exact,
		strings.Repeat("b", 2000) + "… (line truncated to 2000 characters)",
		strings.Repeat("é", 2000) + "… (line truncated to 2000 characters)",
		strings.Repeat("0123456789", 200) + "… (line truncated to 2000 characters)",
		"after",
	}
	if len(m.Lines) != len(want) || m.TotalLines != 5 {
		t.Fatalf("meta has %d lines, totalLines %d", len(m.Lines), m.TotalLines)
	}
	for i, w := range want {
		if m.Lines[i].Number != i+1 || m.Lines[i].Text != w {
			t.Fatalf("line %d = %d %.40q…, want %.40q…", i+1, m.Lines[i].Number, m.Lines[i].Text, w)
		}
		if !strings.Contains(text, fmt.Sprintf("\n%d: %s\n", i+1, w)) {
			t.Fatalf("text lacks line %d", i+1)
		}
	}
}

func TestReadCRLFAndBOM(t *testing.T) {
	f := newReadFixture(t, false)
	f.write("dos.txt", []byte("\xEF\xBB\xBFfirst\r\nsecond\r\n\r\nlast"))
	text, m := f.mustRead("dos.txt", 0, 0)
	want := []card.ReadLine{{Number: 1, Text: "first"}, {Number: 2, Text: "second"}, {Number: 3, Text: ""}, {Number: 4, Text: "last"}}
	if !slices.Equal(m.Lines, want) || m.TotalLines != 4 {
		t.Fatalf("meta = %+v", m)
	}
	if strings.ContainsAny(text, "\r\uFEFF") {
		t.Fatalf("CR or BOM leaked into the text: %q", text)
	}
	// A BOM is only a BOM at the start of the file.
	f.write("mid.txt", []byte("a\n\xEF\xBB\xBFb\n"))
	_, m = f.mustRead("mid.txt", 0, 0)
	if m.Lines[1].Text != "\uFEFFb" {
		t.Fatalf("line 2 = %q", m.Lines[1].Text)
	}
}

func TestReadInvalidUTF8StaysValidJSON(t *testing.T) {
	f := newReadFixture(t, false)
	f.write("latin1.txt", []byte("caf\xe9 ok\nplain\n\xff\xfe\xfd mixed é\n"))
	r := f.run(readArgs("latin1.txt", 0, 0))
	if r.IsError {
		t.Fatal(r.TextOf())
	}
	enc, err := json.Marshal(r)
	if err != nil {
		t.Fatalf("result does not marshal: %v", err)
	}
	if !jsontext.Value(enc).IsValid() || !r.Meta.IsValid() {
		t.Fatalf("invalid JSON: %s", enc)
	}
	m := tool.DecodeMeta[readMeta](r.Meta)
	if m == nil {
		t.Fatalf("meta does not decode: %s", r.Meta)
	}
	if m.Lines[0].Text != "caf\uFFFD ok" || m.Lines[2].Text != "\uFFFD mixed é" {
		t.Fatalf("lines = %+v", m.Lines)
	}
}

func TestReadRefusesDirectory(t *testing.T) {
	f := newReadFixture(t, false)
	f.write("sub/x.txt", []byte("x\n"))
	msg := f.mustFail(readArgs("sub", 0, 0))
	if !strings.Contains(msg, "sub") || !strings.Contains(msg, "is a directory") {
		t.Fatalf("message = %q", msg)
	}
}

func TestReadRefusesBinary(t *testing.T) {
	f := newReadFixture(t, false)
	f.write("nul.bin", []byte("ELF\x00\x01\x02 some text after"))
	ctl := bytes.Repeat([]byte{0x01, 0x02, 0x03, 'a'}, 100)
	f.write("ctl.dat", ctl)
	for _, name := range []string{"nul.bin", "ctl.dat"} {
		msg := f.mustFail(readArgs(name, 0, 0))
		if !strings.Contains(msg, "binary") {
			t.Fatalf("%s: message = %q", name, msg)
		}
	}
	// Terminal colours in a log are text; a NUL past the sample does not make it binary.
	f.write("color.log", []byte("\x1b[31mred\x1b[0m\tand\fform feed\n"))
	f.mustRead("color.log", 0, 0)
	late := append(bytes.Repeat([]byte("text\n"), 4000), 0)
	f.write("late.txt", late)
	_, m := f.mustRead("late.txt", 4001, 0)
	if m.TotalLines != 4001 || m.Lines[0].Text != "\x00" {
		t.Fatalf("meta = %+v", m)
	}
}

func TestReadLooksBinary(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []byte
		want bool
	}{
		{"empty", nil, false},
		{"ascii", []byte("hello\nworld\n"), false},
		{"utf8", []byte("héllo wörld ✓\n"), false},
		{"nul", []byte("abc\x00def"), true},
		{"mostly control", bytes.Repeat([]byte{0x01, 0x02, 'a'}, 50), true},
		{"some control", append(bytes.Repeat([]byte("text "), 20), 0x01, 0x02), false},
		{"mostly invalid utf8", bytes.Repeat([]byte{0xff, 0xfe, 'a'}, 50), true},
		{"latin1 accents", []byte("caf\xe9 na\xefve r\xe9sum\xe9 and a lot more plain text"), false},
		{"cut multibyte at end", append(bytes.Repeat([]byte("x"), 10), 0xe2, 0x9c), false},
	} {
		if got := readLooksBinary(tc.in); got != tc.want {
			t.Errorf("%s: readLooksBinary = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestReadMissingFileSuggestsSimilarNames(t *testing.T) {
	f := newReadFixture(t, false)
	for _, n := range []string{"main.go", "README.md", "config.yaml", "server_test.go", "unrelated.txt"} {
		f.write("pkg/"+n, []byte("x\n"))
	}
	for _, tc := range []struct {
		path string
		want string // a suggestion that must appear
		not  string // a suggestion that must not
	}{
		{"pkg/mian.go", "pkg/main.go", "unrelated.txt"},
		{"pkg/readme.md", "pkg/README.md", "main.go"},
		{"pkg/config.yml", "pkg/config.yaml", "README"},
		{"pkg/server.go", "pkg/server_test.go", "unrelated"},
	} {
		msg := f.mustFail(readArgs(tc.path, 0, 0))
		if !strings.HasPrefix(msg, "File not found: "+tc.path+". Did you mean: ") ||
			!strings.Contains(msg, tc.want) || strings.Contains(msg, tc.not) {
			t.Errorf("%s: message = %q", tc.path, msg)
		}
	}
	if msg := f.mustFail(readArgs("pkg/zzzzzz.rs", 0, 0)); msg != "File not found: pkg/zzzzzz.rs." {
		t.Errorf("no-suggestion message = %q", msg)
	}
	if msg := f.mustFail(readArgs("nodir/a.txt", 0, 0)); !strings.Contains(msg, "does not exist either") {
		t.Errorf("missing-directory message = %q", msg)
	}
}

func TestReadSimilarRanksCloseNamesFirst(t *testing.T) {
	names := []string{"zeta.go", "Main.go", "main.rs", "man.go", "maintainers.txt"}
	got := readSimilar("main.go", names, 3)
	want := []string{"Main.go", "man.go", "main.rs"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("readSimilar = %v, want %v", got, want)
	}
	// A typo beats a shared stem.
	if got := readSimilar("go.sun", []string{"go.mod", "go.sum", "main.go"}, 3); fmt.Sprint(got) != "[go.sum go.mod]" {
		t.Fatalf("readSimilar(go.sun) = %v", got)
	}
}

func TestReadImages(t *testing.T) {
	f := newReadFixture(t, false)
	img := image.NewRGBA(image.Rect(0, 0, 4, 3))
	img.Set(1, 1, color.RGBA{R: 255, A: 255})
	var pngB, jpgB, gifB bytes.Buffer
	if err := png.Encode(&pngB, img); err != nil {
		t.Fatal(err)
	}
	if err := jpeg.Encode(&jpgB, img, nil); err != nil {
		t.Fatal(err)
	}
	if err := gif.Encode(&gifB, img, nil); err != nil {
		t.Fatal(err)
	}
	// A minimal lossless WebP container: the tool goes by the RIFF/WEBP header.
	webp := []byte("RIFF\x1a\x00\x00\x00WEBPVP8L\x0d\x00\x00\x00\x2f\x00\x00\x00\x10\x07\x10\x11\x11\x88\x88\xfe\x07\x00")
	for _, tc := range []struct {
		name, mime string
		data       []byte
	}{
		{"dot.png", "image/png", pngB.Bytes()},
		{"dot.jpg", "image/jpeg", jpgB.Bytes()},
		{"dot.gif", "image/gif", gifB.Bytes()},
		{"dot.webp", "image/webp", webp},
		{"no-extension", "image/png", pngB.Bytes()}, // sniffed, not guessed from the name
	} {
		f.write(tc.name, tc.data)
		r := f.run(readArgs(tc.name, 0, 0))
		if r.IsError || len(r.Content) != 1 {
			t.Fatalf("%s: %+v", tc.name, r)
		}
		c := r.Content[0]
		got, err := base64.StdEncoding.DecodeString(c.Data)
		if c.Type != "image" || c.MimeType != tc.mime || err != nil || !bytes.Equal(got, tc.data) {
			t.Fatalf("%s: block %s %s, decoded equal=%v err=%v", tc.name, c.Type, c.MimeType, bytes.Equal(got, tc.data), err)
		}
		if card := Read().PresentResult([]byte(readArgs(tc.name, 0, 0)), r); card != nil {
			t.Fatalf("%s: image result should fall back to raw content, got %T", tc.name, card)
		}
	}
	big := append(append([]byte{}, pngB.Bytes()[:8]...), make([]byte, 5<<20)...)
	f.write("big.png", big)
	if msg := f.mustFail(readArgs("big.png", 0, 0)); !strings.Contains(msg, "up to 5 MiB") {
		t.Fatalf("big image message = %q", msg)
	}
	// Exactly 5 MiB is still allowed.
	f.write("edge.png", big[:5<<20])
	if r := f.run(readArgs("edge.png", 0, 0)); r.IsError || r.Content[0].Type != "image" {
		t.Fatalf("5 MiB image refused: %s", r.TextOf())
	}
}

func TestReadOffsetPastEnd(t *testing.T) {
	f := newReadFixture(t, false)
	f.write("five.txt", readNumbered(5))
	msg := f.mustFail(readArgs("five.txt", 6, 0))
	if msg != "Offset 6 is beyond the end of five.txt, which has 5 lines. Use an offset from 1 to 5." {
		t.Fatalf("message = %q", msg)
	}
	_, m := f.mustRead("five.txt", 5, 0)
	readWantLines(t, m.Lines, 5, 5, readLineN)
	f.write("one.txt", []byte("only"))
	if msg := f.mustFail(readArgs("one.txt", 2, 0)); !strings.Contains(msg, "which has 1 line.") {
		t.Fatalf("message = %q", msg)
	}
	// An empty file has no end to be past.
	f.write("empty.txt", nil)
	for _, off := range []int{0, 1, 10} {
		text, m := f.mustRead("empty.txt", off, 0)
		if len(m.Lines) != 0 || m.TotalLines != 0 || m.Offset != max(off, 1) {
			t.Fatalf("offset %d: meta = %+v", off, m)
		}
		if !strings.HasSuffix(text, "<content>\n(File is empty - total 0 lines)\n</content>") {
			t.Fatalf("offset %d: text = %q", off, text)
		}
	}
}

func TestReadBadArguments(t *testing.T) {
	f := newReadFixture(t, false)
	f.write("a.txt", readNumbered(2))
	for _, args := range []string{
		`{}`,
		`{"path": 3}`,
		`{"path": "a.txt", "offset": 0}`,
		`{"path": "a.txt", "limit": 0}`,
		`{"path": "a.txt", "offset": 1.5}`,
		`{"path": "a.txt", "extra": true}`,
		`{"path": ""}`,
	} {
		msg := f.mustFail(args)
		if msg == "" {
			t.Errorf("%s: empty error", args)
		}
	}
}

func TestReadConfinement(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.txt")
	if err := os.WriteFile(secret, []byte("secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f := newReadFixture(t, false)
	if err := os.Symlink(secret, filepath.Join(f.root, "link.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(f.root, "linkdir")); err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(f.root, secret)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{secret, rel, "link.txt", "linkdir/secret.txt"} {
		msg := f.mustFail(readArgs(p, 0, 0))
		if !strings.Contains(msg, "outside the workspace") || strings.Contains(msg, "secret\n") {
			t.Errorf("%s: message = %q", p, msg)
		}
	}
	// An inside symlink to an inside file is fine.
	target := f.write("real.txt", []byte("real\n"))
	if err := os.Symlink(target, filepath.Join(f.root, "alias.txt")); err != nil {
		t.Fatal(err)
	}
	if _, m := f.mustRead("alias.txt", 0, 0); m.Lines[0].Text != "real" {
		t.Fatalf("alias: %+v", m)
	}
	// The user can allow it.
	open := newReadFixture(t, true)
	if _, m := open.mustRead(secret, 0, 0); m.Lines[0].Text != "secret" {
		t.Fatalf("allowOutside: %+v", m)
	}
}

func TestReadRelativeToSessionCwd(t *testing.T) {
	f := newReadFixture(t, false)
	f.write("sub/f.txt", []byte("in sub\n"))
	f.write("f.txt", []byte("at root\n"))
	if err := f.sess.Workspace.SetCwd("sub"); err != nil {
		t.Fatal(err)
	}
	_, m := f.mustRead("f.txt", 0, 0)
	if m.Lines[0].Text != "in sub" || m.Path != filepath.Join(f.root, "sub", "f.txt") {
		t.Fatalf("meta = %+v", m)
	}
	if _, m = f.mustRead("../f.txt", 0, 0); m.Lines[0].Text != "at root" {
		t.Fatalf("meta = %+v", m)
	}
}

func TestReadRefusesNonRegularFile(t *testing.T) {
	f := newReadFixture(t, false)
	fifo := filepath.Join(f.root, "pipe")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	// Opening a FIFO would block until a writer came; the tool must refuse before
	// that. The guard only turns such a hang into a failure; it measures nothing.
	done := make(chan tool.Result, 1)
	go func() { done <- f.run(readArgs("pipe", 0, 0)) }()
	select {
	case r := <-done:
		if !r.IsError || !strings.Contains(r.TextOf(), "not a regular file") {
			t.Fatalf("result = %+v", r)
		}
	case <-time.After(time.Minute):
		t.Fatal("reading a FIFO blocked")
	}
}

// fileStampNow stamps a file as the tools would, for tests.
func fileStampNow(t *testing.T, p string) *fileStamp {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return stampData(p, fi, data)
}

func TestReadRecordsStampOnlyOnSuccess(t *testing.T) {
	f := newReadFixture(t, false)
	good := f.write("good.txt", []byte("x\n"))
	bad := f.write("bad.bin", []byte("\x00\x00"))
	st := sessionStamps(f.sess)
	if st.check(fileStampNow(t, good), "good.txt") == nil {
		t.Fatal("stamp present before any read")
	}
	_, m := f.mustRead("good.txt", 0, 0)
	if m.Stamp == nil || m.Stamp.Path != good || m.Stamp.Size != 2 {
		t.Fatalf("stamp %+v", m.Stamp)
	}
	if err := st.check(fileStampNow(t, good), "good.txt"); err != nil {
		t.Fatalf("after read: %v", err)
	}
	f.mustFail(readArgs("bad.bin", 0, 0))
	if st.check(fileStampNow(t, bad), "bad.bin") == nil {
		t.Fatal("a refused read recorded a stamp")
	}
}

func TestReadCancelled(t *testing.T) {
	f := newReadFixture(t, false)
	f.write("a.txt", readNumbered(10))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := res(Read().Run(ctx, tool.Env{Session: f.sess}, []byte(readArgs("a.txt", 0, 0)), nil))
	if !r.IsError || !strings.Contains(r.TextOf(), "canceled") {
		t.Fatalf("result = %+v", r)
	}
}

func TestReadExactTotalLinesAcrossChunks(t *testing.T) {
	f := newReadFixture(t, false)
	// Several scan chunks, with the window at the start, the middle and the end.
	var b bytes.Buffer
	for i := 1; b.Len() < 3*readChunkBytes+12345; i++ {
		fmt.Fprintf(&b, "row %d %s\n", i, strings.Repeat("z", i%97))
	}
	data := b.Bytes()
	total := bytes.Count(data, []byte{'\n'})
	f.write("rows.txt", data)
	f.write("rows-noeol.txt", data[:len(data)-1])
	for _, name := range []string{"rows.txt", "rows-noeol.txt"} {
		for _, off := range []int{1, total / 2, total - 5, total} {
			_, m := f.mustRead(name, off, 10)
			if m.TotalLines != total {
				t.Fatalf("%s@%d: totalLines = %d, want %d", name, off, m.TotalLines, total)
			}
			first := fmt.Sprintf("row %d ", off)
			if !strings.HasPrefix(m.Lines[0].Text, first) || m.Lines[len(m.Lines)-1].Number != min(off+9, total) {
				t.Fatalf("%s@%d: window %d..%d starts %q", name, off, m.Lines[0].Number, m.Lines[len(m.Lines)-1].Number, m.Lines[0].Text)
			}
		}
	}
}

// TestReadScanMatchesReference checks the streaming scan against a naive split on
// random inputs, fed in tiny and odd-sized reads so that every chunk boundary case
// (a boundary on a newline, inside a CRLF, inside a line) is hit.
func TestReadScanMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte("ab \t\r\n\n\n")
	for iter := range 400 {
		data := make([]byte, rng.IntN(300))
		for i := range data {
			data[i] = alphabet[rng.IntN(len(alphabet))]
		}
		var ref []string
		if len(data) > 0 {
			ref = strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
		}
		offset := 1 + rng.IntN(len(ref)+2)
		limit := 1 + rng.IntN(20)
		for _, r := range []struct {
			kind string
			rd   io.Reader
		}{
			{"whole", bytes.NewReader(data)},
			{"onebyte", iotest.OneByteReader(bytes.NewReader(data))},
			{"half", iotest.HalfReader(bytes.NewReader(data))},
		} {
			w, err := readScan(context.Background(), r.rd, offset, limit, math.MaxInt64, -1)
			if err != nil {
				t.Fatal(err)
			}
			if w.total != len(ref) {
				t.Fatalf("iter %d %s: total %d, want %d (%q)", iter, r.kind, w.total, len(ref), data)
			}
			want := []card.ReadLine{}
			for n := offset; n <= min(offset+limit-1, len(ref)); n++ {
				want = append(want, card.ReadLine{Number: n, Text: strings.TrimSuffix(ref[n-1], "\r")})
			}
			if !slices.Equal(w.lines, want) {
				t.Fatalf("iter %d %s offset %d limit %d: lines %+v, want %+v (data %q)", iter, r.kind, offset, limit, w.lines, want, data)
			}
		}
	}
}

// TestReadGolden pins the exact model-facing text of a few reads.
func TestReadGolden(t *testing.T) {
	f := newReadFixture(t, false)
	sample, err := os.ReadFile(filepath.Join("testdata", "read", "sample.go"))
	if err != nil {
		t.Fatal(err)
	}
	f.write("sample.go", sample)
	f.write("dos.txt", []byte("\xEF\xBB\xBFone\r\ntwo\r\nthree"))
	f.write("long.txt", []byte("short\n"+strings.Repeat("ab", 1500)+"\nend\n"))
	f.write("empty.txt", nil)
	for _, tc := range []struct {
		golden, args string
	}{
		{"sample_full", readArgs("sample.go", 0, 0)},
		{"sample_window", readArgs("sample.go", 6, 7)},
		{"crlf_bom", readArgs("dos.txt", 0, 0)},
		{"long_line", readArgs("long.txt", 0, 0)},
		{"empty", readArgs("empty.txt", 0, 0)},
		{"offset_past_end", readArgs("sample.go", 99, 0)},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			r := f.run(tc.args)
			got := strings.ReplaceAll(r.TextOf(), f.root, "{{root}}")
			if r.IsError {
				got = "ERROR: " + got
			}
			path := filepath.Join("testdata", "read", tc.golden+".golden")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Fatalf("model-facing output differs from %s:\n--- got\n%s\n--- want\n%s", path, got, want)
			}
		})
	}
}

func TestReadToolDeclaration(t *testing.T) {
	r := Read()
	if r.Name() != "read" || !r.ReadOnly() || r.Permission() != tool.PermNone || r.Kind() != "read" {
		t.Fatalf("declaration: %s %v %v %s", r.Name(), r.ReadOnly(), r.Permission(), r.Kind())
	}
	if !strings.Contains(r.Description(), "offset") {
		t.Fatalf("description not embedded: %q", r.Description())
	}
	var sch struct {
		Required   []string                  `json:"required"`
		Properties map[string]map[string]any `json:"properties"`
	}
	if err := json.Unmarshal(r.Schema(), &sch, json.RejectUnknownMembers(false)); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(sch.Required) != "[path]" {
		t.Fatalf("required = %v", sch.Required)
	}
	for _, k := range []string{"offset", "limit"} {
		if sch.Properties[k]["type"] != "integer" || sch.Properties[k]["minimum"] != float64(1) {
			t.Fatalf("%s schema = %v", k, sch.Properties[k])
		}
	}
}
