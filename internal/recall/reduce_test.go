package recall

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/engram-memory/engram/backend"
)

func TestKeepTerms(t *testing.T) {
	tc := func(term string, count, df int) backend.TermCount {
		return backend.TermCount{Term: term, Count: count, DF: df}
	}
	cases := []struct {
		name   string
		counts []backend.TermCount
		n      int
		limit  int
		want   []string
	}{
		{"under the limit keeps all, in order", []backend.TermCount{tc("b", 1, 3), tc("a", 2, 5)}, 100, 5, []string{"b", "a"}},
		{"rare terms win", []backend.TermCount{tc("common", 1, 90), tc("rare", 1, 1), tc("mid", 1, 20)}, 100, 2, []string{"rare", "mid"}},
		{"frequent in the query wins at equal df", []backend.TermCount{tc("once", 1, 10), tc("often", 50, 10)}, 100, 1, []string{"often"}},
		{"ties go to the first", []backend.TermCount{tc("x", 1, 10), tc("y", 1, 10), tc("z", 1, 10)}, 100, 2, []string{"x", "y"}},
		// 3 of 4 occurrences are of terms the store lacks: 3 of 4 kept slots.
		{"absent terms keep their share", []backend.TermCount{tc("p1", 1, 2), tc("a1", 1, 0), tc("a2", 1, 0), tc("a3", 1, 0)}, 100, 4, []string{"p1", "a1", "a2", "a3"}},
		{"absent share rounds", []backend.TermCount{tc("p1", 3, 2), tc("p2", 3, 3), tc("a1", 2, 0), tc("a2", 1, 0)}, 100, 2, []string{"p1", "a1"}},
		{"no present term: absent ones fill", []backend.TermCount{tc("a1", 1, 0), tc("a2", 5, 0)}, 100, 1, []string{"a2"}},
		{"unknown df: by count", []backend.TermCount{tc("x", 1, -1), tc("y", 3, -1), tc("z", 2, -1)}, 0, 2, []string{"y", "z"}},
		{"empty", nil, 100, 4, []string{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := keepTerms(c.counts, c.n, c.limit, nil)
			if !slices.Equal(got, c.want) {
				t.Errorf("keepTerms = %q, want %q", got, c.want)
			}
		})
	}
	// The window's terms first, then the rest of the limit as above.
	counts := []backend.TermCount{tc("pad", 40, 2), tc("rare", 3, 1), tc("question", 1, 50), tc("ask", 1, 60), tc("gone", 2, 0)}
	firsts := []struct {
		name  string
		first map[string]bool
		limit int
		want  []string
	}{
		{"window terms kept, the rest by score", map[string]bool{"question": true, "ask": true}, 3, []string{"pad", "question", "ask"}},
		{"window terms fill the limit in order", map[string]bool{"question": true, "ask": true, "rare": true}, 2, []string{"rare", "question"}},
		{"window terms the query lacks are ignored", map[string]bool{"elsewhere": true}, 2, []string{"pad", "rare"}},
		{"absent terms keep their share of the rest", map[string]bool{"ask": true}, 5, []string{"pad", "rare", "question", "ask", "gone"}},
	}
	for _, c := range firsts {
		t.Run(c.name, func(t *testing.T) {
			if got := keepTerms(counts, 100, c.limit, c.first); !slices.Equal(got, c.want) {
				t.Errorf("keepTerms = %q, want %q", got, c.want)
			}
		})
	}
}

func TestEnds(t *testing.T) {
	cases := []struct {
		name, text string
		max        int
		want       string
	}{
		{"short is whole", "a few words", 100, "a few words"},
		{"head and tail, whole words", "alpha beta gamma delta epsilon zeta", 20, "alpha beta\nzeta"},
		{"at most max bytes", "alpha beta gamma delta epsilon zeta", 21, "alpha beta\nzeta"},
		{"the tail takes what the head leaves", "alpha beta gamma delta epsilon zeta", 24, "alpha beta\nepsilon zeta"},
		{"runes are not cut", "éééééééééé", 8, "éé\né"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := ends(c.text, c.max)
			if got != c.want || !utf8.ValidString(got) || len(got) > c.max {
				t.Errorf("ends(%q, %d) = %q, want %q", c.text, c.max, got, c.want)
			}
		})
	}
}

func TestHeadAndSample(t *testing.T) {
	cases := []struct {
		name, text string
		max        int
		want       string
	}{
		{"short is whole", "a few words", 100, "a few words"},
		{"cut before the last space", "alpha beta gamma delta", 13, "alpha beta"},
		{"a long word is cut at a rune boundary", "ééééééé", 5, "éé"},
		{"no late space: cut inside", "a bcdefghijklmnop", 8, "a bcdefg"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := head(c.text, c.max); got != c.want {
				t.Errorf("head(%q, %d) = %q, want %q", c.text, c.max, got, c.want)
			}
		})
	}
	long := strings.Repeat("start words here ", 10) + strings.Repeat("middle ", 10_000) + strings.Repeat("ending ", 1000) + "last"
	s := sample(long, 4096, 16)
	if len(s) > 4096+16 || !utf8.ValidString(s) {
		t.Fatalf("sample is %d bytes (valid UTF-8 %v), want at most %d", len(s), utf8.ValidString(s), 4096+16)
	}
	for _, w := range []string{"start", "middle", "ending"} {
		if !strings.Contains(s, w) {
			t.Errorf("sample lacks %q: not spread over the text", w)
		}
	}
	for _, f := range strings.Fields(s) { // whole words only
		if !slices.Contains([]string{"start", "words", "here", "middle", "ending", "last"}, f) {
			t.Errorf("sample holds a cut word %q", f)
		}
	}
	if sample("short", 4096, 16) != "short" {
		t.Error("a short text is not its own sample")
	}
	if s2 := sample(long, 4096, 16); s2 != s {
		t.Error("sample is not deterministic")
	}
}
