package wordpiece

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

var fixtureVocab = []string{
	"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]",
	"hello", "world", "un", "##aff", "##able", "cafe", "naive", ",", ".", "!", "[", "]",
	"日", "本", "##s", "the", "cat", "σ", "##ι", "ᄒ", "##ᅡ", "##ᆫ", "_", "tasks", "claim",
	"a", "##a", "x", "##x", "fi", "##nance", "istanbul", "$", "1", "##2",
}

func newFixture(t testing.TB, c Config) *Tokenizer {
	t.Helper()
	if c.Vocab == nil {
		c.Vocab = fixtureVocab
	}
	if c.Unknown == "" {
		c.Unknown = "[UNK]"
	}
	tk, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

func tokens(tk *Tokenizer, text string) string {
	var out []string
	for _, id := range tk.Encode(nil, text) {
		out = append(out, tk.Token(id))
	}
	return strings.Join(out, " ")
}

func TestEncode(t *testing.T) {
	bert := Config{Special: []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}, Prefix: "[CLS]", Suffix: "[SEP]"}
	for _, c := range []struct {
		name, text, want string
		cfg              *Config
	}{
		{"empty", "", "[CLS] [SEP]", nil},
		{"lower case", "Hello WORLD", "[CLS] hello world [SEP]", nil},
		{"punctuation", "hello, world!", "[CLS] hello , world ! [SEP]", nil},
		{"continuation", "unaffable", "[CLS] un ##aff ##able [SEP]", nil},
		{"unknown word", "hello zzz world", "[CLS] hello [UNK] world [SEP]", nil},
		{"partly unknown word is one unknown", "unaffz", "[CLS] [UNK] [SEP]", nil},
		{"accents", "Café naïve", "[CLS] cafe naive [SEP]", nil},
		{"decomposed accents", "cafe\u0301", "[CLS] cafe [SEP]", nil},
		{"dotted capital I", "İstanbul", "[CLS] istanbul [SEP]", nil},
		{"greek capitals", "ΣΊ", "[CLS] σ ##ι [SEP]", nil},
		{"CJK split", "日本s", "[CLS] 日 本 [UNK] [SEP]", nil},
		{"hangul decomposed", "한", "[CLS] ᄒ ##ᅡ ##ᆫ [SEP]", nil},
		{"ligature kept: NFD, not NFKD", "ﬁnance", "[CLS] [UNK] [SEP]", nil},
		{"symbols are punctuation in ASCII", "$1", "[CLS] $ 1 [SEP]", nil},
		{"identifier", "tasks_claim", "[CLS] tasks _ claim [SEP]", nil},
		{"control removed", "hel\x00lo\x07", "[CLS] hello [SEP]", nil},
		{"format removed", "hel\u200blo", "[CLS] hello [SEP]", nil},
		{"whitespace kinds", "hello\tworld\u00a0the\u3000cat\n", "[CLS] hello world the cat [SEP]", nil},
		{"invalid UTF-8 removed", "hel\xfflo", "[CLS] hello [SEP]", nil},
		{"word at the char limit", strings.Repeat("x", 100), "[CLS] " + strings.TrimSpace("x"+strings.Repeat(" ##x", 99)) + " [SEP]", nil},
		{"word past the char limit", strings.Repeat("x", 101), "[CLS] [UNK] [SEP]", nil},
		{"special literal", "hello[SEP]world [cls]", "[CLS] hello [SEP] world [ [UNK] ] [SEP]", nil},
		{"special literal only", "[MASK]", "[CLS] [MASK] [SEP]", nil},
		{"truncation", "the cat the cat the cat", "[CLS] the cat the [SEP]", &Config{Prefix: "[CLS]", Suffix: "[SEP]", MaxLen: 5}},
		{"truncation inside a word", "hello unaffable", "[CLS] hello un ##aff [SEP]", &Config{Prefix: "[CLS]", Suffix: "[SEP]", MaxLen: 5}},
		{"no specials, drop unknown", "the zzz cat", "the cat", &Config{DropUnknown: true}},
		{"unknown counts before dropping", "zzz zzz the cat", "the", &Config{DropUnknown: true, MaxLen: 3}},
		{"special literals off", "[CLS]", "[ [UNK] ]", &Config{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := bert
			if c.cfg != nil {
				cfg = *c.cfg
			}
			tk := newFixture(t, cfg)
			if got := tokens(tk, c.text); got != c.want {
				t.Errorf("Encode(%q) = %s\nwant %s", c.text, got, c.want)
			}
		})
	}
}

func TestNewErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  Config
	}{
		{"empty vocab", Config{Vocab: []string{}, Unknown: "[UNK]"}},
		{"unknown missing", Config{Vocab: []string{"a"}, Unknown: "[UNK]"}},
		{"duplicate", Config{Vocab: []string{"[UNK]", "a", "a"}, Unknown: "[UNK]"}},
		{"empty entry", Config{Vocab: []string{"[UNK]", ""}, Unknown: "[UNK]"}},
		{"prefix missing", Config{Vocab: []string{"[UNK]"}, Unknown: "[UNK]", Prefix: "[CLS]"}},
		{"special missing", Config{Vocab: []string{"[UNK]"}, Unknown: "[UNK]", Special: []string{"[X]"}}},
		{"no room", Config{Vocab: []string{"[UNK]", "[CLS]"}, Unknown: "[UNK]", Prefix: "[CLS]", Suffix: "[CLS]", MaxLen: 2}},
		{"negative", Config{Vocab: []string{"[UNK]"}, Unknown: "[UNK]", MaxLen: -1}},
	} {
		if _, err := New(c.cfg); err == nil {
			t.Errorf("%s: New succeeded", c.name)
		}
	}
}

// The ASCII fast path agrees with the general tables on every ASCII byte.
func TestASCIITable(t *testing.T) {
	for c := rune(0); c < 128; c++ {
		k := kindOf(c)
		switch asciiClass[c] {
		case asciiRemove:
			if k != kindRemove {
				t.Errorf("%q: remove, kind %d", c, k)
			}
		case asciiSpace:
			if k != kindSpace && c != ' ' {
				t.Errorf("%q: space, kind %d", c, k)
			}
		case asciiPunct:
			if k != kindKeep || !inPunct(c) {
				t.Errorf("%q: punct, kind %d", c, k)
			}
		case asciiLetter:
			if inPunct(rune(asciiLower[c])) {
				t.Errorf("%q: letter but punctuation", c)
			}
		}
	}
}

// Table invariants: sorted, disjoint, every kindMap code point has a mapping.
func TestTables(t *testing.T) {
	for i := 1; i < len(spans); i++ {
		if spans[i].lo <= spans[i-1].hi || spans[i].lo > spans[i].hi {
			t.Fatalf("spans %d and %d overlap or are unsorted", i-1, i)
		}
	}
	for i := 1; i < len(punct); i++ {
		if punct[i].lo <= punct[i-1].hi {
			t.Fatalf("punct %d unsorted", i)
		}
	}
	n := 0
	for _, s := range spans {
		if s.kind == kindMap {
			for r := s.lo; r <= s.hi; r++ {
				i, ok := slices.BinarySearchFunc(mapped[:], r, func(m mapping, r rune) int { return int(m.r - r) })
				if !ok || !utf8.ValidString(mapped[i].to) {
					t.Fatalf("U+%04X has no mapping", r)
				}
				n++
			}
		}
	}
	if n != len(mapped) {
		t.Errorf("%d kindMap code points, %d mappings", n, len(mapped))
	}
	if l, v, tail := hangul('한'); l != 'ᄒ' || v != 'ᅡ' || tail != 'ᆫ' {
		t.Errorf("hangul(한) = %q %q %q", l, v, tail)
	}
}

func TestEncodeAppends(t *testing.T) {
	tk := newFixture(t, Config{})
	got := tk.Encode([]int32{42}, "hello")
	if !slices.Equal(got, []int32{42, 5}) {
		t.Errorf("Encode appended %v", got)
	}
}

func FuzzEncode(f *testing.F) {
	for _, s := range []string{"", "Hello, world!", "[CLS]x[SEP]", "日本語 한국어", "\x00\xff\u200d", strings.Repeat("unaff", 30)} {
		f.Add(s, 8)
	}
	cfgs := []Config{
		{Special: []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}, Prefix: "[CLS]", Suffix: "[SEP]"},
		{DropUnknown: true},
	}
	var tks []*Tokenizer
	for _, c := range cfgs {
		tks = append(tks, newFixture(f, c))
	}
	f.Fuzz(func(t *testing.T, text string, maxLen int) {
		maxLen = 3 + (maxLen&0xff)%64
		for i, c := range cfgs {
			c.MaxLen = maxLen
			limited := newFixture(t, c)
			for _, tk := range []*Tokenizer{tks[i], limited} {
				ids := tk.Encode(nil, text)
				if tk.MaxLen() > 0 && len(ids) > tk.MaxLen() {
					t.Fatalf("%d ids, limit %d", len(ids), tk.MaxLen())
				}
				for _, id := range ids {
					if id < 0 || int(id) >= tk.Len() {
						t.Fatalf("id %d out of range", id)
					}
				}
			}
			// Truncation keeps a prefix of the untruncated ids.
			full, cut := tks[i].Encode(nil, text), limited.Encode(nil, text)
			if c.Prefix != "" {
				full, cut = full[1:len(full)-1], cut[1:len(cut)-1]
			}
			if !c.DropUnknown && !slices.Equal(full[:len(cut)], cut) {
				t.Fatalf("truncated %v is not a prefix of %v", cut, full)
			}
		}
	})
}
