// Package card is the closed union of render intents that every consumer of dsh
// (ACP, terminal, web) switches on. It is pure: it imports nothing of dsh and no I/O.
//
// A tool's PresentCall returns a [Call]; its PresentResult returns a [Result] or nil
// (nil means "no rich view: show the raw result content"). Both unions are sealed by
// an unexported method on pointer receivers, so no package outside card can add a
// variant, and the gochecksumtype linter proves every type switch over them handles
// every variant.
package card

// Kind is the JSON discriminator ("card") of a variant.
type Kind string

// The card kinds. Generic, Terminal and Diff exist on both sides (and Plan and
// Question, in ask.go); Read and Search only as results.
const (
	KindGeneric  Kind = "generic"
	KindTerminal Kind = "terminal"
	KindDiff     Kind = "diff"
	KindRead     Kind = "read"
	KindSearch   Kind = "search"
)

// ToolKind is the kind of work a call does, as ACP names it: editors group and
// label calls by it. A tool declares its kind once, in its spec; the framework
// copies it into the tool's generic call cards.
type ToolKind string

// The tool kinds dsh uses.
const (
	ToolRead    ToolKind = "read"
	ToolEdit    ToolKind = "edit"
	ToolSearch  ToolKind = "search"
	ToolExecute ToolKind = "execute"
	ToolThink   ToolKind = "think"
	ToolFetch   ToolKind = "fetch"
	ToolOther   ToolKind = "other"
)

// Call is the call-side card: what the user sees while a tool call is proposed or
// running. Its variants are *GenericCall, *TerminalCall, *DiffCall, *PlanCall,
// *QuestionCall and *TaskCall.
//
//sumtype:decl
type Call interface {
	isCall()
	// Kind returns the variant's discriminator.
	Kind() Kind
}

// Result is the result-side card: the finished call. Its variants are
// *GenericResult, *TerminalResult, *ReadResult, *DiffResult, *SearchResult,
// *PlanResult, *QuestionResult and *TaskResult.
//
//sumtype:decl
type Result interface {
	isResult()
	// Kind returns the variant's discriminator.
	Kind() Kind
}

// ContentType is the discriminator of a [Content] block.
type ContentType string

// The content block types. Text and images are the model's vocabulary; a
// resource (a file the user attached) and a paste (a long text pasted into the
// prompt) are parts of a user prompt that every consumer shows as a chip and the
// agent's context builder turns into model text.
const (
	ContentText     ContentType = "text"
	ContentImage    ContentType = "image"
	ContentResource ContentType = "resource"
	ContentPaste    ContentType = "paste"
	// ContentExpansion is what a slash command typed as the prompt's text
	// expanded to (a custom command's body, a skill's or an MCP server's
	// prompt): the model is sent it in place of the typed text.
	ContentExpansion ContentType = "expansion"
)

// Content is one block of content: text, an image, an attached resource or a paste.
type Content struct {
	Type     ContentType `json:"type"`
	Text     string      `json:"text,omitempty"` // text, resource, paste and expansion
	Data     string      `json:"data,omitempty"` // base64, images only
	MimeType string      `json:"mimeType,omitempty"`
	// URI names an attached resource: a workspace-relative path (a chat @path)
	// or the URI an editor sent.
	URI string `json:"uri,omitempty"`
}

// Text returns a text content block.
func Text(s string) Content { return Content{Type: ContentText, Text: s} }

// Image returns an image content block with base64 data.
func Image(mimeType, base64Data string) Content {
	return Content{Type: ContentImage, Data: base64Data, MimeType: mimeType}
}

// Resource returns an attached resource: the text of the file uri names.
func Resource(uri, text string) Content { return Content{Type: ContentResource, URI: uri, Text: text} }

// Expansion returns the block of what a typed slash command (named by uri,
// e.g. "/greet") expanded to.
func Expansion(uri, text string) Content {
	return Content{Type: ContentExpansion, URI: uri, Text: text}
}

// Paste returns a paste block.
func Paste(text string) Content { return Content{Type: ContentPaste, Text: text} }

// Location is a place in a file a UI can follow. Line is 1-based; nil means the file.
type Location struct {
	Path string `json:"path"`
	Line *int   `json:"line,omitempty"`
}

// FileDiff is a change to one file, or one hunk of it. OldText nil means a new file.
// OldStart/NewStart are the 1-based first lines of the hunk in the old and new file;
// they are zero on call-time diffs, which know no positions.
type FileDiff struct {
	Path     string  `json:"path"`
	OldText  *string `json:"oldText"`
	NewText  string  `json:"newText"`
	OldStart int     `json:"oldStart,omitzero"`
	NewStart int     `json:"newStart,omitzero"`
}

// ReadLine is one numbered line of a read window.
type ReadLine struct {
	Number int    `json:"number"`
	Text   string `json:"text"`
}

// SearchMatch is one line of a file that a search shows: a matching line, whose
// Ranges are the byte offsets [start, end) of the matches in Text (zero-width for
// an empty match), or a context line around one, which has no Ranges.
type SearchMatch struct {
	Line   int      `json:"line"`
	Text   string   `json:"text"`
	Ranges [][2]int `json:"ranges,omitempty"`
}

// SearchFile is a file a search matched in. Count is its number of matching
// lines, which may exceed the matching lines shown (a count-only search shows none).
type SearchFile struct {
	Path    string        `json:"path"`
	Count   int           `json:"count"`
	Matches []SearchMatch `json:"matches,omitempty"`
}

// GenericCall is anything without a richer intent.
type GenericCall struct {
	Title     string     `json:"title"`
	ToolKind  ToolKind   `json:"kind,omitempty"`
	RawInput  RawJSON    `json:"rawInput,omitzero"`
	Content   []Content  `json:"content,omitempty"`
	Locations []Location `json:"locations,omitempty"`
}

// TerminalCall is a foreground shell command the harness runs.
type TerminalCall struct {
	Title       string `json:"title"` // the command
	Description string `json:"description,omitempty"`
	Cwd         string `json:"cwd,omitempty"`
}

// DiffCall is a proposed file change.
type DiffCall struct {
	Title     string     `json:"title"`
	Diffs     []FileDiff `json:"diffs"`
	Locations []Location `json:"locations,omitempty"`
}

// GenericResult is a plain result.
type GenericResult struct {
	Title   string    `json:"title,omitempty"`
	Content []Content `json:"content,omitempty"`
}

// TerminalResult is a finished shell command. ExitCode is nil when the process was
// killed by a signal (Signal then names it, e.g. "SIGKILL").
type TerminalResult struct {
	Title    string `json:"title,omitempty"`
	Output   string `json:"output,omitempty"`
	ExitCode *int   `json:"exitCode,omitempty"`
	Signal   string `json:"signal,omitempty"`
	TimedOut bool   `json:"timedOut,omitzero"`
	// Lines is how many lines the command wrote when Output keeps only their
	// start and end (0: Output is all of it), so that a fold counts what is
	// hidden of the real output, not of what was kept.
	Lines int `json:"lines,omitzero"`
	// Sandbox is set when the command ran in the sandbox.
	Sandbox *Sandbox `json:"sandbox,omitempty"`
}

// Sandbox is how a sandboxed command was confined and what the sandbox refused.
type Sandbox struct {
	// Network is whether the command could open network connections.
	Network bool `json:"network"`
	// Refused is the output line that shows the sandbox refused an operation (a
	// write outside the writable directories, a connection); empty if none.
	Refused string `json:"refused,omitempty"`
}

// ReadResult is a window of a text file. Offset is the 1-based first requested line;
// Lines may be empty at a positive Offset when a byte cap cut the window before it.
// Content is the model-facing text with its envelope stripped, for consumers that
// render it like a generic card.
type ReadResult struct {
	Title      string     `json:"title,omitempty"`
	Path       string     `json:"path"`
	Offset     int        `json:"offset"`
	Lines      []ReadLine `json:"lines"`
	TotalLines int        `json:"totalLines"`
	// TotalLinesAtLeast: the file was not counted to its end; it has at least
	// TotalLines lines.
	TotalLinesAtLeast bool      `json:"totalLinesAtLeast,omitzero"`
	Lang              string    `json:"lang,omitempty"`
	Content           []Content `json:"content,omitempty"`
}

// DiffResult is a change as applied: one contextual hunk per edit site, or one
// whole-file diff (OldText nil) for a created file. Diagnostics are the errors
// and warnings the file's language server reported for the changed file after
// the change; absent when no server checked it.
type DiffResult struct {
	Title       string       `json:"title,omitempty"`
	Diffs       []FileDiff   `json:"diffs"`
	Locations   []Location   `json:"locations,omitempty"`
	Diagnostics []Diagnostic `json:"diagnostics,omitempty"`
}

// Severity is how bad a diagnostic is.
type Severity string

// The severities a language server reports.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
	SeverityInfo    Severity = "info"
	SeverityHint    Severity = "hint"
)

// Diagnostic is one problem a language server reported in a file: Line and
// Column are 1-based (Column counts UTF-16 units, as the protocol does).
type Diagnostic struct {
	Path     string   `json:"path"`
	Line     int      `json:"line"`
	Column   int      `json:"column"`
	Severity Severity `json:"severity"`
	Message  string   `json:"message"`
	Source   string   `json:"source,omitempty"`
}

// SearchResult is what a grep, glob or ls found: the lines that matched grouped by
// file (Files), or a list of paths (Paths: matching files, or a directory tree
// with directories ending in "/"). Relative paths are relative to Dir, the
// absolute directory the search ran from. Total counts everything found (lines in
// Files, entries in Paths), of which Truncated says some are not shown.
type SearchResult struct {
	Title     string       `json:"title,omitempty"`
	Query     string       `json:"query"`
	Dir       string       `json:"dir"`
	Files     []SearchFile `json:"files,omitempty"`
	Paths     []string     `json:"paths,omitempty"`
	Total     int          `json:"total"`
	Truncated bool         `json:"truncated,omitzero"`
}

func (*GenericCall) isCall()  {}
func (*TerminalCall) isCall() {}
func (*DiffCall) isCall()     {}

func (*GenericResult) isResult()  {}
func (*TerminalResult) isResult() {}
func (*ReadResult) isResult()     {}
func (*DiffResult) isResult()     {}
func (*SearchResult) isResult()   {}

// Kind implements Call.
func (*GenericCall) Kind() Kind { return KindGeneric }

// Kind implements Call.
func (*TerminalCall) Kind() Kind { return KindTerminal }

// Kind implements Call.
func (*DiffCall) Kind() Kind { return KindDiff }

// Kind implements Result.
func (*GenericResult) Kind() Kind { return KindGeneric }

// Kind implements Result.
func (*TerminalResult) Kind() Kind { return KindTerminal }

// Kind implements Result.
func (*ReadResult) Kind() Kind { return KindRead }

// Kind implements Result.
func (*DiffResult) Kind() Kind { return KindDiff }

// Kind implements Result.
func (*SearchResult) Kind() Kind { return KindSearch }

// Ptr returns a pointer to v; handy for the optional Line and ExitCode fields.
func Ptr[T any](v T) *T { return &v }
