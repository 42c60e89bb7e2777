package session

import (
	"bytes"
	"reflect"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

// encodeHeader is json.Marshal(r, encOpts) for a header that holds nothing
// but a header's fields, written token by token: a fresh process that opens a
// session writes it before any other record, and encoding it the general way
// reflected on every member of Record first (a quarter of a millisecond of
// session/new). ok is false for any other record, which is left to json.Marshal.
func encodeHeader(r Record) (b []byte, ok bool) {
	if r.Type != TypeHeader || !onlyHeaderFields(r) || r.Time.Year() < 0 || r.Time.Year() > 9999 {
		return nil, false
	}
	tokens := []jsontext.Token{jsontext.BeginObject,
		jsontext.String("type"), jsontext.String(string(r.Type)),
		jsontext.String("time"), jsontext.String(r.Time.Format(time.RFC3339Nano))}
	if r.Version != 0 {
		tokens = append(tokens, jsontext.String("version"), jsontext.Int(int64(r.Version)))
	}
	for _, m := range []struct{ name, value string }{{"sessionId", r.SessionID}, {"cwd", r.Cwd}, {"system", r.System}} {
		if m.value != "" {
			tokens = append(tokens, jsontext.String(m.name), jsontext.String(m.value))
		}
	}
	tokens = append(tokens, jsontext.EndObject)
	var buf bytes.Buffer
	e := jsontext.NewEncoder(&buf, encOpts)
	for _, t := range tokens {
		if e.WriteToken(t) != nil {
			return nil, false
		}
	}
	// The encoder ends a value with a newline; encode adds its own.
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), true
}

// onlyHeaderFields reports whether every member of r but those encodeHeader
// writes is zero: a member added to Record later, set on a header, sends it
// the general way.
func onlyHeaderFields(r Record) bool {
	v := reflect.ValueOf(r)
	t := v.Type()
	for i := range t.NumField() {
		switch t.Field(i).Name {
		case "Type", "Time", "Version", "SessionID", "Cwd", "System":
		default:
			if !v.Field(i).IsZero() {
				return false
			}
		}
	}
	return true
}
