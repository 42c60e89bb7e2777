package fs

import "math"

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
