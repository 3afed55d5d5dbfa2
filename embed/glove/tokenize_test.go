package glove

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// runsOf renders each run as "word" or "word=part|part".
func runsOf(text string) []string {
	var out []string
	scanRuns(text, nil, nil, func(r run) {
		s := string(r.word)
		if len(r.splits) > 0 {
			var parts []string
			start := 0
			for _, sp := range r.splits {
				parts = append(parts, s[start:sp])
				start = sp
			}
			s += "=" + strings.Join(append(parts, s[start:]), "|")
		}
		out = append(out, s)
	})
	return out
}

func TestScanRuns(t *testing.T) {
	tests := []struct {
		name, text string
		want       []string
	}{
		{"plain", "The cat sat.", []string{"the", "cat", "sat"}},
		{"camel", "getUserName", []string{"getusername=get|user|name"}},
		{"acronym", "HTTPServer", []string{"httpserver=http|server"}},
		{"acronym end", "parseJSON", []string{"parsejson=parse|json"}},
		{"digits", "user2Name v8", []string{"user2name=user2|name", "v8"}},
		{"snake kebab", "snake_case kebab-case", []string{"snake", "case", "kebab", "case"}},
		{"all caps", "NASA", []string{"nasa"}},
		{"diacritics", "Crème Brûlée naïve", []string{"creme", "brulee", "naive"}},
		{"percent", "grew 8%", []string{"grew", "8"}},
		{"apostrophe", "user's", []string{"user", "s"}},
		{"non-latin", "Привет мир", []string{"привет", "мир"}},
		{"empty", "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := runsOf(tc.text)
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("runs(%q) = %q, want %q", tc.text, got, tc.want)
			}
		})
	}
}

func FuzzScanRuns(f *testing.F) {
	for _, s := range []string{"getUserName", "HTTPServer", "Crème brûlée", "a_b-c", "\xff\xfe", "ǅungla İstanbul"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		scanRuns(text, nil, nil, func(r run) {
			if len(r.word) == 0 {
				t.Fatal("empty run")
			}
			prev := 0
			for _, s := range r.splits {
				if s <= prev || s >= len(r.word) || !utf8.RuneStart(r.word[s]) {
					t.Fatalf("bad split %d in %q (%v)", s, r.word, r.splits)
				}
				prev = s
			}
			for _, c := range string(r.word) {
				if !unicode.IsLetter(c) && !unicode.IsDigit(c) {
					t.Fatalf("run %q holds %q", r.word, c)
				}
			}
		})
	})
}
