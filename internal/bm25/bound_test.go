package bm25

import (
	"math"
	"testing"
)

func TestQueryBound(t *testing.T) {
	ix := New(DefaultParams(1))
	ix.Add(0, [][]string{{"alpha", "beta"}})
	ix.Add(1, [][]string{{"beta", "gamma"}})
	ix.Add(2, [][]string{{"gamma"}})
	p := ix.Params()
	absent := p.idf(3, 0) * (p.K1 + 1)
	cases := []struct {
		name  string
		query []string
		want  float64
	}{
		{"all present", []string{"alpha", "beta"}, ix.UpperBound([]string{"alpha", "beta"})},
		{"one absent", []string{"alpha", "zeta"}, ix.UpperBound([]string{"alpha"}) + absent},
		{"all absent", []string{"zeta", "eta"}, 2 * absent},
		{"repeated absent", []string{"zeta", "zeta"}, 2 * absent},
		{"empty", nil, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := ix.QueryBound(c.query); math.Abs(got-c.want) > 1e-12 {
				t.Errorf("QueryBound(%v) = %v, want %v", c.query, got, c.want)
			}
			if ub := ix.UpperBound(c.query); ix.QueryBound(c.query) < ub {
				t.Errorf("QueryBound below UpperBound %v", ub)
			}
		})
	}
	// The best document never scores above the bound.
	for _, h := range ix.Search([]string{"alpha", "beta", "zeta"}, nil, 3) {
		if h.Score > ix.QueryBound([]string{"alpha", "beta", "zeta"}) {
			t.Errorf("doc %d scores %v above the bound", h.Doc, h.Score)
		}
	}
}
