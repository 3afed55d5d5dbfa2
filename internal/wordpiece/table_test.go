package wordpiece

import (
	"fmt"
	"testing"
)

// TestTable: a word-initial token and a continuation with the same text are
// told apart, "##" alone is word-initial, a duplicate of either kind is
// refused, absent keys are not found, and a large vocabulary finds every
// token (strings and bytes alike).
func TestTable(t *testing.T) {
	vocab := []string{"x", "##x", "##", "###", "un", "##able", "a"}
	for i := range 3000 {
		vocab = append(vocab, fmt.Sprintf("w%d", i), fmt.Sprintf("##s%d", i))
	}
	tb := newTable(vocab)
	for i := range vocab {
		if !tb.add(int32(i)) {
			t.Fatalf("%q refused as a duplicate", vocab[i])
		}
	}
	for _, c := range []struct {
		cont bool
		key  string
		id   int32 // -1: absent
	}{
		{false, "x", 0},
		{true, "x", 1},
		{false, "##", 2},
		{true, "#", 3}, // "###" continues with "#"
		{false, "###", -1},
		{true, "able", 5},
		{false, "able", -1},
		{false, "##x", -1},
		{true, "", -1},
		{false, "", -1},
		{false, "w2999", int32(len(vocab) - 2)},
		{true, "s2999", int32(len(vocab) - 1)},
		{true, "w1", -1},
	} {
		for _, bytes := range []bool{false, true} {
			var id int32
			var ok bool
			if bytes {
				id, ok = tb.findBytes(c.cont, []byte(c.key))
			} else {
				id, ok = tb.find(c.cont, c.key)
			}
			if want := c.id >= 0; ok != want || (ok && id != c.id) {
				t.Errorf("find(%v, %q) bytes=%v = %d, %v; want %d", c.cont, c.key, bytes, id, ok, c.id)
			}
		}
	}
	for _, dup := range []string{"x", "##x", "##"} {
		d := newTable(append(append([]string(nil), vocab...), dup))
		for i := range vocab {
			d.add(int32(i))
		}
		if d.add(int32(len(vocab))) {
			t.Errorf("duplicate %q accepted", dup)
		}
	}
}
