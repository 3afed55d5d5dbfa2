package weaviate

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// rankedExplain writes explainScore as Weaviate's FusionRanked does, with
// the contribution in float32 as Weaviate computes it.
func rankedExplain(legs map[string]int, weights map[string]float64) string {
	var b strings.Builder
	for _, name := range []string{"vector", "keyword"} {
		i, ok := legs[name]
		if !ok {
			continue
		}
		c := float32(weights[name] / float64(i+60))
		set := map[string]string{"vector": "vector,hybridVector", "keyword": "keyword,bm25"}[name]
		fmt.Fprintf(&b, "\nHybrid (Result Set %v) Document 00000000-0000-0000-0000-000000000002 contributed %v to the score", set, c)
	}
	return b.String()
}

// TestExplainRanks: every 0-based rank up to MaxK is recovered exactly from
// its float32 contribution, for weights from tiny to 1.
func TestExplainRanks(t *testing.T) {
	for _, alpha := range []float64{0.5, 0.0909, 0.001, 0.999} {
		w := map[string]float64{"vector": alpha, "keyword": 1 - alpha}
		for i := 0; i < MaxK; i += 1 + i/7 {
			legs := parseExplain(rankedExplain(map[string]int{"vector": i, "keyword": MaxK - 1 - i}, w))
			if got := legs["vector"].rank(FusionRRF, alpha); got != i+1 {
				t.Fatalf("alpha %v: vector rank %d read as %d", alpha, i+1, got)
			}
			if got := legs["keyword"].rank(FusionRRF, 1-alpha); got != MaxK-i {
				t.Fatalf("alpha %v: keyword rank %d read as %d", alpha, MaxK-i, got)
			}
		}
	}
}

// f32 is x as Weaviate prints it (a float32 with %v) and Go reads it back.
func f32(x float64) float64 {
	v, _ := strconv.ParseFloat(fmt.Sprint(float32(x)), 64)
	return v
}

func TestParseExplain(t *testing.T) {
	cases := []struct {
		name, text string
		want       map[string]legExplain
	}{
		{"both legs, ranked", rankedExplain(map[string]int{"vector": 1, "keyword": 0}, map[string]float64{"vector": 0.5, "keyword": 0.5}),
			map[string]legExplain{"vector": {contribution: f32(0.5 / 61)}, "keyword": {contribution: f32(0.5 / 60)}}},
		{"one leg", rankedExplain(map[string]int{"keyword": 3}, map[string]float64{"keyword": 1}),
			map[string]legExplain{"keyword": {contribution: f32(1.0 / 63)}}},
		{"relative score", "\nHybrid (Result Set keyword,bm25) Document 0f-1: original score 2.5, normalized score: 0.25 - \nHybrid (Result Set vector,hybridVector) Document 0f-1: original score 0.875, normalized score: 0.5",
			map[string]legExplain{"keyword": {original: 2.5}, "vector": {original: 0.875}}},
		{"empty", "", map[string]legExplain{}},
		{"unknown text", "BM25F_x_frequency:1", map[string]legExplain{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := parseExplain(c.text)
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Fatalf("parseExplain = %v, want %v", got, c.want)
			}
		})
	}
}

func FuzzParseExplain(f *testing.F) {
	f.Add(rankedExplain(map[string]int{"vector": 4, "keyword": 9}, map[string]float64{"vector": 0.3, "keyword": 0.7}), 0.3)
	f.Add("Result Set vector) Document a contributed 1e-300 to the score", 1.0)
	f.Fuzz(func(t *testing.T, s string, w float64) {
		for _, l := range parseExplain(s) {
			if r := l.rank(FusionRRF, w); r < 0 || r > MaxK+1 {
				t.Fatalf("rank %d out of range", r)
			}
		}
	})
}

// FuzzGQLString: every string becomes one GraphQL string literal that reads
// back as itself (so no input escapes its literal); invalid UTF-8 reads back
// with U+FFFD in its place.
func FuzzGQLString(f *testing.F) {
	for _, s := range []string{`"}){`, "a\nb", "\u2028", `\`, "日本"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		lit := gqlString(s)
		if !strings.HasPrefix(lit, `"`) || !strings.HasSuffix(lit, `"`) || strings.ContainsAny(lit[1:len(lit)-1], "\n\r") {
			t.Fatalf("literal %s", lit)
		}
		var back string
		if err := json.Unmarshal([]byte(lit), &back); err != nil {
			t.Fatal(err)
		}
		if utf8.ValidString(s) && back != s || !utf8.ValidString(back) {
			t.Fatalf("%q read back as %q", s, back)
		}
	})
}
