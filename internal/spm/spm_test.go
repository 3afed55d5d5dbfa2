package spm

import (
	"slices"
	"strings"
	"testing"
)

// toy is a vocabulary small enough to check segmentations by hand.
func toy(tb testing.TB) *Tokenizer {
	tb.Helper()
	pieces := []string{"<unk>", "▁", "▁a", "b", "▁ab", "c", "▁abc", "bc", "é", "<s>"}
	scores := []float32{0, -2, -1, -1, -1.5, -1, -5, -0.5, -1, 0}
	t, err := New(Config{
		Pieces: pieces, Scores: scores, Unknown: 0,
		Norm: map[rune][]rune{'\t': {' '}, 0x00ad: nil, 'ﬀ': {'b', 'c'}},
	})
	if err != nil {
		tb.Fatal(err)
	}
	return t
}

func TestEncode(t *testing.T) {
	tk := toy(t)
	for _, c := range []struct {
		name, text string
		want       []int32
	}{
		{"empty is the word marker alone", "", []int32{1}},
		{"best total score wins", "abc", []int32{2, 7}},     // ▁a+bc = -1.5 beats ▁ab+c -2.5 and ▁abc -5
		{"runs of spaces collapse", "a   a", []int32{2, 2}}, // ▁a ▁a
		{"leading space is the marker", " a", []int32{2}},   // no second ▁
		{"trailing space is a marker", "a ", []int32{2, 1}}, // ▁a ▁
		{"normaliser replaces", "a\tbc", []int32{2, 1, 7}},  // tab → space → ▁
		{"normaliser drops", "a\u00adb", []int32{4}},        // soft hyphen gone: ▁ab
		{"normaliser expands", "aﬀ", []int32{2, 7}},         // ﬀ → bc
		{"a space from the normaliser collapses too", "a \t", []int32{2, 1}},
		{"unknown character", "axb", []int32{2, 0, 3}},
		{"unknown ids are not merged", "axx", []int32{2, 0, 0}},
		{"the unknown piece's text is no piece", "<unk>", []int32{1, 0, 0, 0, 0, 0}},
		{"a special piece's text is a piece", "<s>", []int32{1, 9}},
		{"accented", "é", []int32{1, 8}},
		// A byte that starts no complete sequence reads as the code point of
		// its value (0xe9 is é), as the reference engine reads it.
		{"not UTF-8", "\xc3", []int32{1, 0}},
		{"not UTF-8, Latin-1 value", "\xe9", []int32{1, 8}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := tk.Encode(nil, c.text); !slices.Equal(got, c.want) {
				t.Errorf("Encode(%q) = %v, want %v", c.text, got, c.want)
			}
		})
	}
}

func TestEncodeAppends(t *testing.T) {
	tk := toy(t)
	if got := tk.Encode([]int32{42}, "abc"); !slices.Equal(got, []int32{42, 2, 7}) {
		t.Errorf("Encode appended %v", got)
	}
}

func TestNewErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  Config
	}{
		{"no pieces", Config{}},
		{"scores and pieces differ", Config{Pieces: []string{"a"}, Scores: []float32{1, 2}}},
		{"unknown out of range", Config{Pieces: []string{"a"}, Scores: []float32{1}, Unknown: 1}},
		{"only the unknown piece", Config{Pieces: []string{"<unk>"}, Scores: []float32{0}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := New(c.cfg); err == nil {
				t.Error("no error")
			}
		})
	}
}

// FuzzEncode: no panic, every id in range, at most one id per character of
// the normalised text (and the one marker before it).
func FuzzEncode(f *testing.F) {
	tk := toy(f)
	for _, s := range []string{"", "abc", " a  b ", "\xff\xfe", "ﬀﬀ\t\u00ad", "\xf4\x90\x80\x80", "\xed\xa0\x80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_, starts := tk.normalize(s)
		ids := tk.Encode(nil, s)
		if len(ids) == 0 || len(ids) > len(starts)-1 {
			t.Fatalf("%d ids for %d characters", len(ids), len(starts)-1)
		}
		for _, id := range ids {
			if id < 0 || int(id) >= tk.Size() {
				t.Fatalf("id %d out of range", id)
			}
		}
	})
}

// TestTableAhead: a tokenizer over a table made ahead (Table) segments as
// one that builds it, duplicates and the unknown piece included.
func TestTableAhead(t *testing.T) {
	pieces := []string{"<unk>", "▁", "▁a", "b", "▁ab", "c", "▁abc", "bc", "é", "<s>", "b", "", "▁ab"}
	scores := []float32{0, -2, -1, -1, -1.5, -1, -5, -0.5, -1, 0, -0.1, 0, -0.1}
	norm := map[rune][]rune{'\t': {' '}}
	built, err := New(Config{Pieces: pieces, Scores: scores, Norm: norm})
	if err != nil {
		t.Fatal(err)
	}
	ahead, err := New(Config{Pieces: pieces, Scores: scores, Norm: norm, Table: Table(pieces, 0)})
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"", "abc", "a b\tc", "bbb", "<unk>", "<s>", "é", "xyz", "ab ab abc"} {
		if a, b := built.Encode(nil, text), ahead.Encode(nil, text); !slices.Equal(a, b) {
			t.Errorf("Encode(%q): %v built, %v ahead", text, a, b)
		}
	}
	if id, ok := ahead.ids.find([]byte("b")); !ok || id != 3 {
		t.Errorf(`"b" is id %d (%v), want the first of its two ids, 3`, id, ok)
	}
	for _, p := range []string{"<unk>", "", "▁abcd"} {
		if id, ok := ahead.ids.find([]byte(p)); ok {
			t.Errorf("%q found as id %d", p, id)
		}
	}
}

// TestTableRejects: a table that does not fit its pieces is refused with
// what is wrong, never read past its end.
func TestTableRejects(t *testing.T) {
	pieces, scores := []string{"<unk>", "a", "b"}, []float32{0, -1, -1}
	good := Table(pieces, 0)
	for _, c := range []struct{ name, table string }{
		{"short", good[:5]},
		{"magic", "XXXX" + good[4:]},
		{"another vocabulary", Table([]string{"<unk>", "a"}, 0)},
		{"truncated slots", good[:len(good)-4]},
		{"slots not a power of two", good[:4+8] + "\x03\x00\x00\x00" + good[16:16+12]},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := New(Config{Pieces: pieces, Scores: scores, Table: c.table}); err == nil {
				t.Error("accepted")
			}
		})
	}
	if _, err := New(Config{Pieces: pieces, Scores: scores, Table: good}); err != nil {
		t.Errorf("its own table: %v", err)
	}
}

// FuzzTable: the table finds exactly what a map of the usable pieces (not
// empty, not the unknown one, the first of duplicates) finds.
func FuzzTable(f *testing.F) {
	for _, s := range []string{"", "a|b|a", "<unk>|x||x|y", "▁|▁a|é|é"} {
		f.Add(s, uint8(0))
	}
	f.Fuzz(func(t *testing.T, s string, unk uint8) {
		pieces := strings.Split(s, "|")
		unknown := int32(int(unk) % len(pieces))
		want := map[string]int32{}
		for i, p := range pieces {
			if _, dup := want[p]; p != "" && !dup && int32(i) != unknown {
				want[p] = int32(i)
			}
		}
		tab, _, err := readTable(pieces, Table(pieces, unknown))
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range append(pieces, s, s+"|", "zz") {
			id, ok := tab.find([]byte(k))
			if w, wok := want[k]; ok != wok || id != w {
				t.Fatalf("find(%q) = %d %v, want %d %v", k, id, ok, w, wok)
			}
		}
	})
}
