package fusion

import (
	"math"
	"testing"
)

// tol is the tolerance of every golden comparison.
const tol = 1e-12

// want is one expected fused row: ID, score, and the rank in each leg.
type want struct {
	id    string
	score float64
	ranks []int
}

// checkFused compares a fused ranking to the expected rows, in order.
func checkFused(t testing.TB, got []Fused, exp []want) {
	t.Helper()
	if len(got) != len(exp) {
		t.Fatalf("got %d results %v, want %d", len(got), ids(got), len(exp))
	}
	for i, w := range exp {
		g := got[i]
		if g.ID != w.id {
			t.Fatalf("result %d: id %q, want %q (order %v)", i, g.ID, w.id, ids(got))
		}
		if math.Abs(g.Score-w.score) > tol {
			t.Errorf("%s: score %.17g, want %.17g", w.id, g.Score, w.score)
		}
		if w.ranks == nil {
			continue
		}
		if len(g.Legs) != len(w.ranks) {
			t.Fatalf("%s: %d legs, want %d", w.id, len(g.Legs), len(w.ranks))
		}
		for li, r := range w.ranks {
			if g.Legs[li].Rank != r {
				t.Errorf("%s: leg %d rank %d, want %d", w.id, li, g.Legs[li].Rank, r)
			}
		}
	}
}

// ids lists the IDs of a fused ranking, in order.
func ids(fs []Fused) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.ID
	}
	return out
}

// hits builds a leg's hits from alternating IDs and scores.
func hits(pairs ...any) []Hit {
	var hs []Hit
	for i := 0; i+1 < len(pairs); i += 2 {
		hs = append(hs, Hit{ID: pairs[i].(string), Score: toF(pairs[i+1])})
	}
	return hs
}

func toF(v any) float64 {
	switch x := v.(type) {
	case int:
		return float64(x)
	case float64:
		return x
	}
	panic("hits: score must be int or float64")
}

// fusers names the three fusions so properties shared by all can be tested once.
var fusers = []struct {
	name string
	fuse func([]Leg) []Fused
}{
	{"rrf", func(l []Leg) []Fused { return RRF(l, 0) }},
	{"rsf", RSF},
	{"dbsf", DBSF},
}
