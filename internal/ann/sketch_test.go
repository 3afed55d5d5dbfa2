package ann

import (
	"slices"
	"testing"

	"github.com/engram-memory/engram/internal/docset"
	"github.com/engram-memory/engram/internal/synth"
	"github.com/engram-memory/engram/internal/vector"
)

// Without a graph, a store over the exact threshold is searched through its
// sign sketches, and on the bench's synthetic memories and queries that
// keeps nearly every true top 10, unfiltered and with a filter over the
// exact threshold; a filter under it is scanned exactly. (TestHarness with
// ENGRAM_ANN_SKETCH measures the same at bench sizes.)
func TestSketchRecall(t *testing.T) {
	const n, dim, queries = 30_000, 512, 40
	c := synth.New(synth.Config{Seed: synth.DefaultSeed, Dim: dim})
	vi := vector.New(dim)
	vi.Reserve(n)
	for d := range n {
		if err := vi.Set(uint32(d), c.Vector(c.Memory(d).EmbedText())); err != nil {
			t.Fatal(err)
		}
	}
	most, few := &docset.Set{}, &docset.Set{}
	for d := range uint32(n) {
		if d%6 != 0 {
			most.Add(d) // 25k: over DefaultExactBelow
		}
		if d%3 == 0 {
			few.Add(d) // 10k: under it
		}
	}
	for _, tc := range []struct {
		name  string
		allow *docset.Set
		path  Path
		min   float64
	}{
		{"unfiltered", nil, PathSketch, 0.97},
		{"five sixths", most, PathSketch, 0.97},
		{"a third", few, PathExact, 1},
	} {
		hit, total := 0, 0
		for i := range queries {
			text, _ := c.Query(i+1, n)
			q := c.Vector(text)
			if q == nil {
				continue
			}
			got, path := SearchVectors(nil, vi, q, tc.allow, 10, Policy{})
			if path != tc.path {
				t.Fatalf("%s: path %d, want %d", tc.name, path, tc.path)
			}
			want := docsOf(vi.Search(q, tc.allow, 10))
			total += len(want)
			for _, w := range want {
				if slices.Contains(docsOf(got), w) {
					hit++
				}
			}
		}
		recall := float64(hit) / float64(total)
		t.Logf("%s: recall@10 %.4f over %d queries", tc.name, recall, queries)
		if recall < tc.min {
			t.Errorf("%s: recall@10 %.4f, want at least %.2f", tc.name, recall, tc.min)
		}
	}
}
