package fs

import (
	"math"
	"strconv"
	"strings"

	"github.com/dsh-dev/dsh/internal/card"
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
		ToolKind:  "read",
		Locations: []card.Location{{Path: p.Path, Line: card.Ptr(offset)}},
	}
}

// presentReadResult narrows a persisted read result into a read card. It returns nil
// (the consumer shows the raw content) for an error, for content that is not one
// read envelope, and for missing or malformed meta — so replaying an old or damaged
// log never fails. Images come back as an image block and so fall back too.
func presentReadResult(p ReadParams, r tool.Result) card.Result {
	if r.IsError || len(r.Content) != 1 || r.Content[0].Type != "text" {
		return nil
	}
	body, ok := readStripEnvelope(r.Content[0].Text)
	if !ok {
		return nil
	}
	m, ok := readMetaFromMeta(r.Meta)
	if !ok {
		return nil
	}
	title := "Read " + p.Path
	if n := len(m.Lines); n > 0 {
		title += " (lines " + strconv.Itoa(m.Lines[0].Number) + "-" + strconv.Itoa(m.Lines[n-1].Number) + ")"
	}
	return &card.ReadResult{
		Title:      title,
		Path:       m.Path,
		Offset:     m.Offset,
		Lines:      m.Lines,
		TotalLines: m.TotalLines,
		Lang:       m.Lang,
		Content:    []card.Content{card.Text(body)},
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

// readMeta is the structured window Execute persists in the result's meta.
type readMeta struct {
	Path       string          `json:"path"`
	Offset     int             `json:"offset"`
	Lines      []card.ReadLine `json:"lines"`
	TotalLines int             `json:"totalLines"`
	Lang       string          `json:"lang,omitempty"`
}

// readMetaFromMeta narrows persisted meta defensively and totally: it never fails
// loudly, it says no. Beyond the types it checks what well-typed JSON can still get
// wrong: a 1-based integral offset, line numbers that are 1-based integers, start
// at or after offset, strictly increase and stay within a non-negative integral
// totalLines. An empty window at a positive offset is valid (a byte cap below the
// first selected line, or an empty file).
func readMetaFromMeta(raw []byte) (readMeta, bool) {
	var no readMeta
	obj, ok := metaObject(raw)
	if !ok {
		return no, false
	}
	path, ok := obj["path"].(string)
	if !ok || path == "" {
		return no, false
	}
	offset, ok := metaInt(obj["offset"], 1)
	if !ok {
		return no, false
	}
	total, ok := metaInt(obj["totalLines"], 0)
	if !ok {
		return no, false
	}
	m := readMeta{Path: path, Offset: offset, TotalLines: total}
	if l, present := obj["lang"]; present {
		if m.Lang, ok = l.(string); !ok {
			return no, false
		}
	}
	items, ok := obj["lines"].([]any)
	if !ok {
		return no, false
	}
	m.Lines = make([]card.ReadLine, 0, len(items))
	prev := offset - 1
	for _, it := range items {
		line, ok := it.(map[string]any)
		if !ok {
			return no, false
		}
		n, ok := metaInt(line["number"], 1)
		if !ok || n <= prev || n > total {
			return no, false
		}
		text, ok := line["text"].(string)
		if !ok {
			return no, false
		}
		m.Lines = append(m.Lines, card.ReadLine{Number: n, Text: text})
		prev = n
	}
	return m, true
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
