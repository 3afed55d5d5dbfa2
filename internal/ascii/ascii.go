// Package ascii answers whether a text is all ASCII, the fast path the
// tokenizer and the script check take before reading runes.
package ascii

import "unicode/utf8"

// Is reports whether s holds only ASCII bytes, eight at a time.
func Is(s string) bool { return Prefix(s) == len(s) }

// Prefix is the length of s's leading run of ASCII bytes: the index of its
// first byte beyond ASCII, or len(s). It reads eight bytes at a time up to
// the word holding that byte.
func Prefix(s string) int {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		v := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		if v&0x8080808080808080 != 0 {
			break
		}
	}
	for i < len(s) && s[i] < utf8.RuneSelf {
		i++
	}
	return i
}
