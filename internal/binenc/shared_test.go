package binenc

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"
)

// TestStringsShared reads string lists (empty strings, strings longer than a
// buffer, enough to fill several buffers) back with StringsShared and Strings
// and requires the same values; raw byte parts read back as one Bytes; and a
// truncated list is an error.
func TestStringsShared(t *testing.T) {
	var many []string
	for i := range 20000 {
		many = append(many, strings.Repeat("x", i%13)+string(rune('a'+i%26)))
	}
	for _, want := range [][]string{nil, {""}, {"a", "", "ccc"}, {strings.Repeat("long", 40000), "b"}, many} {
		var buf bytes.Buffer
		w := NewWriter(&buf)
		w.Strings(want)
		w.Uint64(5)
		w.RawBytes([]byte{1, 2})
		w.RawBytes(nil)
		w.RawBytes([]byte{3, 4, 5})
		if err := w.Finish(); err != nil {
			t.Fatal(err)
		}
		data := buf.Bytes()
		r := NewReader(bytes.NewReader(data), int64(len(data)))
		got := r.StringsShared()
		raw := r.Bytes()
		if err := r.Verify(); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) || !bytes.Equal(raw, []byte{1, 2, 3, 4, 5}) {
			t.Fatalf("read %d strings and %v, want %d and 1..5", len(got), raw, len(want))
		}
		if len(want) > 0 {
			cut := data[:len(data)-TrailerSize-13-1] // into the last string or its length
			r := NewReader(bytes.NewReader(cut), int64(len(cut))+TrailerSize)
			if s := r.StringsShared(); s != nil || !errors.Is(r.Err(), ErrCorrupt) {
				t.Fatalf("truncated: %d strings, error %v", len(s), r.Err())
			}
		}
	}
}
