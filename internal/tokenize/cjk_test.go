package tokenize

import (
	"math/rand"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestChineseQueryMatchesMemory checks the motivating pair: a Chinese question and a
// memory written without spaces must share their content terms.
func TestChineseQueryMatchesMemory(t *testing.T) {
	tk := New(DefaultOptions())
	query := tk.Tokens("如何在 MySQL 中创建只读用户？")
	memory := tk.Tokens("创建一个只读的MySQL用户")
	shared := map[string]bool{}
	for _, q := range query {
		for _, m := range memory {
			if q == m {
				shared[q] = true
			}
		}
	}
	for _, want := range []string{"创建", "只读", "用户", "mysql"} {
		if !shared[want] {
			t.Errorf("term %q not shared: query %q, memory %q", want, query, memory)
		}
	}
}

// TestHangulSyllablesStayWhole checks that decomposing syllables for diacritic
// folding never leaves conjoining jamo in a term, and that every term of a
// syllable-only text is made of syllables.
func TestHangulSyllablesStayWhole(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	tk := New(DefaultOptions())
	for i := 0; i < 200; i++ {
		var b strings.Builder
		for j := r.Intn(12) + 1; j > 0; j-- {
			switch r.Intn(6) {
			case 0:
				b.WriteByte(' ')
			case 1:
				b.WriteString("café ")
			default:
				b.WriteRune(rune(0xAC00 + r.Intn(11172))) // Hangul syllables block
			}
		}
		text := b.String()
		for _, tok := range tk.Tokens(text) {
			for _, c := range tok {
				if isConjoiningJamo(c) {
					t.Fatalf("Tokens(%q) has jamo U+%04X in %q", text, c, tok)
				}
				if c >= utf8.RuneSelf && (c < 0xAC00 || c > 0xD7A3) {
					t.Fatalf("Tokens(%q) has non-syllable U+%04X in %q", text, c, tok)
				}
			}
		}
	}
}

// TestCJKBigramsMatchReference checks the bigrams of pure CJK runs against a
// direct rune-slice computation.
func TestCJKBigramsMatchReference(t *testing.T) {
	alphabet := []rune("创建只读用户数据库你好世界カタナひらがな한국어텍스트")
	r := rand.New(rand.NewSource(3))
	tk := New(Options{})
	for i := 0; i < 500; i++ {
		run := make([]rune, r.Intn(9)+1)
		for j := range run {
			run[j] = alphabet[r.Intn(len(alphabet))]
		}
		var want []string
		if len(run) == 1 {
			want = []string{string(run)}
		}
		for j := 0; j+1 < len(run); j++ {
			want = append(want, string(run[j:j+2]))
		}
		got := tk.Tokens(string(run))
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Fatalf("Tokens(%q) = %q, want %q", string(run), got, want)
		}
	}
}
