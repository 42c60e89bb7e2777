package rpcfix

import (
	stdjson "encoding/json"
	"slices"
	"strconv"
	"unicode/utf8"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/dsh-dev/dsh/internal/jsonfast"
)

// appendFast appends the params of the updates dsh sends by the ten thousand
// (messages, tool calls and their final updates, plans) written by hand, the
// same bytes as wireOpts' encoding, without reflection and without re-checking
// the raw JSON they carry: a replay of a long session sends tens of thousands.
// ok is false for anything it does not know (an image, annotations, a _meta
// value of another type, raw JSON that is not valid UTF-8): the caller then
// encodes the notification the general way.
//
// Raw JSON (json.RawMessage in rawInput or _meta) must be valid: dsh makes it,
// from checked arguments or its own marshalled cards.
func appendFast(dst []byte, note sdk.SessionNotification) ([]byte, bool) {
	if note.Meta != nil {
		return dst, false
	}
	dst = append(dst, `{"sessionId":`...)
	dst = appendString(dst, string(note.SessionId))
	dst = append(dst, `,"update":`...)
	var ok bool
	switch u := note.Update; {
	case u.AgentMessageChunk != nil && u.UserMessageChunk == nil && u.AgentThoughtChunk == nil:
		c := u.AgentMessageChunk
		dst, ok = appendChunk(dst, c.Meta, c.Content, c.MessageId, "agent_message_chunk")
	case u.UserMessageChunk != nil && u.AgentThoughtChunk == nil:
		c := u.UserMessageChunk
		dst, ok = appendChunk(dst, c.Meta, c.Content, c.MessageId, "user_message_chunk")
	case u.AgentThoughtChunk != nil:
		c := u.AgentThoughtChunk
		dst, ok = appendChunk(dst, c.Meta, c.Content, c.MessageId, "agent_thought_chunk")
	case u.ToolCall != nil && u.ToolCallUpdate == nil:
		dst, ok = appendToolCall(dst, u.ToolCall)
	case u.ToolCallUpdate != nil:
		dst, ok = appendToolCallUpdate(dst, u.ToolCallUpdate)
	case u.Plan != nil:
		dst, ok = appendPlan(dst, u.Plan)
	case u.AvailableCommandsUpdate != nil:
		dst, ok = appendCommands(dst, u.AvailableCommandsUpdate)
	}
	if !ok || !onlyOne(note.Update) {
		return dst, false
	}
	return append(dst, '}'), true
}

// onlyOne reports whether exactly one variant of the update is set; the SDK
// refuses the others.
func onlyOne(u sdk.SessionUpdate) bool {
	n := 0
	for _, set := range []bool{u.UserMessageChunk != nil, u.AgentMessageChunk != nil, u.AgentThoughtChunk != nil,
		u.ToolCall != nil, u.ToolCallUpdate != nil, u.Plan != nil, u.AvailableCommandsUpdate != nil,
		u.CurrentModeUpdate != nil, u.ConfigOptionUpdate != nil, u.SessionInfoUpdate != nil, u.UsageUpdate != nil} {
		if set {
			n++
		}
	}
	return n == 1
}

func appendChunk(dst []byte, meta map[string]any, c sdk.ContentBlock, msgID *string, kind string) ([]byte, bool) {
	dst = append(dst, '{')
	dst, ok := appendMetaMember(dst, meta)
	if !ok {
		return dst, false
	}
	dst = append(dst, `"content":`...)
	if dst, ok = appendBlock(dst, c); !ok {
		return dst, false
	}
	if msgID != nil {
		dst = append(dst, `,"messageId":`...)
		dst = appendString(dst, *msgID)
	}
	dst = append(dst, `,"sessionUpdate":"`...)
	dst = append(dst, kind...)
	return append(dst, `"}`...), true
}

// appendBlock appends a text block; other blocks are left to the general way.
func appendBlock(dst []byte, c sdk.ContentBlock) ([]byte, bool) {
	t := c.Text
	if t == nil || t.Annotations != nil || c.Image != nil || c.Audio != nil || c.ResourceLink != nil || c.Resource != nil {
		return dst, false
	}
	dst = append(dst, '{')
	dst, ok := appendMetaMember(dst, t.Meta)
	if !ok {
		return dst, false
	}
	dst = append(dst, `"text":`...)
	dst = appendString(dst, t.Text)
	return append(dst, `,"type":"text"}`...), true
}

func appendToolCall(dst []byte, u *sdk.SessionUpdateToolCall) ([]byte, bool) {
	if u.RawOutput != nil {
		return dst, false
	}
	dst = append(dst, '{')
	dst, ok := appendMetaMember(dst, u.Meta)
	if !ok {
		return dst, false
	}
	if dst, ok = appendContents(dst, u.Content); !ok {
		return dst, false
	}
	if u.Kind != "" {
		dst = append(dst, `"kind":`...)
		dst = appendString(dst, string(u.Kind))
		dst = append(dst, ',')
	}
	if dst, ok = appendLocations(dst, u.Locations); !ok {
		return dst, false
	}
	if dst, ok = appendRawInput(dst, u.RawInput); !ok {
		return dst, false
	}
	dst = append(dst, `"sessionUpdate":"tool_call",`...)
	if u.Status != "" {
		dst = append(dst, `"status":`...)
		dst = appendString(dst, string(u.Status))
		dst = append(dst, ',')
	}
	dst = append(dst, `"title":`...)
	dst = appendString(dst, u.Title)
	dst = append(dst, `,"toolCallId":`...)
	dst = appendString(dst, string(u.ToolCallId))
	return append(dst, '}'), true
}

func appendToolCallUpdate(dst []byte, u *sdk.SessionToolCallUpdate) ([]byte, bool) {
	if u.RawOutput != nil {
		return dst, false
	}
	dst = append(dst, '{')
	dst, ok := appendMetaMember(dst, u.Meta)
	if !ok {
		return dst, false
	}
	if dst, ok = appendContents(dst, u.Content); !ok {
		return dst, false
	}
	if u.Kind != nil {
		dst = append(dst, `"kind":`...)
		dst = appendString(dst, string(*u.Kind))
		dst = append(dst, ',')
	}
	if dst, ok = appendLocations(dst, u.Locations); !ok {
		return dst, false
	}
	if dst, ok = appendRawInput(dst, u.RawInput); !ok {
		return dst, false
	}
	dst = append(dst, `"sessionUpdate":"tool_call_update",`...)
	if u.Status != nil {
		dst = append(dst, `"status":`...)
		dst = appendString(dst, string(*u.Status))
		dst = append(dst, ',')
	}
	if u.Title != nil {
		dst = append(dst, `"title":`...)
		dst = appendString(dst, *u.Title)
		dst = append(dst, ',')
	}
	dst = append(dst, `"toolCallId":`...)
	dst = appendString(dst, string(u.ToolCallId))
	return append(dst, '}'), true
}

func appendPlan(dst []byte, p *sdk.SessionUpdatePlan) ([]byte, bool) {
	dst = append(dst, '{')
	dst, ok := appendMetaMember(dst, p.Meta)
	if !ok {
		return dst, false
	}
	if p.Entries == nil {
		dst = append(dst, `"entries":null`...)
	} else {
		dst = append(dst, `"entries":[`...)
		for i, e := range p.Entries {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, '{')
			if dst, ok = appendMetaMember(dst, e.Meta); !ok {
				return dst, false
			}
			dst = append(dst, `"content":`...)
			dst = appendString(dst, e.Content)
			dst = append(dst, `,"priority":`...)
			dst = appendString(dst, string(e.Priority))
			dst = append(dst, `,"status":`...)
			dst = appendString(dst, string(e.Status))
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	return append(dst, `,"sessionUpdate":"plan"}`...), true
}

// appendCommands appends the commands a session offers: sent once per new
// session, right after session/new's answer, where the general way's first use
// of these types cost as much as the answer.
func appendCommands(dst []byte, u *sdk.SessionAvailableCommandsUpdate) ([]byte, bool) {
	if u.AvailableCommands == nil {
		return dst, false
	}
	dst = append(dst, '{')
	dst, ok := appendMetaMember(dst, u.Meta)
	if !ok {
		return dst, false
	}
	dst = append(dst, `"availableCommands":[`...)
	for i, c := range u.AvailableCommands {
		if len(c.Meta) > 0 {
			return dst, false
		}
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"description":`...)
		dst = appendString(dst, c.Description)
		if in := c.Input; in != nil {
			// The SDK's own encoding of the union (it has no discriminator):
			// through a map, so invalid UTF-8 comes out as U+FFFD itself.
			if in.Unstructured == nil || len(in.Unstructured.Meta) > 0 {
				return dst, false
			}
			dst = append(dst, `,"input":{"hint":`...)
			dst = appendString(dst, in.Unstructured.Hint)
			dst = append(dst, '}')
		}
		dst = append(dst, `,"name":`...)
		dst = appendString(dst, c.Name)
		dst = append(dst, '}')
	}
	return append(dst, `],"sessionUpdate":"available_commands_update"}`...), true
}

// appendContents appends a non-empty content member and its comma.
func appendContents(dst []byte, cs []sdk.ToolCallContent) ([]byte, bool) {
	if len(cs) == 0 {
		return dst, true
	}
	dst = append(dst, `"content":[`...)
	for i, c := range cs {
		if i > 0 {
			dst = append(dst, ',')
		}
		var ok bool
		switch {
		case c.Content != nil && c.Diff == nil && c.Terminal == nil:
			dst = append(dst, '{')
			if dst, ok = appendMetaMember(dst, c.Content.Meta); !ok {
				return dst, false
			}
			dst = append(dst, `"content":`...)
			if dst, ok = appendBlock(dst, c.Content.Content); !ok {
				return dst, false
			}
			dst = append(dst, `,"type":"content"}`...)
		case c.Diff != nil && c.Content == nil && c.Terminal == nil:
			d := c.Diff
			dst = append(dst, '{')
			if dst, ok = appendMetaMember(dst, d.Meta); !ok {
				return dst, false
			}
			dst = append(dst, `"newText":`...)
			dst = appendString(dst, d.NewText)
			if d.OldText != nil {
				dst = append(dst, `,"oldText":`...)
				dst = appendString(dst, *d.OldText)
			}
			dst = append(dst, `,"path":`...)
			dst = appendString(dst, d.Path)
			dst = append(dst, `,"type":"diff"}`...)
		case c.Terminal != nil && c.Content == nil && c.Diff == nil:
			dst = append(dst, '{')
			if dst, ok = appendMetaMember(dst, c.Terminal.Meta); !ok {
				return dst, false
			}
			dst = append(dst, `"terminalId":`...)
			dst = appendString(dst, c.Terminal.TerminalId)
			dst = append(dst, `,"type":"terminal"}`...)
		default:
			return dst, false
		}
	}
	return append(dst, "],"...), true
}

// appendLocations appends a non-empty locations member and its comma.
func appendLocations(dst []byte, ls []sdk.ToolCallLocation) ([]byte, bool) {
	if len(ls) == 0 {
		return dst, true
	}
	dst = append(dst, `"locations":[`...)
	for i, l := range ls {
		if i > 0 {
			dst = append(dst, ',')
		}
		if l.Meta != nil {
			return dst, false
		}
		dst = append(dst, '{')
		if l.Line != nil {
			dst = append(dst, `"line":`...)
			dst = strconv.AppendInt(dst, int64(*l.Line), 10)
			dst = append(dst, ',')
		}
		dst = append(dst, `"path":`...)
		dst = appendString(dst, l.Path)
		dst = append(dst, '}')
	}
	return append(dst, "],"...), true
}

// appendRawInput appends a rawInput member (raw JSON, or nothing) and its comma.
func appendRawInput(dst []byte, v any) ([]byte, bool) {
	switch r := v.(type) {
	case nil:
		return dst, true
	case stdjson.RawMessage:
		if len(r) == 0 {
			return dst, false // nil is "null", empty is an error: the general way knows
		}
		dst = append(dst, `"rawInput":`...)
		dst, ok := appendRaw(dst, r)
		return append(dst, ','), ok
	}
	return dst, false
}

// appendMetaMember appends a non-empty _meta member and its comma.
func appendMetaMember(dst []byte, m map[string]any) ([]byte, bool) {
	if len(m) == 0 {
		return dst, true
	}
	dst = append(dst, `"_meta":`...)
	dst, ok := appendMap(dst, m, 0)
	return append(dst, ','), ok
}

// appendMap appends a map as its keys sorted, the few value types the bridge
// puts in _meta.
func appendMap(dst []byte, m map[string]any, depth int) ([]byte, bool) {
	if depth > 4 {
		return dst, false
	}
	var keys [8]string
	ks := keys[:0]
	for k := range m {
		if !plainASCII(k) {
			return dst, false // the sort order of escaped keys is not worth knowing here
		}
		ks = append(ks, k)
	}
	slices.Sort(ks)
	dst = append(dst, '{')
	for i, k := range ks {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, '"')
		dst = append(dst, k...)
		dst = append(dst, `":`...)
		var ok bool
		switch v := m[k].(type) {
		case nil:
			dst = append(dst, "null"...)
		case string:
			dst = appendString(dst, v)
		case int:
			dst = strconv.AppendInt(dst, int64(v), 10)
		case *int:
			if v == nil {
				dst = append(dst, "null"...)
			} else {
				dst = strconv.AppendInt(dst, int64(*v), 10)
			}
		case map[string]any:
			if v == nil {
				dst = append(dst, "null"...)
				break
			}
			if dst, ok = appendMap(dst, v, depth+1); !ok {
				return dst, false
			}
		case stdjson.RawMessage:
			if v == nil {
				dst = append(dst, "null"...)
				break
			}
			if dst, ok = appendRaw(dst, v); !ok {
				return dst, false
			}
		case WireJSON:
			if v == nil {
				dst = append(dst, "null"...)
				break
			}
			dst = append(dst, v...)
		case WireAppender:
			if dst, ok = v.AppendWire(dst); !ok {
				return dst, false
			}
		default:
			return dst, false
		}
	}
	return append(dst, '}'), true
}

// plainASCII reports whether s needs no escaping in JSON.
func plainASCII(s string) bool {
	for i := range len(s) {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// WireJSON is JSON already in the form wireOpts' encoding writes raw JSON
// (see appendRaw): compact, valid UTF-8, <, >, &, U+2028 and U+2029 in strings
// escaped. A _meta value of this type is copied onto the line as it is, where
// raw JSON is checked and re-escaped byte by byte: a replayed read or search
// card is most of its update. The general way writes it the same (its
// MarshalJSON), as wireOpts writes raw JSON that needs no change.
type WireJSON []byte

// MarshalJSON returns w.
func (w WireJSON) MarshalJSON() ([]byte, error) {
	if w == nil {
		return []byte("null"), nil
	}
	return w, nil
}

// WireAppender is a _meta value that appends itself to the line in the form
// WireJSON holds, without a copy of its own (a replayed card is most of its
// update); ok false sends the notification the general way, which writes what
// MarshalJSON returns as it writes raw JSON, and must come to the same bytes.
type WireAppender interface {
	AppendWire(dst []byte) ([]byte, bool)
	MarshalJSON() ([]byte, error)
}

// appendRaw appends valid JSON as wireOpts' encoding writes raw JSON:
// whitespace between tokens dropped, <, >, &, U+2028 and U+2029 in strings
// escaped, other runes as they are. Raw JSON that is not valid UTF-8 is left
// to the general way. (A card with a line of text that is not ASCII used to
// send its whole update the general way, several times slower.)
func appendRaw(dst []byte, raw []byte) ([]byte, bool) {
	// Runs of bytes that stay as they are are copied whole: card JSON is long.
	in := false
	start := 0
	for i := 0; i < len(raw); i++ {
		stop := &rawStop[0]
		if in {
			stop = &rawStop[1]
		}
		for i < len(raw) && !stop[raw[i]] {
			i++
		}
		if i == len(raw) {
			break
		}
		c := raw[i]
		switch {
		case c >= utf8.RuneSelf:
			if !in {
				return dst, false // not valid JSON: the general way says so
			}
			r, n := utf8.DecodeRune(raw[i:])
			switch {
			case r == utf8.RuneError && n == 1:
				return dst, false // kept as it is, or not: the general way knows
			case r == '\u2028' || r == '\u2029':
				dst = append(dst, raw[start:i]...)
				dst = append(dst, `\u202`...)
				dst = append(dst, hex[r&0xF])
				start = i + n
			}
			i += n - 1
		case in:
			switch c {
			case '\\':
				i++ // valid JSON: an escape has its next byte, kept as it is
			case '"':
				in = false
			case '<', '>', '&':
				dst = append(dst, raw[start:i]...)
				dst = append(dst, `\u00`...)
				dst = append(dst, hex[c>>4], hex[c&0xF])
				start = i + 1
			}
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			dst = append(dst, raw[start:i]...)
			start = i + 1
		case c == '"':
			in = true
		}
	}
	return append(dst, raw[start:]...), true
}

// rawStop holds the bytes appendRaw must look at, outside strings ([0]) and
// inside ([1]); it copies the runs of the others whole.
var rawStop = func() (t [2][256]bool) {
	for c := 0x80; c < 0x100; c++ {
		t[0][c], t[1][c] = true, true
	}
	for _, c := range []byte{' ', '\t', '\n', '\r', '"'} {
		t[0][c] = true
	}
	for _, c := range []byte{'\\', '"', '<', '>', '&'} {
		t[1][c] = true
	}
	return t
}()

// stringStop holds the bytes appendString must look at; it copies the runs of
// the others whole.
var stringStop = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	for c := 0x80; c < 0x100; c++ {
		t[c] = true
	}
	for _, c := range []byte{'\\', '"', '<', '>', '&'} {
		t[c] = true
	}
	return t
}()

const hex = "0123456789abcdef"

// appendString appends s quoted as wireOpts' encoding quotes it (encoding/json's
// rules): <, >, &, U+2028 and U+2029 escaped, control characters as \b, \f,
// \n, \r, \t or \u00XX, invalid UTF-8 as U+FFFD.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		i = jsonfast.PlainWords(s, i, true)
		for i < len(s) && !stringStop[s[i]] {
			i++
		}
		if i == len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, `\b`...)
			case '\f':
				dst = append(dst, `\f`...)
			case '\n':
				dst = append(dst, `\n`...)
			case '\r':
				dst = append(dst, `\r`...)
			case '\t':
				dst = append(dst, `\t`...)
			default:
				dst = append(dst, `\u00`...)
				dst = append(dst, hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, "\uFFFD"...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\u202`...)
			dst = append(dst, hex[r&0xF])
		default:
			i += n
			continue
		}
		i += n
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
