package jsonfast

import (
	"encoding"
	"reflect"
	"strings"
	"sync"
	"unsafe"

	"github.com/go-json-experiment/json"
)

// Decode decodes b into v, a pointer to a fresh (zero) value, as
// json.Unmarshal(b, v, json.RejectUnknownMembers(true)) would, but only when b
// is in the plainest form and every member of every struct in it is there
// unless its tag says omitempty or omitzero; it reports false for anything
// else, leaving v anywhere (the caller zeroes it and asks json.Unmarshal).
// Types it does not know — maps, interfaces, floats, unsigned integers, byte
// slices, the time package's, embedded fields, tags with other options, and
// every type with its own UnmarshalJSON, UnmarshalJSONFrom or UnmarshalText —
// are always false. A logged tool result's meta is decoded this way on every
// reload: reflection-driven decoding was most of what a reload cost.
func Decode(b []byte, v any) bool {
	d := Reader{b: b}
	return DecodeValue(&d, v) && d.End()
}

// DecodeValue is Decode of the one value at d's position, which d then moves
// past: a value inside a larger input (a tool result's meta inside its log
// record) is decoded where it is, without a pass to find its end first.
func DecodeValue(d *Reader, v any) bool {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return false
	}
	p := planOf(rv.Type().Elem())
	if p.dec == nil {
		return false
	}
	return p.dec(d, rv.UnsafePointer())
}

// decoder reads one value into the Go value at p.
type decoder func(d *Reader, p unsafe.Pointer) bool

// plan is a type's decoder, nil if Decode does not take the type. It is a
// cell, so that a recursive type's decoder can refer to its own.
type plan struct{ dec decoder }

var (
	plans    sync.Map // reflect.Type → *plan, complete
	building sync.Mutex
)

func planOf(t reflect.Type) *plan {
	if p, ok := plans.Load(t); ok {
		return p.(*plan)
	}
	building.Lock()
	defer building.Unlock()
	if p, ok := plans.Load(t); ok {
		return p.(*plan)
	}
	b := &builder{partial: map[reflect.Type]*plan{}}
	p := b.build(t)
	// A type is known only once every type it holds is: one that is not takes
	// every type built with it down with it.
	for _, q := range b.partial {
		b.failed = b.failed || q.dec == nil
	}
	for typ, q := range b.partial {
		if b.failed {
			q.dec = nil
		}
		plans.Store(typ, q)
	}
	return p
}

// builder builds the plans of a type and of the types it holds.
type builder struct {
	partial map[reflect.Type]*plan
	failed  bool // a type held is one Decode does not take
}

func (b *builder) build(t reflect.Type) *plan {
	if p, ok := plans.Load(t); ok {
		p := p.(*plan)
		b.failed = b.failed || p.dec == nil
		return p
	}
	if p, ok := b.partial[t]; ok {
		return p // recursion: filled in by the outer call
	}
	p := &plan{}
	b.partial[t] = p
	if ownDecoding(t) {
		return p
	}
	switch t.Kind() {
	case reflect.String:
		p.dec = func(d *Reader, ptr unsafe.Pointer) bool {
			s, ok := d.Str()
			*(*string)(ptr) = s
			return ok
		}
	case reflect.Bool:
		p.dec = func(d *Reader, ptr unsafe.Pointer) bool { return d.Bool((*bool)(ptr)) }
	case reflect.Int, reflect.Int64, reflect.Int32:
		if t.Size() == 8 {
			p.dec = func(d *Reader, ptr unsafe.Pointer) bool { return d.Int64((*int64)(ptr)) }
			break
		}
		p.dec = func(d *Reader, ptr unsafe.Pointer) bool {
			var v int64
			ok := d.Int64(&v) && int64(int32(v)) == v
			*(*int32)(ptr) = int32(v)
			return ok
		}
	case reflect.Pointer:
		elem := b.build(t.Elem())
		et := t.Elem()
		p.dec = func(d *Reader, ptr unsafe.Pointer) bool {
			v := reflect.New(et)
			*(*unsafe.Pointer)(ptr) = v.UnsafePointer()
			return elem.dec(d, v.UnsafePointer())
		}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return p // base64 in JSON
		}
		p.dec = sliceDecoder(t, b.build(t.Elem()))
	case reflect.Array:
		elem, n, size := b.build(t.Elem()), t.Len(), t.Elem().Size()
		p.dec = func(d *Reader, ptr unsafe.Pointer) bool {
			i := 0
			return d.Array(func() bool {
				if i == n {
					return false
				}
				i++
				return elem.dec(d, unsafe.Add(ptr, uintptr(i-1)*size))
			}) && i == n
		}
	case reflect.Struct:
		p.dec = b.structDecoder(t)
	case reflect.Invalid, reflect.Int8, reflect.Int16, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32,
		reflect.Uint64, reflect.Uintptr, reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128,
		reflect.Chan, reflect.Func, reflect.Interface, reflect.Map, reflect.UnsafePointer:
		// not taken: json.Unmarshal's rules for them are not worth repeating here
	}
	return p
}

// ownDecoding reports whether json.Unmarshal decodes t its own way: through a
// method, or as the time package's types.
func ownDecoding(t reflect.Type) bool {
	if t.PkgPath() == "time" {
		return true
	}
	pt := reflect.PointerTo(t)
	return pt.Implements(unmarshaler) || pt.Implements(unmarshalerFrom) || pt.Implements(textUnmarshaler)
}

// The methods json.Unmarshal decodes through. (Implements, unlike looking
// methods up by name, lets the linker drop the methods no one calls.)
var (
	unmarshaler     = reflect.TypeFor[json.Unmarshaler]()
	unmarshalerFrom = reflect.TypeFor[json.UnmarshalerFrom]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// sliceHeader is a slice as the runtime lays it out.
type sliceHeader struct {
	data     unsafe.Pointer
	len, cap int
}

// empty is where an empty slice points: [] decodes to an empty slice, not nil.
var empty [0]uint64

func sliceDecoder(t reflect.Type, elem *plan) decoder {
	size := t.Elem().Size()
	flat := pointerFree(t.Elem())
	// The elements are decoded into a scratch slice, then copied into one of
	// their number: growing the slice itself left twice its size behind in
	// garbage, and a reload decodes a meta of thousands of lines per call.
	// The scratch and the copy are reached through Values made once, with
	// their headers' addresses: reflect.NewAt and Value.Addr look the pointer
	// type up in a sync.Map, for every slice of every meta.
	type scratchSlice struct {
		v, out reflect.Value // of t, addressable; v holds the elements, out is empty
		h, oh  *sliceHeader  // v's and out's
	}
	var scratch sync.Pool // *scratchSlice
	return func(d *Reader, ptr unsafe.Pointer) bool {
		sc, _ := scratch.Get().(*scratchSlice)
		if sc == nil {
			v, out := reflect.New(t).Elem(), reflect.New(t).Elem()
			sc = &scratchSlice{v: v, out: out, h: (*sliceHeader)(v.Addr().UnsafePointer()), oh: (*sliceHeader)(out.Addr().UnsafePointer())}
		}
		h := sc.h
		d.inArray++
		ok := d.Array(func() bool {
			if h.len == h.cap {
				sc.v.Grow(1) // as append grows it, in place
			}
			h.len++
			return elem.dec(d, unsafe.Add(h.data, uintptr(h.len-1)*size))
		})
		d.inArray--
		switch n := h.len; {
		case ok && n > 0 && flat:
			data := d.carve(uintptr(n) * size)
			copy(unsafe.Slice((*byte)(data), uintptr(n)*size), unsafe.Slice((*byte)(h.data), uintptr(n)*size))
			*(*sliceHeader)(ptr) = sliceHeader{data: data, len: n, cap: n}
		case ok && n > 0:
			sc.out.Grow(n)
			sc.oh.len = n
			reflect.Copy(sc.out, sc.v)
			*(*sliceHeader)(ptr) = *sc.oh
			*sc.oh = sliceHeader{}
		case ok:
			*(*sliceHeader)(ptr) = sliceHeader{data: unsafe.Pointer(&empty)}
		}
		sc.v.Clear() // the scratch must not keep what it held alive
		h.len = 0
		if h.cap <= maxScratch/max(int(size), 1) {
			scratch.Put(sc)
		}
		return ok
	}
}

// carve returns n bytes, 8-aligned, from words, for a slice of values without
// pointers: the garbage collector need not look into them, so they may share
// a block of words (a search's ranges, hundreds per meta).
func (d *Reader) carve(n uintptr) unsafe.Pointer {
	w := int((n + 7) / 8)
	if w == 0 {
		return unsafe.Pointer(&empty)
	}
	if cap(d.words)-len(d.words) < w {
		// Blocks of a word per 32 bytes of input (a search's ranges take about
		// one per 64), up to 8 KiB.
		d.words = make([]uint64, 0, max(w, min(len(d.b)/32, 1024)))
	}
	at := len(d.words)
	d.words = d.words[:at+w]
	return unsafe.Pointer(&d.words[at])
}

// pointerFree reports whether values of t hold no pointers (of the kinds
// Decode takes).
func pointerFree(t reflect.Type) bool {
	k := t.Kind()
	if k == reflect.Array {
		return pointerFree(t.Elem())
	}
	if k == reflect.Struct {
		for i := range t.NumField() {
			if !pointerFree(t.Field(i).Type) {
				return false
			}
		}
		return true
	}
	return k == reflect.Bool || k == reflect.Int || k == reflect.Int64 || k == reflect.Int32
}

// maxScratch bounds, in bytes, the scratch slice kept between decodings.
const maxScratch = 1 << 20

type field struct {
	name     string
	offset   uintptr
	plan     *plan
	required bool
}

func (b *builder) structDecoder(t reflect.Type) decoder {
	var fields []field
	for i := range t.NumField() {
		sf := t.Field(i)
		tag, tagged := sf.Tag.Lookup("json")
		if tag == "-" {
			continue
		}
		if sf.Anonymous || !sf.IsExported() {
			if tagged || sf.Anonymous {
				return nil // json.Unmarshal's own rules
			}
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = sf.Name
		}
		if strings.ContainsAny(name, `'"\,`) {
			return nil
		}
		required := true
		for o := range strings.SplitSeq(opts, ",") {
			switch o {
			case "":
			case "omitempty", "omitzero":
				required = false
			default:
				return nil
			}
		}
		for _, f := range fields {
			if f.name == name {
				return nil
			}
		}
		fields = append(fields, field{name: name, offset: sf.Offset, plan: b.build(sf.Type), required: required})
	}
	if len(fields) > 64 {
		return nil
	}
	var want uint64 // the required members, as bits
	for i, f := range fields {
		if f.required {
			want |= 1 << i
		}
	}
	return func(d *Reader, ptr unsafe.Pointer) bool {
		var seen uint64
		return d.Object(func(name []byte) bool {
			for i := range fields {
				if f := &fields[i]; f.name == string(name) {
					seen |= 1 << i
					return f.plan.dec(d, unsafe.Add(ptr, f.offset))
				}
			}
			return false // unknown: refused
		}) && seen&want == want
	}
}
