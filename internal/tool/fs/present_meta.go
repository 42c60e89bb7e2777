package fs

import (
	"bytes"
	"errors"
	"fmt"
	"path"
	"reflect"
	"strings"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// The meta of the file tools is typed: the framework encodes it, and on replay
// decodes it strictly (tool.DecodeMeta: unknown or duplicate members, mistyped
// values and trailing data are refused) and runs its Validate before a presenter
// sees it. The v2 decoder takes a missing member or a null for the zero value,
// which the read card's rules forbid (a missing totalLines is not an empty file),
// so the top-level types also refuse, through metaMembers, every missing member
// that has no omitzero/omitempty and every null.

// metaMaxInt bounds the integers meta may carry: every integer up to it is exact
// in a float64 (a JavaScript consumer reads them too), and no file has more lines.
const metaMaxInt = 1 << 53

// metaUnmarshal decodes b into v (a pointer to a struct type without its own
// UnmarshalJSON) after metaMembers has checked it against t.
func metaUnmarshal(b []byte, t reflect.Type, v any) error {
	if err := metaMembers(b, t); err != nil {
		return err
	}
	return json.Unmarshal(b, v, json.RejectUnknownMembers(true))
}

// metaMembers walks the JSON value b along the Go type t and refuses a null
// anywhere and a missing required member of any struct. Values whose shape does
// not match t are left to the typed decoder, which refuses them.
func metaMembers(b []byte, t reflect.Type) error {
	dec := jsontext.NewDecoder(bytes.NewReader(b))
	return metaWalk(dec, t)
}

func metaWalk(dec *jsontext.Decoder, t reflect.Type) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	kind := dec.PeekKind()
	switch {
	case kind == 'n':
		return errors.New("null member")
	case kind == '{' && t.Kind() == reflect.Struct:
		return metaWalkObject(dec, t)
	case kind == '[' && t.Kind() == reflect.Slice:
		if _, err := dec.ReadToken(); err != nil {
			return err
		}
		for dec.PeekKind() != ']' {
			if err := metaWalk(dec, t.Elem()); err != nil {
				return err
			}
		}
		_, err := dec.ReadToken()
		return err
	}
	return dec.SkipValue()
}

func metaWalkObject(dec *jsontext.Decoder, t reflect.Type) error {
	fields := metaFieldsOf(t)
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	seen := make([]bool, len(fields))
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return err
		}
		i := slicesIndexName(fields, tok.String())
		if i < 0 {
			if err := dec.SkipValue(); err != nil {
				return err
			}
			continue
		}
		seen[i] = true
		if err := metaWalk(dec, fields[i].typ); err != nil {
			return fmt.Errorf("%s: %w", fields[i].name, err)
		}
	}
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	for i, f := range fields {
		if f.required && !seen[i] {
			return fmt.Errorf("missing member %s", f.name)
		}
	}
	return nil
}

type metaField struct {
	name     string
	typ      reflect.Type
	required bool
}

var metaFields sync.Map // reflect.Type → []metaField

// metaFieldsOf lists the JSON members of struct type t: a member is required
// unless its tag says omitzero or omitempty.
func metaFieldsOf(t reflect.Type) []metaField {
	if v, ok := metaFields.Load(t); ok {
		return v.([]metaField)
	}
	var out []metaField
	for i := range t.NumField() {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = sf.Name
		}
		optional := strings.Contains(","+opts+",", ",omitzero,") || strings.Contains(","+opts+",", ",omitempty,")
		out = append(out, metaField{name: name, typ: sf.Type, required: !optional})
	}
	metaFields.Store(t, out)
	return out
}

func slicesIndexName(fields []metaField, name string) int {
	for i, f := range fields {
		if f.name == name {
			return i
		}
	}
	return -1
}

// metaCount checks an integer that counts or numbers something: in [lo, metaMaxInt].
func metaCount(name string, v, lo int) error {
	if v < lo || v > metaMaxInt {
		return fmt.Errorf("%s %d out of range", name, v)
	}
	return nil
}

// fileStamp is what a session saw of a file: enough to tell later that someone
// else changed it. SHA256 covers the first min(Size, stampHashBytes) bytes; a
// file that fits is judged by its size and hash alone (a touch does not make it
// stale), a larger one also by its modification and change times, the latter of
// which no one can set back.
type fileStamp struct {
	Path   string `json:"path"` // absolute, symlinks resolved: one key per file
	Size   int64  `json:"size"`
	MTime  int64  `json:"mtime"` // Unix nanoseconds
	CTime  int64  `json:"ctime"` // Unix nanoseconds
	SHA256 string `json:"sha256"`
}

// stampHashBytes bounds the bytes a stamp hashes (and the bytes a read scans
// past its window to count lines): at SHA-NI speed about 30 ms, so a read of
// the start of a 10 GB file stays fast, while nearly every source file is hashed
// whole.
const stampHashBytes = 64 << 20

// Validate checks what typed JSON can still get wrong.
func (s *fileStamp) Validate() error {
	if s.Path == "" || !path.IsAbs(s.Path) || path.Clean(s.Path) != s.Path {
		return fmt.Errorf("stamp path %q is not absolute and clean", s.Path)
	}
	if s.Size < 0 {
		return errors.New("negative stamp size")
	}
	if len(s.SHA256) != 64 || strings.Trim(s.SHA256, "0123456789abcdef") != "" {
		return errors.New("stamp hash is not a hex SHA-256")
	}
	return nil
}

// same reports whether two stamps describe the same content of the same file.
func (s *fileStamp) same(o *fileStamp) bool {
	if s.Path != o.Path || s.Size != o.Size || s.SHA256 != o.SHA256 {
		return false
	}
	return s.Size <= stampHashBytes || s.MTime == o.MTime && s.CTime == o.CTime
}
