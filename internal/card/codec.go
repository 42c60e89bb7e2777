package card

import (
	"errors"
	"fmt"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// RawJSON is an arbitrary JSON value carried verbatim (a call's raw input).
type RawJSON = jsontext.Value

// strict is the decoding policy for every card: unknown members are errors;
// duplicate names, case-insensitive matches and trailing data are rejected by
// the v2 decoder's defaults.
var strict = json.JoinOptions(json.RejectUnknownMembers(true))

// tagged is the wire form of a variant: the discriminator followed by its fields.
type tagged[T any] struct {
	Card   Kind `json:"card"`
	Fields *T   `json:",embed"`
}

// The field-only twins of the variants carry no methods, so marshalling them
// inline does not recurse into the variants' MarshalJSON.
type (
	genericCall    GenericCall
	terminalCall   TerminalCall
	diffCall       DiffCall
	genericResult  GenericResult
	terminalResult TerminalResult
	readResult     ReadResult
	diffResult     DiffResult
	searchResult   SearchResult
)

func marshalTagged[T any](k Kind, v *T) ([]byte, error) {
	return json.Marshal(tagged[T]{Card: k, Fields: v}, json.Deterministic(true))
}

// MarshalJSON writes the card with its "card" discriminator.
func (c *GenericCall) MarshalJSON() ([]byte, error) {
	return marshalTagged(KindGeneric, (*genericCall)(c))
}

// MarshalJSON writes the card with its "card" discriminator.
func (c *TerminalCall) MarshalJSON() ([]byte, error) {
	return marshalTagged(KindTerminal, (*terminalCall)(c))
}

// MarshalJSON writes the card with its "card" discriminator.
func (c *DiffCall) MarshalJSON() ([]byte, error) {
	return marshalTagged(KindDiff, (*diffCall)(c))
}

// MarshalJSON writes the card with its "card" discriminator.
func (c *GenericResult) MarshalJSON() ([]byte, error) {
	return marshalTagged(KindGeneric, (*genericResult)(c))
}

// MarshalJSON writes the card with its "card" discriminator.
func (c *TerminalResult) MarshalJSON() ([]byte, error) {
	return marshalTagged(KindTerminal, (*terminalResult)(c))
}

// MarshalJSON writes the card with its "card" discriminator.
func (c *ReadResult) MarshalJSON() ([]byte, error) {
	if b, ok := appendReadResult(make([]byte, 0, c.sizeHint()), c, false); ok {
		return b, nil
	}
	return marshalTagged(KindRead, (*readResult)(c))
}

// HTMLSafeJSON is MarshalJSON's encoding with <, >, &, U+2028 and U+2029 in
// strings escaped as encoding/json's HTMLEscape escapes them: the form a
// JSON-RPC line written by encoding/json's rules carries it in, so that the
// line can take it as it is. ok is false for a card MarshalJSON does not
// write by hand (text that is not UTF-8).
func (c *ReadResult) HTMLSafeJSON() ([]byte, bool) {
	return c.AppendHTMLSafeJSON(make([]byte, 0, c.sizeHint()))
}

// AppendHTMLSafeJSON appends HTMLSafeJSON's encoding to dst: a replay writes
// each read card straight onto its JSON-RPC line, without a copy of its own.
func (c *ReadResult) AppendHTMLSafeJSON(dst []byte) ([]byte, bool) {
	return appendReadResult(dst, c, true)
}

// MarshalJSON writes the card with its "card" discriminator.
func (c *DiffResult) MarshalJSON() ([]byte, error) {
	return marshalTagged(KindDiff, (*diffResult)(c))
}

// MarshalJSON writes the card with its "card" discriminator.
func (c *SearchResult) MarshalJSON() ([]byte, error) {
	if b, ok := appendSearchResult(make([]byte, 0, c.sizeHint()), c, false); ok {
		return b, nil
	}
	return marshalTagged(KindSearch, (*searchResult)(c))
}

// HTMLSafeJSON is as ReadResult's.
func (c *SearchResult) HTMLSafeJSON() ([]byte, bool) {
	return c.AppendHTMLSafeJSON(make([]byte, 0, c.sizeHint()))
}

// AppendHTMLSafeJSON is as ReadResult's.
func (c *SearchResult) AppendHTMLSafeJSON(dst []byte) ([]byte, bool) {
	return appendSearchResult(dst, c, true)
}

// ErrDecode is wrapped by every decoding error.
var ErrDecode = errors.New("invalid card")

// discriminator reads the "card" member of a JSON object without trusting
// anything else in it.
func discriminator(data []byte) (Kind, error) {
	var obj map[string]jsontext.Value
	if err := json.Unmarshal(data, &obj); err != nil {
		return "", fmt.Errorf("%w: %w", ErrDecode, err)
	}
	if obj == nil {
		return "", fmt.Errorf("%w: not an object", ErrDecode)
	}
	raw, ok := obj["card"]
	if !ok {
		return "", fmt.Errorf("%w: missing \"card\"", ErrDecode)
	}
	var k string
	if raw.Kind() != '"' {
		return "", fmt.Errorf("%w: \"card\" must be a string, got %s", ErrDecode, raw.Kind())
	}
	if err := json.Unmarshal(raw, &k); err != nil {
		return "", fmt.Errorf("%w: %w", ErrDecode, err)
	}
	return Kind(k), nil
}

func decodeTagged[T any](data []byte, k Kind) (*T, error) {
	v := tagged[T]{Fields: new(T)}
	if err := json.Unmarshal(data, &v, strict); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrDecode, k, err)
	}
	return v.Fields, nil
}

// DecodeCall strictly decodes a call card. Test oracle: dsh only encodes
// cards; the tests of every presenter and consumer decode what was encoded to
// prove it is in the closed union's exact shape (deadcode -test counts it live).
func DecodeCall(data []byte) (Call, error) {
	k, err := discriminator(data)
	if err != nil {
		return nil, err
	}
	var c Call
	switch k {
	case KindGeneric:
		f, err := decodeTagged[genericCall](data, k)
		if err != nil {
			return nil, err
		}
		c = (*GenericCall)(f)
	case KindTerminal:
		f, err := decodeTagged[terminalCall](data, k)
		if err != nil {
			return nil, err
		}
		c = (*TerminalCall)(f)
	case KindDiff:
		f, err := decodeTagged[diffCall](data, k)
		if err != nil {
			return nil, err
		}
		c = (*DiffCall)(f)
	case KindPlan, KindQuestion:
		f, err := decodeAskCall(data, k)
		if err != nil {
			return nil, err
		}
		c = f
	case KindTask:
		f, err := decodeTagged[taskCall](data, k)
		if err != nil {
			return nil, err
		}
		c = (*TaskCall)(f)
	case KindRead, KindSearch:
		return nil, fmt.Errorf("%w: %q is not a call card", ErrDecode, k)
	default:
		return nil, fmt.Errorf("%w: unknown card %q", ErrDecode, k)
	}
	return c, Validate(c)
}

// DecodeResult strictly decodes a result card. Test oracle, as DecodeCall.
func DecodeResult(data []byte) (Result, error) {
	k, err := discriminator(data)
	if err != nil {
		return nil, err
	}
	var r Result
	switch k {
	case KindGeneric:
		f, err := decodeTagged[genericResult](data, k)
		if err != nil {
			return nil, err
		}
		r = (*GenericResult)(f)
	case KindTerminal:
		f, err := decodeTagged[terminalResult](data, k)
		if err != nil {
			return nil, err
		}
		r = (*TerminalResult)(f)
	case KindRead:
		f, err := decodeTagged[readResult](data, k)
		if err != nil {
			return nil, err
		}
		r = (*ReadResult)(f)
	case KindDiff:
		f, err := decodeTagged[diffResult](data, k)
		if err != nil {
			return nil, err
		}
		r = (*DiffResult)(f)
	case KindSearch:
		f, err := decodeTagged[searchResult](data, k)
		if err != nil {
			return nil, err
		}
		r = (*SearchResult)(f)
	case KindPlan, KindQuestion:
		f, err := decodeAskResult(data, k)
		if err != nil {
			return nil, err
		}
		r = f
	case KindTask:
		f, err := decodeTagged[taskResult](data, k)
		if err != nil {
			return nil, err
		}
		r = (*TaskResult)(f)
	default:
		return nil, fmt.Errorf("%w: unknown card %q", ErrDecode, k)
	}
	return r, ValidateResult(r)
}

// Validate checks the invariants a call card's types cannot express.
func Validate(c Call) error {
	switch c := c.(type) {
	case *GenericCall:
		return validContent(c.Content)
	case *TerminalCall:
		return nil
	case *DiffCall:
		if c.Diffs == nil {
			return fmt.Errorf("%w: diff: missing \"diffs\"", ErrDecode)
		}
		return nil
	case *PlanCall:
		return nil
	case *QuestionCall:
		return validChoices(KindQuestion, c.Choices, Answer{})
	case *TaskCall:
		return nil
	}
	return nil
}

// ValidateResult checks the invariants a result card's types cannot express.
func ValidateResult(r Result) error {
	switch r := r.(type) {
	case *GenericResult:
		return validContent(r.Content)
	case *TerminalResult:
		return nil
	case *ReadResult:
		if r.Lines == nil {
			return fmt.Errorf("%w: read: missing \"lines\"", ErrDecode)
		}
		return validContent(r.Content)
	case *DiffResult:
		if r.Diffs == nil {
			return fmt.Errorf("%w: diff: missing \"diffs\"", ErrDecode)
		}
		return validDiagnostics(r.Diagnostics)
	case *SearchResult:
		return validSearch(r)
	case *PlanResult:
		return validChoices(KindPlan, r.Choices, r.Answer)
	case *QuestionResult:
		return validChoices(KindQuestion, r.Choices, r.Answer)
	case *TaskResult:
		return nil
	}
	return nil
}

// validSearch checks what a search card's types cannot say: files or paths, not
// both; 1-based lines in increasing order within a file; ranges in order inside
// their text (a zero-width one is an empty match); counts that cover what is shown. Consumers may index Text with
// Ranges without checking.
func validSearch(r *SearchResult) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: search: "+format, append([]any{ErrDecode}, args...)...)
	}
	if r.Files != nil && r.Paths != nil {
		return bad("both \"files\" and \"paths\"")
	}
	shown := len(r.Paths)
	for i, f := range r.Files {
		if f.Path == "" {
			return bad("files[%d]: empty path", i)
		}
		prev, hits := 0, 0
		for j, m := range f.Matches {
			if m.Line <= prev {
				return bad("files[%d].matches[%d]: line %d does not follow line %d", i, j, m.Line, prev)
			}
			prev = m.Line
			end := 0
			for _, rg := range m.Ranges {
				if rg[0] < end || rg[1] < rg[0] || rg[1] > len(m.Text) {
					return bad("files[%d].matches[%d]: range %v out of order or outside the text", i, j, rg)
				}
				end = rg[1]
			}
			if len(m.Ranges) > 0 {
				hits++
			}
		}
		if f.Count < hits {
			return bad("files[%d]: count %d below the %d matching lines shown", i, f.Count, hits)
		}
		shown += f.Count
	}
	for i, p := range r.Paths {
		if p == "" {
			return bad("paths[%d]: empty path", i)
		}
	}
	if r.Total < shown || (!r.Truncated && r.Total != shown) {
		return bad("total %d does not fit the %d shown (truncated: %v)", r.Total, shown, r.Truncated)
	}
	return nil
}

// validDiagnostics checks what a diagnostic's types cannot say: a path, a
// 1-based position and a known severity.
func validDiagnostics(ds []Diagnostic) error {
	for i, d := range ds {
		switch {
		case d.Path == "":
			return fmt.Errorf("%w: diagnostics[%d]: empty path", ErrDecode, i)
		case d.Line < 1 || d.Column < 1:
			return fmt.Errorf("%w: diagnostics[%d]: position %d:%d is not 1-based", ErrDecode, i, d.Line, d.Column)
		}
		switch d.Severity {
		case SeverityError, SeverityWarning, SeverityInfo, SeverityHint:
		default:
			return fmt.Errorf("%w: diagnostics[%d]: unknown severity %q", ErrDecode, i, d.Severity)
		}
	}
	return nil
}

func validContent(cs []Content) error {
	for i, c := range cs {
		switch c.Type {
		case ContentText:
			if c.Data != "" || c.MimeType != "" || c.URI != "" {
				return fmt.Errorf("%w: content[%d]: text block with image or resource fields", ErrDecode, i)
			}
		case ContentImage:
			if c.Data == "" || c.MimeType == "" || c.Text != "" || c.URI != "" {
				return fmt.Errorf("%w: content[%d]: image block needs data and mimeType only", ErrDecode, i)
			}
		case ContentResource, ContentPaste, ContentExpansion:
			// Prompt parts, never a card's content.
			return fmt.Errorf("%w: content[%d]: a %s block is not card content", ErrDecode, i, c.Type)
		default:
			return fmt.Errorf("%w: content[%d]: unknown type %q", ErrDecode, i, c.Type)
		}
	}
	return nil
}
