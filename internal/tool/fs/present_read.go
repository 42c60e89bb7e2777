package fs

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/jsonfast"
	"github.com/dsh-dev/dsh/internal/tool"
)

// presentReadCall is pure: the call card knows only the arguments, so it names the
// path as given (a consumer makes it absolute) and follows the first requested line.
func presentReadCall(p ReadParams) card.Call {
	offset := max(p.Offset, 1)
	title := "Read " + p.Path
	switch {
	case p.Limit > 0 && p.Limit <= math.MaxInt-offset:
		title += " (lines " + strconv.Itoa(offset) + "-" + strconv.Itoa(offset+p.Limit-1) + ")"
	case p.Offset > 0:
		title += " (from line " + strconv.Itoa(offset) + ")"
	}
	return &card.GenericCall{
		Title:     title,
		Locations: []card.Location{{Path: p.Path, Line: card.Ptr(offset)}},
	}
}

// presentReadResult turns a persisted read result into a read card. It returns nil
// (the consumer shows the raw content) for an error, for content that is not one
// read envelope, and for missing or malformed meta (m is nil unless it decoded
// strictly and validated) — so replaying an old or damaged log never fails. Images come back as an image block and so fall back too.
func presentReadResult(p ReadParams, r tool.Result, m *readMeta) card.Result {
	if r.IsError || m == nil || len(r.Content) != 1 || r.Content[0].Type != "text" {
		return nil
	}
	body, ok := readStripEnvelope(r.Content[0].Text)
	if !ok {
		return nil
	}
	title := "Read " + p.Path
	if n := len(m.Lines); n > 0 {
		title += " (lines " + strconv.Itoa(m.Lines[0].Number) + "-" + strconv.Itoa(m.Lines[n-1].Number) + ")"
	}
	return &card.ReadResult{
		Title:             title,
		Path:              m.Path,
		Offset:            m.Offset,
		Lines:             m.Lines,
		TotalLines:        m.TotalLines,
		TotalLinesAtLeast: m.TotalLinesAtLeast,
		Lang:              m.Lang,
		Content:           []card.Content{card.Text(body)},
	}
}

// The model-facing envelope around a read window.
const (
	readEnvOpen  = "<path>"
	readEnvMid   = "</path>\n<type>file</type>\n<content>\n"
	readEnvClose = "\n</content>"
)

// readEnvelope wraps the numbered lines and footer for the model.
func readEnvelope(path, body string) string {
	return readEnvOpen + path + readEnvMid + body + readEnvClose
}

// readStripEnvelope returns the text inside a read envelope, or false if s is not one.
func readStripEnvelope(s string) (string, bool) {
	rest, ok := strings.CutPrefix(s, readEnvOpen)
	if !ok {
		return "", false
	}
	path, rest, ok := strings.Cut(rest, readEnvMid)
	if !ok || path == "" || strings.Contains(path, "\n") {
		return "", false
	}
	body, ok := strings.CutSuffix(rest, readEnvClose)
	if !ok {
		return "", false
	}
	return body, true
}

// readMeta is the structured window Execute persists in the result's meta, and
// the stamp of the file it was read from.
type readMeta struct {
	Path   string          `json:"path"`
	Offset int             `json:"offset"`
	Lines  []card.ReadLine `json:"lines"`
	// TotalLines counts the file's lines; with TotalLinesAtLeast the count
	// stopped at the scan bound and the file has more.
	TotalLines        int        `json:"totalLines"`
	TotalLinesAtLeast bool       `json:"totalLinesAtLeast,omitzero"`
	Lang              string     `json:"lang,omitempty"`
	Stamp             *fileStamp `json:"stamp,omitzero"` // absent in logs older than stamps
	// Editor: the text came from the editor's buffer, not the disk.
	Editor bool `json:"editor,omitzero"`
}

// MarshalJSON writes meta for the log; a path that is not UTF-8 gets U+FFFD.
func (m *readMeta) MarshalJSON() ([]byte, error) {
	type plain readMeta
	return json.Marshal((*plain)(m), json.Deterministic(true), jsontext.AllowInvalidUTF8(true))
}

// UnmarshalJSON refuses missing required members and nulls (see metaMembers).
func (m *readMeta) UnmarshalJSON(b []byte) error {
	type plain readMeta
	return metaUnmarshal(b, reflect.TypeFor[plain](), (*plain)(m))
}

// DecodeFast is UnmarshalJSON for the plainest input, without reflection.
func (m *readMeta) DecodeFast(d *jsonfast.Reader) bool {
	type plain readMeta
	return jsonfast.DecodeValue(d, (*plain)(m))
}

// Validate checks what well-typed JSON can still get wrong: a non-empty path, a
// 1-based offset, a non-negative totalLines, line numbers that start at or after
// offset, strictly increase and stay within totalLines. An empty window at a
// positive offset is valid (a byte cap below the first selected line, or an
// empty file).
func (m *readMeta) Validate() error {
	if m.Path == "" {
		return errors.New("empty path")
	}
	if err := metaCount("offset", m.Offset, 1); err != nil {
		return err
	}
	if err := metaCount("totalLines", m.TotalLines, 0); err != nil {
		return err
	}
	if m.TotalLinesAtLeast && m.TotalLines == 0 {
		return errors.New("at least zero lines")
	}
	if m.Lines == nil {
		return errors.New("no lines")
	}
	prev := m.Offset - 1
	for _, l := range m.Lines {
		if l.Number <= prev || l.Number > m.TotalLines {
			return fmt.Errorf("line number %d out of order or range", l.Number)
		}
		prev = l.Number
	}
	if m.Stamp != nil {
		return m.Stamp.Validate()
	}
	return nil
}

// langByExt maps a lower-case file extension to a chroma lexer name, the syntax
// highlighting hint of a read card. It is a small fixed table, not a registry:
// an unknown extension renders as plain text, and adding one is one line.
var langByExt = map[string]string{
	"go":         "go",
	"py":         "python",
	"pyi":        "python",
	"js":         "javascript",
	"mjs":        "javascript",
	"cjs":        "javascript",
	"jsx":        "react",
	"ts":         "typescript",
	"mts":        "typescript",
	"cts":        "typescript",
	"tsx":        "tsx",
	"rs":         "rust",
	"c":          "c",
	"h":          "c",
	"cc":         "cpp",
	"cpp":        "cpp",
	"cxx":        "cpp",
	"hh":         "cpp",
	"hpp":        "cpp",
	"cs":         "csharp",
	"java":       "java",
	"kt":         "kotlin",
	"kts":        "kotlin",
	"scala":      "scala",
	"swift":      "swift",
	"rb":         "ruby",
	"php":        "php",
	"pl":         "perl",
	"lua":        "lua",
	"sh":         "bash",
	"bash":       "bash",
	"zsh":        "zsh",
	"fish":       "fish",
	"ps1":        "powershell",
	"bat":        "batch",
	"json":       "json",
	"jsonc":      "json",
	"yaml":       "yaml",
	"yml":        "yaml",
	"toml":       "toml",
	"ini":        "ini",
	"xml":        "xml",
	"html":       "html",
	"htm":        "html",
	"css":        "css",
	"scss":       "scss",
	"sass":       "sass",
	"vue":        "vue",
	"svelte":     "svelte",
	"md":         "markdown",
	"markdown":   "markdown",
	"rst":        "rst",
	"tex":        "tex",
	"sql":        "sql",
	"graphql":    "graphql",
	"proto":      "protobuf",
	"tf":         "terraform",
	"hcl":        "hcl",
	"nix":        "nix",
	"dockerfile": "docker",
	"mk":         "makefile",
	"cmake":      "cmake",
	"diff":       "diff",
	"patch":      "diff",
	"hs":         "haskell",
	"ml":         "ocaml",
	"ex":         "elixir",
	"exs":        "elixir",
	"erl":        "erlang",
	"clj":        "clojure",
	"dart":       "dart",
	"zig":        "zig",
	"r":          "r",
	"jl":         "julia",
	"groovy":     "groovy",
	"gradle":     "groovy",
	"vim":        "vim",
	"el":         "emacs-lisp",
	"csv":        "csv",
}

// langFromPath returns the highlighting language of a path from the extension of
// its last segment (the text after the last dot, case-insensitively), or "" for a
// dotfile (.gitignore), a name without an extension (/etc/hosts), a trailing dot
// and an unknown extension.
func langFromPath(p string) string {
	name := p[strings.LastIndexByte(p, '/')+1:]
	dot := strings.LastIndexByte(name, '.')
	if dot <= 0 { // no dot, or a dotfile whose only dot leads
		return ""
	}
	return langByExt[strings.ToLower(name[dot+1:])]
}
