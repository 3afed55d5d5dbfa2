package format

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/engram-memory/engram/internal/golden"
	"github.com/engram-memory/engram/memory"
)

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", name), got)
}

var at = time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)

func sampleResponse() *memory.Response {
	return &memory.Response{
		Query: "why is the first request slow", Strategy: "hybrid",
		Fusion:   &memory.FusionInfo{Method: "rrf", K: 60, Weights: map[string]float64{"bm25": 1, "vector": 0.1}, WeightSource: "model", Candidates: 50},
		Degraded: []memory.Degraded{{Stage: "rerank", Reason: "no reranker configured"}},
		Results: []memory.Result{
			{ID: "01A", Name: "Cold start", Text: "After a deploy the first request is slow:\nthe pool is empty.", Type: "fact", CreatedAt: at, OccurredAt: at, Score: 0.0198,
				Explain: &memory.Explain{BM25: &memory.LegBM25{Rank: 1, Score: 9.56}, Vector: &memory.LegVector{Rank: 2, Cosine: 0.55}, Fused: 0.0180, RRF: 0.0180,
					Boosts: memory.Boosts{Favorite: 1.15, Demand: 1.0165}, Relevance: 0.61}},
			{ID: "01B", Text: "Retry outgoing HTTP calls three times with jitter.", Type: "instruction", CreatedAt: at, OccurredAt: at, Score: 0.0016,
				Explain: &memory.Explain{Vector: &memory.LegVector{Rank: 1, Cosine: 0.34}, Fused: 0.0016, RRF: 0.0016, Boosts: memory.Boosts{Favorite: 1, Demand: 1}, Relevance: 0.1}},
		},
	}
}

func TestExplainedGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := Explained(&buf, sampleResponse()); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "explained.txt", buf.Bytes())
}

// TestExplainedGated: a BM25 weight the keyword gate scaled down says so,
// with the best match's keyword relevance and the gate.
func TestExplainedGated(t *testing.T) {
	resp := sampleResponse()
	resp.Fusion = &memory.FusionInfo{Method: "rsf", Weights: map[string]float64{"bm25": 0.256662, "vector": 0.5}, WeightSource: "model",
		Candidates: 50, Gated: &memory.Gated{Gate: 0.2, Best: 0.051332}}
	var buf bytes.Buffer
	if err := Explained(&buf, resp); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "explained_gated.txt", buf.Bytes())
}

// TestExplainedTime: the date phrase read, the boost it gave, and a result a
// newer memory supersedes.
func TestExplainedTime(t *testing.T) {
	resp := sampleResponse()
	resp.Time = []memory.TimeWindow{{Phrase: "in May 2023", Since: time.Date(2023, 5, 1, 0, 0, 0, 0, time.UTC),
		Until: time.Date(2023, 6, 1, 0, 0, 0, 0, time.UTC), Boost: 1.5}}
	resp.Results[0].Explain.Boosts.Time = 1.5
	resp.Results[1].SupersededBy = "01C"
	var buf bytes.Buffer
	if err := Explained(&buf, resp); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "explained_time.txt", buf.Bytes())
}

func TestJSONGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := JSON(&buf, sampleResponse(), false); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "response.json", buf.Bytes())
}

func TestContextBudget(t *testing.T) {
	results := sampleResponse().Results
	cases := []struct {
		name   string
		budget int
		golden string
	}{
		{"unlimited", 0, "context_unlimited.txt"},
		{"both fit", 200, "context_200.txt"},
		{"second left out, counted", 160, "context_160.txt"},
		{"second left out", 120, "context_120.txt"},
		{"first left out", 60, "context_60.txt"},
		{"nothing fits", 10, "context_10.txt"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Context(&buf, results, c.budget); err != nil {
				t.Fatal(err)
			}
			if n := utf8.RuneCount(buf.Bytes()); c.budget > 0 && n > c.budget {
				t.Fatalf("%d characters over a budget of %d", n, c.budget)
			}
			checkGolden(t, c.golden, buf.Bytes())
		})
	}
}

// TestFit: the header always shows, a line is cut only when minCut of it
// fits, and the first count note that fits is the one written.
func TestFit(t *testing.T) {
	long := func(k int) string { return fmt.Sprintf("(+%d more, and a long explanation)", k) }
	short := func(k int) string { return fmt.Sprintf("(+%d)", k) }
	lines := []string{"aaaaaaaaaa", "bbbbbbbbbbbbbbbbbbbb", "cccccccccc"}
	for _, tc := range []struct {
		name   string
		header string
		budget int
		more   []func(int) string
		want   string
	}{
		{"unlimited", "h", 0, nil, "h\naaaaaaaaaa\nbbbbbbbbbbbbbbbbbbbb\ncccccccccc\n"},
		{"all fit", "", 44, nil, "aaaaaaaaaa\nbbbbbbbbbbbbbbbbbbbb\ncccccccccc\n"},
		{"header over budget", "header", 3, []func(int) string{short}, "header\n"},
		{"cut with room for the count", "", 30, []func(int) string{short}, "aaaaaaaaaa\nbbbbbbbbbbbb…\n(+1)\n"},
		{"no cut below minCut, short note", "h", 20, []func(int) string{long, short}, "h\naaaaaaaaaa\n(+2)\n"},
		{"no note fits", "h", 14, []func(int) string{long, short}, "h\naaaaaaaaaa\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Fit(tc.header, lines, tc.budget, 5, tc.more...)
			if got != tc.want {
				t.Fatalf("Fit = %q, want %q", got, tc.want)
			}
			if n := utf8.RuneCountInString(got); tc.budget > 0 && tc.header != "header" && n > tc.budget {
				t.Fatalf("%d runes over a budget of %d", n, tc.budget)
			}
		})
	}
}

// episodeResults are turns of one conversation found by a search, with their
// neighbours: the answer turn (seq 4) and the turn after the next (seq 6)
// meet, so they share a line; a turn of another session stands alone.
func episodeResults() []memory.Result {
	day := time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC)
	turn := func(id string, seq int64, speaker, text string) memory.Neighbour {
		return memory.Neighbour{ID: id, Seq: seq, Speaker: speaker, Text: text, OccurredAt: day}
	}
	res := func(n memory.Neighbour, episode string, neighbours ...memory.Neighbour) memory.Result {
		return memory.Result{ID: n.ID, Text: n.Text, Type: "turn", Episode: episode, Seq: n.Seq, Speaker: n.Speaker,
			OccurredAt: day, CreatedAt: at, Neighbours: neighbours}
	}
	q := turn("D3:3", 3, "Melanie", "What kind are they?")
	a := turn("D3:4", 4, "Caroline", "They're called Peruvian Lilies.")
	n5 := turn("D3:5", 5, "Melanie", "Lovely, they last for weeks.")
	n6 := turn("D3:6", 6, "Caroline", "I keep them by the window.")
	n7 := turn("D3:7", 7, "Melanie", "Mine never get enough light.")
	other := turn("D9:1", 1, "Caroline", "The lilies are flowering again.")
	return []memory.Result{
		res(a, "session_3", q, n5),
		res(other, "session_9"),
		res(n6, "session_3", n5, n7),
		{ID: "01N", Text: "Caroline likes flowers.", Type: "fact", CreatedAt: at, OccurredAt: at},
	}
}

func TestContextEpisodes(t *testing.T) {
	for _, c := range []struct {
		name, golden  string
		budget, shown int
	}{
		{"whole", "context_episode.txt", 0, 4},
		{"cut", "context_episode_120.txt", 120, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			shown, text := FitContext(episodeResults(), ContextOptions{Budget: c.budget})
			if len(shown) != c.shown {
				t.Fatalf("%d results shown, want %d:\n%s", len(shown), c.shown, text)
			}
			if n := utf8.RuneCountInString(text); c.budget > 0 && n > c.budget {
				t.Fatalf("%d characters over a budget of %d", n, c.budget)
			}
			checkGolden(t, c.golden, []byte(text))
		})
	}
}

// TestExplainedLongQueryGolden: a long (reduced) query is repeated as its
// first 200 characters, folded to one line, with its length.
func TestExplainedLongQueryGolden(t *testing.T) {
	resp := sampleResponse()
	var q bytes.Buffer
	for i := range 400 {
		fmt.Fprintf(&q, "line %d of a pasted log:\nthe first request is slow\n", i)
	}
	resp.Query = q.String()
	resp.Reduced = &memory.Reduced{Bytes: q.Len(), Sampled: q.Len(), Terms: 3200, Distinct: 410, Kept: []string{"slow", "request"}, Window: 512}
	resp.Degraded = []memory.Degraded{{Stage: "query", Reason: "long query (…): the BM25 leg searched the 2 most discriminative of its 410 distinct terms"}}
	var buf bytes.Buffer
	if err := Explained(&buf, resp); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "explained_long_query.txt", buf.Bytes())
	for _, c := range []struct {
		name  string
		query string
		red   *memory.Reduced
		want  string
	}{
		{"short, not reduced", "why is it slow", nil, "why is it slow"},
		{"short, reduced", "why is it slow", &memory.Reduced{}, "why is it slow"},
		{"long, not reduced", string(bytes.Repeat([]byte("a "), 300)), nil, string(bytes.Repeat([]byte("a "), 300))},
	} {
		if got := ShownQuery(&memory.Response{Query: c.query, Reduced: c.red}); got != c.want {
			t.Errorf("%s: ShownQuery = %q, want %q", c.name, got, c.want)
		}
	}
}
