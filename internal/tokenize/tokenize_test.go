package tokenize

import (
	"reflect"
	"strings"
	"testing"
)

var (
	optRaw    = Options{}                            // fold and split only
	optDef    = DefaultOptions()                     // stem + stopwords
	optNoStem = Options{Stopwords: true}             // stopwords only
	optStem   = Options{Stem: true, CacheSize: 1024} // stem only, small cache
)

func TestTokens(t *testing.T) {
	long := strings.Repeat("a", 200)
	cases := []struct {
		name string
		opts Options
		in   string
		want []string
	}{
		// Degenerate input.
		{"empty", optDef, "", nil},
		{"whitespace only", optDef, " \t\n\r\v\f  ", nil},
		{"unicode whitespace only", optDef, "\u00a0\u3000\u2003", nil},
		{"punctuation only", optDef, `!?.,;:()[]{}<>"'---.../// ... ——`, nil},
		{"emoji only", optDef, "🚀🎉👍🏽", nil},
		{"invalid utf8 only", optDef, "\xff\xfe\xc0", nil},
		{"invalid utf8 inside", optRaw, "ab\xffcd e\xc3", []string{"ab", "cd", "e"}},

		// Plain words.
		{"plain word stemmed", optDef, "Running", []string{"run"}},
		{"plain word raw", optRaw, "Running", []string{"running"}},
		{"sentence", optDef, "The cats are running quickly.", []string{"cat", "run", "quick"}},
		{"repeats kept", optDef, "cat cat dog cat", []string{"cat", "cat", "dog", "cat"}},
		{"upper case word", optRaw, "HTTP", []string{"http"}},
		{"newlines and tabs", optRaw, "line1\nline2\tx", []string{"line1", "line2", "x"}},
		{"emoji between words", optRaw, "ship it 🚀🎉 now", []string{"ship", "it", "now"}},
		{"quoted", optRaw, "'quoted' \"words\"", []string{"quoted", "words"}},
		{"possessive", optRaw, "the user's session", []string{"the", "user", "session"}},
		{"plural possessive", optRaw, "the users' sessions", []string{"the", "users", "sessions"}},
		{"contraction joined", optRaw, "don't rock'n'roll", []string{"dont", "rocknroll"}},
		{"apostrophe name", optRaw, "O'Reilly", []string{"oreilly", "o", "reilly"}},
		{"contractions are stopwords", optDef, "don't stop, it's fine", []string{"stop", "fine"}},
		{"curly apostrophe", optDef, "it’s fine", []string{"fine"}},
		{"em dash separates", optRaw, "fast—really", []string{"fast", "really"}},

		// Numbers.
		{"numbers", optRaw, "in 2024 we had 3.5 million, 1,000 rows",
			[]string{"in", "2024", "we", "had", "3.5", "3", "5", "million", "1", "000", "rows"}},
		{"negative number", optRaw, "-42", []string{"42"}},
		{"date", optRaw, "2024-01-15", []string{"2024-01-15", "2024", "01", "15"}},
		{"en dash range", optRaw, "2019–2020", []string{"2019-2020", "2019", "2020"}},
		{"number with unit", optDef, "200ms 10x", []string{"200ms", "10x"}},
		{"fullwidth digits", optRaw, "１２３", []string{"123"}},

		// Identifiers: whole (folded, unstemmed) then parts (stemmed, stopwords dropped).
		{"snake case", optDef, "tasks_claim", []string{"tasks_claim", "task", "claim"}},
		{"snake case raw", optRaw, "tasks_claim", []string{"tasks_claim", "tasks", "claim"}},
		{"screaming snake", optRaw, "SEAMLESS_DATA_DIR", []string{"seamless_data_dir", "seamless", "data", "dir"}},
		{"error code", optDef, "ERR_CONN_RESET", []string{"err_conn_reset", "err", "conn", "reset"}},
		{"file name", optRaw, "memory-search.ts", []string{"memory-search.ts", "memory", "search", "ts"}},
		{"file name stemmed", optDef, "memory-search.ts", []string{"memory-search.ts", "memori", "search", "ts"}},
		{"version", optRaw, "v1.2.3", []string{"v1.2.3", "v1", "2", "3"}},
		{"camel case", optRaw, "getUserName", []string{"getusername", "get", "user", "name"}},
		{"pascal case", optRaw, "TokenCache", []string{"tokencache", "token", "cache"}},
		{"acronym then word", optRaw, "HTTPServer", []string{"httpserver", "http", "server"}},
		{"word then acronym", optRaw, "parseJSON", []string{"parsejson", "parse", "json"}},
		{"digit then capital", optRaw, "base64Encode", []string{"base64encode", "base64", "encode"}},
		{"letters and digits stay", optRaw, "ipv4Addr", []string{"ipv4addr", "ipv4", "addr"}},
		{"path", optRaw, "cmd/engram/main.go", []string{"cmd/engram/main.go", "cmd", "engram", "main", "go"}},
		{"trailing full stop", optRaw, "see main.go.", []string{"see", "main.go", "main", "go"}},
		{"trailing punctuation", optRaw, "(main.go), main.go!", []string{"main.go", "main", "go", "main.go", "main", "go"}},
		{"flag", optRaw, "--dry-run", []string{"--dry-run", "dry", "run"}},
		{"short flag", optRaw, "-v", []string{"-v", "v"}},
		{"key value", optRaw, "key=value", []string{"key=value", "key", "value"}},
		{"email raw", optRaw, "a@b.io", []string{"a@b.io", "a", "b", "io"}},
		{"email stopword part dropped", optDef, "a@b.io", []string{"a@b.io", "b", "io"}},
		{"url", optRaw, "https://example.com/a_b", []string{"https://example.com/a_b", "https", "example", "com", "a", "b"}},
		{"windows path", optRaw, `C:\Users\x`, []string{`c:\users\x`, "c", "users", "x"}},
		{"stopword parts dropped", optDef, "state-of-the-art", []string{"state-of-the-art", "state", "art"}},
		{"whole kept when all parts are stopwords", optDef, "the_who", []string{"the_who"}},
		{"c plus plus", optRaw, "C++ and g++.", []string{"c++", "c", "and", "g++", "g"}},
		{"c sharp", optRaw, "C#", []string{"c#", "c"}},
		{"dotfile", optRaw, "cat .env", []string{"cat", ".env", "env"}},
		{"leading slash dropped", optRaw, "/usr/bin", []string{"usr/bin", "usr", "bin"}},
		{"ellipsis", optRaw, "wait...", []string{"wait"}},
		{"identifier possessive", optRaw, "main.go's", []string{"main.go", "main", "go"}},

		// Normalisation.
		{"diacritics", optRaw, "café Ünïcödé naïve façade", []string{"cafe", "unicode", "naive", "facade"}},
		{"diacritics match plain", optDef, "Ünïcödé", []string{"unicod"}},
		{"combining marks", optRaw, "cafe\u0301", []string{"cafe"}},
		{"sharp s", optRaw, "Straße", []string{"strasse"}},
		{"stroke letters", optRaw, "Søren Łódź Æther", []string{"soren", "lodz", "aether"}},
		{"dotted capital I", optRaw, "İstanbul", []string{"istanbul"}},
		{"fullwidth latin", optRaw, "ＭｙＳＱＬ", []string{"mysql", "my", "sql"}},
		{"ligature", optRaw, "ﬁle", []string{"file"}},
		{"nbsp separates", optRaw, "foo\u00a0bar", []string{"foo", "bar"}},
		{"greek", optRaw, "Ελληνικά", []string{"ελληνικα"}},
		{"cyrillic", optRaw, "Привет, мир", []string{"привет", "мир"}},
		{"vietnamese", optRaw, "Tiếng Việt", []string{"tieng", "viet"}},
		{"devanagari keeps marks", optRaw, "हिन्दी", []string{"हिन्दी"}},
		{"arabic", optRaw, "مرحبا", []string{"مرحبا"}},

		// CJK.
		{"chinese bigrams", optRaw, "创建用户", []string{"创建", "建用", "用户"}},
		{"single han", optRaw, "我", []string{"我"}},
		{"single hans apart", optRaw, "我 你", []string{"我", "你"}},
		{"mixed cjk latin", optRaw, "用MySQL数据库", []string{"用", "mysql", "my", "sql", "数据", "据库"}},
		{"japanese kana", optRaw, "カタカナ ひらがな", []string{"カタ", "タカ", "カナ", "ひら", "らが", "がな"}},
		{"halfwidth katakana", optRaw, "ｶﾀｶﾅ", []string{"カタ", "タカ", "カナ"}},
		{"prolonged sound mark", optRaw, "データ", []string{"デー", "ータ"}},
		{"korean", optRaw, "한국어 텍스트", []string{"한국", "국어", "텍스", "스트"}},
		{"korean particle after latin", optRaw, "MySQL에서", []string{"mysql", "my", "sql", "에서"}},
		{"compatibility jamo", optRaw, "ㅋㅋㅋ", []string{"ㅋㅋ", "ㅋㅋ"}},
		{"cjk punctuation", optRaw, "你好。世界！", []string{"你好", "世界"}},

		// Stopwords.
		{"only stopwords kept", optDef, "The Who", []string{"the", "who"}},
		{"only stopwords kept stemmed", optDef, "to be or not to be", []string{"to", "be", "or", "not", "to", "be"}},
		{"stopwords off", optStem, "the cats", []string{"the", "cat"}},
		{"stopwords without stemming", optNoStem, "the cats", []string{"cats"}},

		// Long tokens are cut at MaxTokenBytes.
		{"long word", optRaw, long, []string{long[:MaxTokenBytes]}},
		{"long identifier", optRaw, "x_" + long, []string{("x_" + long)[:MaxTokenBytes], "x", long[:MaxTokenBytes]}},
		{"long accented", optRaw, strings.Repeat("é", 100), []string{strings.Repeat("e", MaxTokenBytes)}},
		{"huge accented field", optRaw, strings.Repeat("é", 40000) + " ok", []string{strings.Repeat("e", MaxTokenBytes), "ok"}},
		{"long cyrillic", optRaw, strings.Repeat("ж", 100), []string{strings.Repeat("ж", MaxTokenBytes/2)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := New(tc.opts).Tokens(tc.in)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Tokens(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestDefaultOptions(t *testing.T) {
	o := DefaultOptions()
	if !o.Stem || !o.Stopwords {
		t.Fatalf("DefaultOptions() = %+v, want Stem and Stopwords on", o)
	}
	if got := New(o).Options(); got != o {
		t.Fatalf("Options() = %+v, want %+v", got, o)
	}
}

func TestAppendTokensKeepsPrefix(t *testing.T) {
	tk := New(DefaultOptions())
	dst := []string{"keep"}
	got := tk.AppendTokens(dst, "the cats")
	if want := []string{"keep", "cat"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("AppendTokens = %q, want %q", got, want)
	}
	// The stopword fallback looks only at this text's terms, not at dst.
	got = tk.AppendTokens([]string{"keep"}, "the who")
	if want := []string{"keep", "the", "who"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("AppendTokens = %q, want %q", got, want)
	}
}

func TestStopwordList(t *testing.T) {
	for _, w := range []string{"the", "and", "of", "dont", "youre", "s"} {
		if !isStopword(w) {
			t.Errorf("isStopword(%q) = false", w)
		}
	}
	for _, w := range []string{"id", "well", "ill", "shell", "memory", ""} {
		if isStopword(w) {
			t.Errorf("isStopword(%q) = true", w)
		}
	}
}
