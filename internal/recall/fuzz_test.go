package recall

import (
	"errors"
	"math"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/engram-memory/engram/memory"
)

// FuzzSearch: any query text, limit, mode, fusion and keyword gate either is
// refused as an invalid query or answers with at most limit results, best
// first, each explained with a relevance in [0,1], and a gated BM25 weight
// below its own with its best match below the gate; never a panic.
func FuzzSearch(f *testing.F) {
	f.Add("when do deploys go out", 3, uint8(0), uint8(0), -1.0)
	f.Add("deploys on 9 February 2023 and last week", 0, uint8(1), uint8(2), 0.5)
	f.Add(strings.Repeat("staging database ", 300), 20, uint8(2), uint8(3), 1.0)
	f.Add("", -1, uint8(3), uint8(4), 0.0)
	f.Add("去年的部署 deploys", 1, uint8(0), uint8(1), 2.0)
	s := searcher(f)
	modes := []string{"", memory.ModeHybrid, memory.ModeBM25, memory.ModeVector, "other"}
	fusions := []string{"", FusionRRF, FusionRSF, FusionDBSF, FusionNative, "other"}
	f.Fuzz(func(t *testing.T, text string, limit int, mode, fusion uint8, gate float64) {
		if len(text) > 3*LongQueryBytes {
			return // longer ones take the same path (reduce.go) with more work
		}
		q := memory.Query{Query: text, Limit: limit, Mode: modes[int(mode)%len(modes)], Fusion: fusions[int(fusion)%len(fusions)]}
		if gate >= 0 || math.IsNaN(gate) { // a negative gate: the model's (none here)
			q.KeywordGate = &gate
		}
		resp, err := s.Search(ctx, q)
		if err != nil {
			if !errors.Is(err, ErrInvalidQuery) {
				t.Fatalf("Search(%+v) = %v: an error other than an invalid query", q, err)
			}
			return
		}
		want := limit
		if want == 0 {
			want = DefaultLimit
		}
		if len(resp.Results) > want {
			t.Fatalf("%d results, limit %d", len(resp.Results), want)
		}
		if f := resp.Fusion; f != nil && f.Gated != nil {
			if g := f.Gated; !(g.Best >= 0 && g.Best < g.Gate && g.Gate <= 1) || !(f.Weights["bm25"] >= 0 && f.Weights["bm25"] < 1) {
				t.Fatalf("gated %+v with weights %v", g, f.Weights)
			}
		}
		for i, r := range resp.Results {
			if r.Explain == nil || !(r.Explain.Relevance >= 0 && r.Explain.Relevance <= 1) {
				t.Fatalf("%s: explain %+v", r.ID, r.Explain)
			}
			if i > 0 && r.Score > resp.Results[i-1].Score {
				t.Fatalf("results not best first: %v", resultIDs(resp))
			}
		}
	})
}

// FuzzHead: a long query's head and sample are whole runes of the text,
// within their budgets.
func FuzzHead(f *testing.F) {
	f.Add("alpha beta gamma delta", 13)
	f.Add("ééééééé", 5)
	f.Add(strings.Repeat("word ", 2000), 512)
	f.Fuzz(func(t *testing.T, text string, n int) {
		if n < 1 || n > 1<<16 || !utf8.ValidString(text) {
			return
		}
		h := head(text, n)
		if len(h) > n || !utf8.ValidString(h) || !strings.Contains(text, h) {
			t.Fatalf("head(%q, %d) = %q", text, n, h)
		}
		chunks := 1 + n%16
		s := sample(text, n, chunks)
		if len(s) > n+chunks || !utf8.ValidString(s) {
			t.Fatalf("sample(%q, %d, %d) = %q (%d bytes)", text, n, chunks, s, len(s))
		}
	})
}
