package jsonfast

// PlainWords returns where, from i, the run of whole 8-byte words of s ends
// that hold no byte a JSON string encoder must look at: none below 0x20, no
// '"', '\\' or byte that is not ASCII, and with html no '<', '>' or '&'. An
// encoder copies that run as it is and goes on byte by byte from there: a
// replay encodes tens of megabytes of card and message text, and a word at a
// time checks it several times faster than a byte at a time.
func PlainWords(s string, i int, html bool) int {
	for ; i+8 <= len(s); i += 8 {
		w := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		// With every byte below 0x80, (v - ones) &^ v has the high bit of the
		// lowest zero byte of v set, and of no byte when v has none.
		if w&high != 0 || (w-0x20*ones)&^w&high != 0 || zeroByte(w^'"'*ones) || zeroByte(w^'\\'*ones) {
			break
		}
		if html && (zeroByte(w^'<'*ones) || zeroByte(w^'>'*ones) || zeroByte(w^'&'*ones)) {
			break
		}
	}
	return i
}

const (
	ones = 0x0101010101010101
	high = 0x8080808080808080
)

// zeroByte reports whether a word of bytes below 0x80 has a zero byte.
func zeroByte(v uint64) bool { return (v-ones)&^v&high != 0 }
