package rpcfix

import (
	stdjson "encoding/json"
	"unicode/utf8"

	sdk "github.com/coder/acp-go-sdk"
)

// AppendNewSession appends session/new's result as the SDK encodes it
// (encoding/json; a config option re-encoded through a map, so its keys
// sorted), written by hand: encoding/json's first use of these types reflects
// on each of them, which was most of what a fresh process spent answering its
// first session/new. ok is false for what dsh does not send (_meta, a
// grouped or boolean option): the caller then encodes the response the
// general way.
func AppendNewSession(dst []byte, r sdk.NewSessionResponse) ([]byte, bool) {
	if len(r.Meta) > 0 {
		return dst, false
	}
	dst = append(dst, '{')
	if len(r.ConfigOptions) > 0 {
		dst = append(dst, `"configOptions":[`...)
		for i, o := range r.ConfigOptions {
			if i > 0 {
				dst = append(dst, ',')
			}
			var ok bool
			if dst, ok = appendSelect(dst, o); !ok {
				return dst, false
			}
		}
		dst = append(dst, "],"...)
	}
	if m := r.Modes; m != nil {
		if len(m.Meta) > 0 {
			return dst, false
		}
		dst = append(dst, `"modes":{"availableModes":`...)
		if m.AvailableModes == nil {
			dst = append(dst, "null"...)
		} else {
			dst = append(dst, '[')
			for i, md := range m.AvailableModes {
				if len(md.Meta) > 0 {
					return dst, false
				}
				if i > 0 {
					dst = append(dst, ',')
				}
				dst = append(dst, '{')
				if md.Description != nil {
					dst = append(dst, `"description":`...)
					dst = appendStdString(dst, *md.Description)
					dst = append(dst, ',')
				}
				dst = append(dst, `"id":`...)
				dst = appendStdString(dst, string(md.Id))
				dst = append(dst, `,"name":`...)
				dst = appendStdString(dst, md.Name)
				dst = append(dst, '}')
			}
			dst = append(dst, ']')
		}
		dst = append(dst, `,"currentModeId":`...)
		dst = appendStdString(dst, string(m.CurrentModeId))
		dst = append(dst, "},"...)
	}
	dst = append(dst, `"sessionId":`...)
	dst = appendStdString(dst, string(r.SessionId))
	return append(dst, '}'), true
}

// appendSelect appends a select option: the SDK marshals it, decodes that into
// a map, sets "type" and marshals the map, so its members come sorted (and
// invalid UTF-8, escaped as \ufffd by the first pass, as U+FFFD itself).
func appendSelect(dst []byte, o sdk.SessionConfigOption) ([]byte, bool) {
	s := o.Select
	if s == nil || o.Boolean != nil || len(s.Meta) > 0 || s.Options.Ungrouped == nil || s.Options.Grouped != nil {
		return dst, false
	}
	dst = append(dst, '{')
	if s.Category != nil {
		dst = append(dst, `"category":`...)
		dst = appendString(dst, string(*s.Category))
		dst = append(dst, ',')
	}
	dst = append(dst, `"currentValue":`...)
	dst = appendString(dst, string(s.CurrentValue))
	dst = append(dst, ',')
	if s.Description != nil {
		dst = append(dst, `"description":`...)
		dst = appendString(dst, *s.Description)
		dst = append(dst, ',')
	}
	dst = append(dst, `"id":`...)
	dst = appendString(dst, string(s.Id))
	dst = append(dst, `,"name":`...)
	dst = appendString(dst, s.Name)
	dst = append(dst, `,"options":`...)
	if opts := *s.Options.Ungrouped; opts == nil {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, '[')
		for i, v := range opts {
			if len(v.Meta) > 0 {
				return dst, false
			}
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, '{')
			if v.Description != nil {
				dst = append(dst, `"description":`...)
				dst = appendString(dst, *v.Description)
				dst = append(dst, ',')
			}
			dst = append(dst, `"name":`...)
			dst = appendString(dst, v.Name)
			dst = append(dst, `,"value":`...)
			dst = appendString(dst, string(v.Value))
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	return append(dst, `,"type":"select"}`...), true
}

// appendStdString appends s quoted as encoding/json quotes it: appendString's
// way, but invalid UTF-8 as the escape \ufffd.
func appendStdString(dst []byte, s string) []byte {
	if utf8.ValidString(s) {
		return appendString(dst, s)
	}
	b, _ := stdjson.Marshal(s) // a string always encodes
	return append(dst, b...)
}
