package tokenize

import (
	"reflect"
	"testing"
	"unicode"
	"unicode/utf8"
)

// FuzzTokens checks that any input tokenizes without panicking, deterministically,
// the same as the reference path, into valid, non-empty, space-free, capped terms.
func FuzzTokens(f *testing.F) {
	for _, s := range []string{
		"", " ", "tasks_claim SEAMLESS_DATA_DIR memory-search.ts", "getUserName v1.2.3 --dry-run",
		"see cmd/engram/main.go.", "key=value a@b.io", "The Who", "café Ünïcödé Straße ﬁle",
		"如何在 MySQL 中创建只读用户？", "创建一个只读的MySQL用户", "한국어 ㅋㅋ", "カタカナ が",
		"it’s C++ .env", "\xff\xfe", "e\u0301\u0301", "🚀", "1,000.5",
	} {
		f.Add(s)
	}
	def := New(DefaultOptions())
	raw := New(Options{CacheSize: 8})
	ref := New(Options{Stem: true, Stopwords: true, CacheSize: -1})
	f.Fuzz(func(t *testing.T, s string) {
		got := def.Tokens(s)
		if again := def.Tokens(s); !reflect.DeepEqual(got, again) {
			t.Fatalf("Tokens(%q) not deterministic: %q then %q", s, got, again)
		}
		if want := ref.appendTokens(nil, s, true); !reflect.DeepEqual(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Fatalf("Tokens(%q) = %q, reference %q", s, got, want)
		}
		for _, toks := range [][]string{got, raw.Tokens(s)} {
			for _, tok := range toks {
				if tok == "" || len(tok) > MaxTokenBytes || !utf8.ValidString(tok) {
					t.Fatalf("Tokens(%q) has bad term %q", s, tok)
				}
				for _, r := range tok {
					if unicode.IsSpace(r) {
						t.Fatalf("Tokens(%q) has term %q with a space", s, tok)
					}
				}
			}
		}
	})
}
