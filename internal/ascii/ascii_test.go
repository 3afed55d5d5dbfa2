package ascii

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// reference is Is a byte at a time.
func reference(s string) bool { return prefixReference(s) == len(s) }

// prefixReference is Prefix a byte at a time.
func prefixReference(s string) int {
	for i := range len(s) {
		if s[i] >= utf8.RuneSelf {
			return i
		}
	}
	return len(s)
}

func TestIs(t *testing.T) {
	cases := []struct {
		s    string
		want bool
	}{
		{"", true},
		{"a", true},
		{"seven77", true},
		{"eight888", true},
		{"exactly sixteen!", true},
		{"\x7f\x00 control bytes", true},
		{"é", false},
		{"fifteen bytes é", false},     // in the tail after the words
		{"é in the first word", false}, // in the first eight bytes
		{"sixteen bytes + é", false},   // in the last byte
		{strings.Repeat("x", 63) + "\x80", false},
		{"\xff", false}, // not UTF-8 at all
	}
	for _, c := range cases {
		if got := Is(c.s); got != c.want || got != reference(c.s) {
			t.Errorf("Is(%q) = %t, want %t", c.s, got, c.want)
		}
		if got, want := Prefix(c.s), prefixReference(c.s); got != want {
			t.Errorf("Prefix(%q) = %d, want %d", c.s, got, want)
		}
	}
}

func FuzzIs(f *testing.F) {
	for _, s := range []string{"", "ascii only", "naïve", "\xff\xfe", strings.Repeat("ab", 9) + "中"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := Is(s), reference(s); got != want {
			t.Fatalf("Is(%q) = %t, the byte loop %t", s, got, want)
		}
		if got, want := Prefix(s), prefixReference(s); got != want {
			t.Fatalf("Prefix(%q) = %d, the byte loop %d", s, got, want)
		}
	})
}
