package fs

import (
	"math"

	"github.com/go-json-experiment/json"
)

// metaMaxInt bounds the integers meta narrowing accepts: every integer up to it
// is exact in a float64, and no file has more lines.
const metaMaxInt = 1 << 53

// metaInt accepts a JSON number (decoded as float64) that is an integer in
// [lo, metaMaxInt]: 1.5, NaN and 1e300 are refused, not rounded.
func metaInt(v any, lo int) (int, bool) {
	f, ok := v.(float64)
	if !ok || f != math.Trunc(f) || f < float64(lo) || f > metaMaxInt {
		return 0, false
	}
	return int(f), true
}

// metaObject decodes persisted meta that must be a JSON object. The v2 decoder
// also refuses duplicate names, invalid UTF-8 and trailing data.
func metaObject(raw []byte) (map[string]any, bool) {
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil {
		return nil, false
	}
	obj, ok := v.(map[string]any)
	return obj, ok
}
