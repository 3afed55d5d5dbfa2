package fusion

import (
	"fmt"
	"math"
	"math/rand"
	"testing"
)

// TestMMRGolden checks MMR against hand-worked picks.
func TestMMRGolden(t *testing.T) {
	e0 := []float32{1, 0, 0, 0}
	e1 := []float32{0, 1, 0, 0}
	half := []float32{0.5, 0.5, 0.5, 0.5} // unit length; cosine 0.5 with e0 and e1
	tests := []struct {
		name   string
		cands  []Candidate
		lambda float64
		k      int
		want   []Pick
	}{
		{
			// λ 0.5. Relevance 3, 2, 1, 2 normalises to A 1, B 0.5, C 0, D 0.5.
			// 1: A .5·1 = .5, B .25, C 0, D .25 → A (redundancy 0).
			// 2: cos to A: B .5, C 0, D nil → B .25-.5·.5 = 0, C 0, D .25 → D.
			// 3: D has no vector, so nothing changes: B 0, C 0 → tie, earlier PreRank: B.
			name: "nil vector and tie",
			cands: []Candidate{
				{ID: "A", Relevance: 3, Vector: e0},
				{ID: "B", Relevance: 2, Vector: half},
				{ID: "C", Relevance: 1, Vector: e1},
				{ID: "D", Relevance: 2},
			},
			lambda: 0.5,
			k:      3,
			want: []Pick{
				{ID: "A", PreRank: 1, Relevance: 1, Redundancy: 0, Score: 0.5},
				{ID: "D", PreRank: 4, Relevance: 0.5, Redundancy: 0, Score: 0.25},
				{ID: "B", PreRank: 2, Relevance: 0.5, Redundancy: 0.5, Score: 0},
			},
		},
		{
			// λ 0.5, k beyond the candidates. Relevance 1, 0.5, 0 (min-max of 10, 6, 2).
			// 1: A .5 → A.  cos to A: B .5, C 0.
			// 2: B .25-.25 = 0, C 0-0 = 0 → tie, B.  cos to B: C .5 → C redundancy max(0, .5) = .5.
			// 3: C 0 - .5·.5 = -.25.
			name: "redundancy grows",
			cands: []Candidate{
				{ID: "A", Relevance: 10, Vector: e0},
				{ID: "B", Relevance: 6, Vector: half},
				{ID: "C", Relevance: 2, Vector: e1},
			},
			lambda: 0.5,
			k:      10,
			want: []Pick{
				{ID: "A", PreRank: 1, Relevance: 1, Redundancy: 0, Score: 0.5},
				{ID: "B", PreRank: 2, Relevance: 0.5, Redundancy: 0.5, Score: 0},
				{ID: "C", PreRank: 3, Relevance: 0, Redundancy: 0.5, Score: -0.25},
			},
		},
		{
			// λ -3 clamps to 0: pure diversity. All scores -redundancy.
			// 1: all 0 → A (PreRank 1).  2: B -.5, C 0 (cos 0), D -1 (same as A) → C.
			// 3: B -.5 (max .5, .5), D -1 → B.
			name: "lambda clamped to zero",
			cands: []Candidate{
				{ID: "A", Relevance: 1, Vector: e0},
				{ID: "B", Relevance: 9, Vector: half},
				{ID: "C", Relevance: 5, Vector: e1},
				{ID: "D", Relevance: 7, Vector: e0},
			},
			lambda: -3,
			k:      3,
			want: []Pick{
				{ID: "A", PreRank: 1, Relevance: 0, Redundancy: 0, Score: 0},
				{ID: "C", PreRank: 3, Relevance: 0.5, Redundancy: 0, Score: 0},
				{ID: "B", PreRank: 2, Relevance: 1, Redundancy: 0.5, Score: -0.5},
			},
		},
		{
			// All relevances equal normalise to 1; λ 2 clamps to 1: input order.
			name: "equal relevance, lambda clamped to one",
			cands: []Candidate{
				{ID: "x", Relevance: 4, Vector: e0},
				{ID: "y", Relevance: 4, Vector: e0},
			},
			lambda: 2,
			k:      2,
			want: []Pick{
				{ID: "x", PreRank: 1, Relevance: 1, Redundancy: 0, Score: 1},
				{ID: "y", PreRank: 2, Relevance: 1, Redundancy: 1, Score: 1},
			},
		},
		{name: "k zero", cands: []Candidate{{ID: "x", Relevance: 1}}, lambda: 0.7, k: 0, want: nil},
		{name: "no candidates", cands: nil, lambda: 0.7, k: 5, want: nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkPicks(t, MMR(tc.cands, tc.lambda, tc.k), tc.want)
		})
	}
}

// checkPicks compares picks field by field, floats to tol.
func checkPicks(t testing.TB, got, want []Pick) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d picks %+v, want %d", len(got), got, len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.ID != w.ID || g.PreRank != w.PreRank {
			t.Fatalf("pick %d: %s (pre-rank %d), want %s (pre-rank %d)", i, g.ID, g.PreRank, w.ID, w.PreRank)
		}
		for _, f := range []struct {
			name      string
			got, want float64
		}{
			{"relevance", g.Relevance, w.Relevance},
			{"redundancy", g.Redundancy, w.Redundancy},
			{"score", g.Score, w.Score},
		} {
			if math.Abs(f.got-f.want) > tol {
				t.Errorf("pick %d (%s): %s %.17g, want %.17g", i, g.ID, f.name, f.got, f.want)
			}
		}
	}
}

// TestMMRLambdaOneKeepsRelevanceOrder checks that λ=1 ignores vectors: the
// picks are the candidates by relevance, ties in input order.
func TestMMRLambdaOneKeepsRelevanceOrder(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	cands := randomCandidates(r, 40, 8)
	for i := range cands {
		cands[i].Vector = cands[0].Vector // identical vectors must not matter
		cands[i].Relevance = float64(r.Intn(10))
	}
	got := MMR(cands, 1, len(cands))
	for i := 1; i < len(got); i++ {
		p, g := got[i-1], got[i]
		if p.Relevance < g.Relevance || p.Relevance == g.Relevance && p.PreRank > g.PreRank {
			t.Fatalf("pick %d (%s, rel %g, pre %d) after %s (rel %g, pre %d)",
				i, g.ID, g.Relevance, g.PreRank, p.ID, p.Relevance, p.PreRank)
		}
	}
}

// TestMMRSpreadsNearDuplicates checks the point of MMR: three near-identical
// memories crowd the top by relevance, and λ=0.7 lets distinct ones in.
func TestMMRSpreadsNearDuplicates(t *testing.T) {
	const dim = 16
	axis := func(i int, nudge float32, j int) []float32 {
		v := make([]float32, dim)
		v[j] = nudge
		v[i] = 1
		return unit(v)
	}
	cands := []Candidate{
		{ID: "dup1", Relevance: 1.00, Vector: axis(0, 0, 0)},
		{ID: "dup2", Relevance: 0.99, Vector: axis(0, 0.05, 13)},
		{ID: "dup3", Relevance: 0.98, Vector: axis(0, 0.05, 14)},
		{ID: "other1", Relevance: 0.97, Vector: axis(1, 0, 1)},
		{ID: "other2", Relevance: 0.96, Vector: axis(2, 0, 2)},
		{ID: "other3", Relevance: 0.95, Vector: axis(3, 0, 3)},
	}
	for i := range 6 {
		cands = append(cands, Candidate{ID: fmt.Sprint("tail", i), Relevance: 0.5, Vector: axis(4+i, 0, 4+i)})
	}
	isDup := func(p Pick) bool { return p.PreRank <= 3 }
	count := func(ps []Pick) int {
		n := 0
		for _, p := range ps {
			if isDup(p) {
				n++
			}
		}
		return n
	}
	if top := MMR(cands, 1, 3); count(top) != 3 {
		t.Fatalf("λ=1 top 3 %+v: want the three near-duplicates", top)
	}
	top := MMR(cands, DefaultLambda, 4)
	if n := count(top); n != 1 {
		t.Fatalf("λ=0.7 top 4 %+v has %d near-duplicates, want 1", top, n)
	}
	if top[0].ID != "dup1" {
		t.Fatalf("λ=0.7 first pick %s, want dup1", top[0].ID)
	}
	all := MMR(cands, DefaultLambda, len(cands))
	for _, p := range all {
		if isDup(p) && p.ID != "dup1" && p.Redundancy < 0.99 {
			t.Errorf("%s redundancy %g, want near 1", p.ID, p.Redundancy)
		}
	}
}

// unit returns v scaled to length 1.
func unit(v []float32) []float32 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	n = math.Sqrt(n)
	for i := range v {
		v[i] = float32(float64(v[i]) / n)
	}
	return v
}

// randomCandidates draws n candidates with unit vectors of dimension dim;
// about one in eight has no vector.
func randomCandidates(r *rand.Rand, n, dim int) []Candidate {
	cs := make([]Candidate, n)
	for i := range cs {
		cs[i] = Candidate{ID: fmt.Sprint("c", i), Relevance: float64(r.Intn(5)) + r.Float64()}
		if r.Intn(8) == 0 {
			continue
		}
		v := make([]float32, dim)
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		cs[i].Vector = unit(v)
	}
	return cs
}
