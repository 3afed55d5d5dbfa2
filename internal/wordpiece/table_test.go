package wordpiece

import (
	"errors"
	"fmt"
	"slices"
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

// TestTableReadIn: a tokenizer given Table's bytes encodes exactly as one
// that builds its own, and a table of another vocabulary's size, another
// format or cut short is refused; a table with no empty slot (only a
// spoilt one could be) still ends every lookup.
func TestTableReadIn(t *testing.T) {
	vocab := []string{"[UNK]", "[CLS]", "[SEP]", "un", "##aff", "##able", "the", "a", "##s", "cat", "x", "##x"}
	for i := range 500 {
		vocab = append(vocab, fmt.Sprintf("w%d", i), fmt.Sprintf("##t%d", i))
	}
	tb, err := Table(vocab)
	if err != nil {
		t.Fatal(err)
	}
	c := Config{Vocab: vocab, Unknown: "[UNK]", Prefix: "[CLS]", Suffix: "[SEP]"}
	built, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	c.Table = tb
	read, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"", "unaffable cats", "The w12t499 w499 xx x", "w1 ##t3 zzz", "unaffableunaffable"} {
		if a, b := built.Encode(nil, text), read.Encode(nil, text); !slices.Equal(a, b) {
			t.Errorf("%q: built %v, read %v", text, a, b)
		}
	}
	for name, bad := range map[string]string{
		"other vocabulary": func() string { s, _ := Table(vocab[:len(vocab)-1]); return s }(),
		"other format":     "WPT0" + tb[4:],
		"cut short":        tb[:len(tb)-4],
		"empty":            "",
	} {
		c.Table = bad
		if name == "empty" {
			continue // "" means: build one
		}
		if _, err := New(c); !errors.Is(err, errTable) {
			t.Errorf("%s: %v, want errTable", name, err)
		}
	}
	full := []byte(tb)
	for i := tableHeader; i < len(full); i += 4 {
		copy(full[i:], []byte{1, 0, 0, 0}) // every slot names token 0
	}
	tok, err := New(Config{Vocab: vocab, Unknown: "[UNK]", Table: string(full)})
	if err != nil {
		t.Fatal(err)
	}
	tok.Encode(nil, "cat w3") // ends, whatever it finds
}

// FuzzTable reads arbitrary bytes as a lookup table: New refuses them or
// gives a tokenizer whose Encode ends without panicking, ids in range.
func FuzzTable(f *testing.F) {
	vocab := []string{"[UNK]", "a", "##b", "cat", "##s"}
	good, err := Table(vocab)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good, "cats ab")
	f.Add(good[:tableHeader], "a")
	f.Add("WPT1"+string(make([]byte, 16)), "x")
	f.Fuzz(func(t *testing.T, table, text string) {
		if table == "" {
			return // "" builds a table
		}
		tok, err := New(Config{Vocab: vocab, Unknown: "[UNK]", Table: table})
		if err != nil {
			return
		}
		for _, id := range tok.Encode(nil, text) {
			if id < 0 || int(id) >= len(vocab) {
				t.Fatalf("id %d out of range", id)
			}
		}
	})
}
