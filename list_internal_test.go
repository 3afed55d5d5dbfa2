package engram

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// FuzzListCursor: decoding a cursor never panics; what it refuses is one
// ErrInvalid line naming the cursor, and what it accepts encodes back to a
// cursor that decodes the same.
func FuzzListCursor(f *testing.F) {
	scope := `{"team":"a"}`
	for _, s := range []string{"", "%%%", "e30", "eyJvIjoiLWlkIiwiayI6MCwiaWQiOiJzYW1lIn0",
		encodeCursor(listCursor{Order: "-uses", Key: -3, ID: "x", Scope: &scope}), "!!!!", strings.Repeat("A", 100)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := decodeCursor(s)
		if err != nil {
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "cursor") {
				t.Fatalf("decodeCursor(%q): %v", s, err)
			}
			return
		}
		back, err := decodeCursor(encodeCursor(c))
		if err != nil || !reflect.DeepEqual(back, c) {
			t.Fatalf("decodeCursor(%q) = %+v; encoded and decoded again: %+v, %v", s, c, back, err)
		}
	})
}
