package session

import (
	"github.com/go-json-experiment/json/jsontext"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/jsonfast"
	"github.com/dsh-dev/dsh/internal/tool"
)

// decodeFast decodes the records dsh writes most — messages, tool calls and
// their results, turn ends — without reflection: a reload reads every line of
// a long log. It knows only the plainest form of each member (strings without
// \u escapes, integers without fraction or exponent, no nulls, names without
// escapes) and reports false for anything else, which json.Unmarshal then
// decodes, or refuses, as it always did. What it does accept, it decodes to
// exactly what json.Unmarshal makes of it (FuzzDecodeFast compares the two),
// invalid JSON, duplicate names and invalid UTF-8 included.
//
// meta, if not nil, is asked to read a result's meta first (its call's id is
// known by then: dsh writes callId before result), which it then decodes in
// this pass (see MetaReader).
func decodeFast(line []byte, r *Record, meta func(id string, d *jsonfast.Reader) (jsontext.Value, bool)) bool {
	return decodeFastWith(jsonfast.NewReader(line), r, meta)
}

// decodeFastWith is decodeFast of what d reads.
func decodeFastWith(d *jsonfast.Reader, r *Record, meta func(id string, d *jsonfast.Reader) (jsontext.Value, bool)) bool {
	ok := d.Object(func(name []byte) bool {
		switch string(name) {
		case "type":
			s, ok := d.StrIn(recordTypes)
			r.Type = RecordType(s)
			return ok
		case "time":
			return d.Time(&r.Time)
		case "version":
			return d.Int(&r.Version)
		case "keep":
			return d.Int(&r.Keep)
		case "continues":
			return d.Bool(&r.Continues)
		case "aside":
			return d.Bool(&r.Aside)
		case "args":
			return d.Raw(&r.Args)
		case "preview":
			return d.Raw(&r.Preview)
		case "result":
			r.Result = new(tool.Result)
			var own func(d *jsonfast.Reader) (jsontext.Value, bool)
			if meta != nil && r.CallID != "" {
				id := r.CallID
				own = func(d *jsonfast.Reader) (jsontext.Value, bool) { return meta(id, d) }
			}
			return result(d, r.Result, own)
		case "usage":
			r.Usage = new(Usage)
			return usage(d, r.Usage)
		}
		if p := r.stringField(name); p != nil {
			s, ok := d.Str()
			*p = s
			return ok
		}
		return false // content, plan, keys, or unknown: left to json.Unmarshal
	})
	return ok && d.End()
}

// The record and content types, which decodeFast does not allocate again for
// every line. (The order puts the commonest first.)
var (
	recordTypes = []string{string(TypeToolResult), string(TypeToolCall), string(TypeAssistant), string(TypeProgress),
		string(TypeUser), string(TypeTurnEnd), string(TypeThinking)}
	contentTypes = []string{string(card.ContentText)}
)

// stringField is the string member of r with that name, or nil.
func (r *Record) stringField(name []byte) *string {
	switch string(name) {
	case "sessionId":
		return &r.SessionID
	case "cwd":
		return &r.Cwd
	case "system":
		return &r.System
	case "text":
		return &r.Text
	case "signature":
		return &r.Signature
	case "callId":
		return &r.CallID
	case "name":
		return &r.Name
	case "chunk":
		return &r.Chunk
	case "stopReason":
		return &r.StopReason
	case "error":
		return &r.Error
	case "mode":
		return &r.Mode
	case "focus":
		return &r.Focus
	case "path":
		return &r.Path
	case "model":
		return &r.Model
	case "thinking":
		return &r.Thinking
	}
	return nil
}

func result(d *jsonfast.Reader, res *tool.Result, meta func(d *jsonfast.Reader) (jsontext.Value, bool)) bool {
	return d.Object(func(name []byte) bool {
		switch string(name) {
		case "content":
			return d.Array(func() bool {
				var c card.Content
				ok := d.Object(func(name []byte) bool {
					var p *string
					switch string(name) {
					case "type":
						s, ok := d.StrIn(contentTypes)
						c.Type = card.ContentType(s)
						return ok
					case "text":
						p = &c.Text
					case "data":
						p = &c.Data
					case "mimeType":
						p = &c.MimeType
					case "uri":
						p = &c.URI
					default:
						return false
					}
					s, ok := d.Str()
					*p = s
					return ok
				})
				res.Content = append(res.Content, c)
				return ok
			}) && res.Content != nil
		case "isError":
			return d.Bool(&res.IsError)
		case "meta":
			if meta != nil {
				if raw, ok := meta(d); ok {
					res.Meta = raw
					return true
				}
			}
			return d.Raw(&res.Meta)
		}
		return false
	})
}

func usage(d *jsonfast.Reader, u *Usage) bool {
	return d.Object(func(name []byte) bool {
		switch string(name) {
		case "inputTokens":
			return d.Int64(&u.InputTokens)
		case "outputTokens":
			return d.Int64(&u.OutputTokens)
		case "contextTokens":
			return d.Int64(&u.ContextTokens)
		}
		return false
	})
}
