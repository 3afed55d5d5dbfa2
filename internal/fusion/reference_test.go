package fusion

import (
	"fmt"
	"math"
	"math/rand"
	"slices"
	"testing"
)

// refFuse is the brute-force twin of RRF, RSF and DBSF: linear scans instead
// of maps, textbook formulas instead of the overflow-safe ones, and an
// insertion sort.
func refFuse(legs []Leg, method string, k float64) []Fused {
	var order []string
	for _, l := range legs {
		for _, h := range l.Hits {
			if !slices.Contains(order, h.ID) {
				order = append(order, h.ID)
			}
		}
	}
	first := func(l Leg, id string) (int, float64) {
		for i, h := range l.Hits {
			if h.ID == id {
				return i + 1, h.Score
			}
		}
		return 0, 0
	}
	norm := make([]func(float64) float64, len(legs))
	for li, l := range legs {
		var fin []float64
		for _, id := range order {
			if r, s := first(l, id); r > 0 && !math.IsNaN(s) && !math.IsInf(s, 0) {
				fin = append(fin, s)
			}
		}
		lo, hi, mu, sd := math.Inf(1), math.Inf(-1), 0.0, 0.0
		for _, s := range fin {
			lo, hi, mu = math.Min(lo, s), math.Max(hi, s), mu+s/float64(len(fin))
		}
		for _, s := range fin {
			sd += (s - mu) * (s - mu) / float64(len(fin))
		}
		sd = math.Sqrt(sd)
		norm[li] = func(s float64) float64 {
			switch {
			case math.IsNaN(s) || math.IsInf(s, -1):
				return 0
			case math.IsInf(s, 1):
				return 1
			}
			if method == "rsf" {
				if hi == lo {
					return 1
				}
				return (s - lo) / (hi - lo)
			}
			if hi == lo {
				return 0.5
			}
			return math.Max(0, math.Min(1, (s-(mu-3*sd))/(6*sd)))
		}
	}
	out := make([]Fused, 0, len(order))
	for _, id := range order {
		f := Fused{ID: id, Legs: make([]LegRank, len(legs))}
		for li, l := range legs {
			r, s := first(l, id)
			f.Legs[li] = LegRank{Rank: r, Score: s}
			w := l.Weight
			if r == 0 || !(w > 0) || math.IsInf(w, 1) {
				continue
			}
			if method == "rrf" {
				f.Score += w * (1 / (k + float64(r)))
			} else {
				f.Score += w * norm[li](s)
			}
		}
		out = append(out, f)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && (out[j].Score > out[j-1].Score ||
			out[j].Score == out[j-1].Score && out[j].ID < out[j-1].ID); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// fuseBy runs the fusion the reference names.
func fuseBy(method string, legs []Leg) []Fused {
	switch method {
	case "rrf":
		return RRF(legs, DefaultK)
	case "rsf":
		return RSF(legs)
	}
	return DBSF(legs)
}

// checkAgainstRef checks the invariants every fusion promises and compares
// scores and leg ranks with the brute-force twin.
func checkAgainstRef(t testing.TB, method string, legs []Leg) {
	t.Helper()
	got := fuseBy(method, legs)
	ref := refFuse(legs, method, DefaultK)
	if len(got) != len(ref) {
		t.Fatalf("%s: %d results, reference %d", method, len(got), len(ref))
	}
	maxScore := 0.0
	for _, l := range legs {
		if w := l.Weight; w > 0 && !math.IsInf(w, 1) {
			maxScore += w
		}
	}
	want := make(map[string]Fused, len(ref))
	for _, f := range ref {
		want[f.ID] = f
	}
	for i, g := range got {
		w, ok := want[g.ID]
		if !ok {
			t.Fatalf("%s: unexpected id %q", method, g.ID)
		}
		delete(want, g.ID)
		if math.IsNaN(g.Score) || g.Score < 0 || g.Score > maxScore*(1+1e-12) {
			t.Fatalf("%s: %s score %g outside [0, %g]", method, g.ID, g.Score, maxScore)
		}
		if math.Abs(g.Score-w.Score) > tol*math.Max(1, maxScore) {
			t.Fatalf("%s: %s score %.17g, reference %.17g", method, g.ID, g.Score, w.Score)
		}
		if !slices.EqualFunc(g.Legs, w.Legs, func(a, b LegRank) bool {
			return a.Rank == b.Rank && (a.Score == b.Score || math.IsNaN(a.Score) && math.IsNaN(b.Score))
		}) {
			t.Fatalf("%s: %s legs %v, reference %v", method, g.ID, g.Legs, w.Legs)
		}
		if i > 0 {
			p := got[i-1]
			if p.Score < g.Score || p.Score == g.Score && p.ID >= g.ID {
				t.Fatalf("%s: %s (%g) before %s (%g) breaks the order", method, p.ID, p.Score, g.ID, g.Score)
			}
		}
	}
}

// randomLegs draws legs with few distinct IDs and scores, so that ties,
// duplicates and IDs shared between legs are common.
func randomLegs(r *rand.Rand) []Leg {
	legs := make([]Leg, r.Intn(4))
	weights := []float64{0, 1, 0.1, 2.5, -1}
	for li := range legs {
		hs := make([]Hit, r.Intn(12))
		for i := range hs {
			hs[i] = Hit{ID: fmt.Sprintf("d%d", r.Intn(15)), Score: float64(r.Intn(7)) * 0.25}
		}
		legs[li] = Leg{Name: fmt.Sprint("leg", li), Weight: weights[r.Intn(len(weights))], Hits: hs}
	}
	return legs
}

// TestFusionsMatchReference compares every fusion with its brute-force twin
// on many small random inputs.
func TestFusionsMatchReference(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	for i := range 3000 {
		legs := randomLegs(r)
		for _, m := range []string{"rrf", "rsf", "dbsf"} {
			t.Run(fmt.Sprint(m, i), func(t *testing.T) { checkAgainstRef(t, m, legs) })
			if t.Failed() {
				return
			}
		}
	}
}

// FuzzFusions decodes legs from bytes (non-finite scores included) and
// checks every fusion against the reference.
func FuzzFusions(f *testing.F) {
	f.Add([]byte{2, 3, 0, 10, 1, 20, 2, 30, 1, 2, 1, 5, 3, 6})
	f.Add([]byte{1, 4, 0, 255, 1, 254, 2, 253, 0, 0})
	f.Add([]byte{3, 0, 1, 1, 9, 9, 2, 2, 7, 7, 7, 7, 8})
	specials := []float64{math.NaN(), math.Inf(1), math.Inf(-1)}
	weights := []float64{1, 0, 0.5, 3, -1, math.NaN(), math.Inf(1), 0.01}
	f.Fuzz(func(t *testing.T, data []byte) {
		next := func() int {
			if len(data) == 0 {
				return 0
			}
			b := data[0]
			data = data[1:]
			return int(b)
		}
		legs := make([]Leg, next()%5)
		for li := range legs {
			legs[li].Weight = weights[next()%len(weights)]
			hs := make([]Hit, next()%20)
			for i := range hs {
				id, s := next(), next()
				score := float64(s) - 100
				if s >= 253 {
					score = specials[s-253]
				}
				hs[i] = Hit{ID: fmt.Sprint("m", id%24), Score: score}
			}
			legs[li].Hits = hs
		}
		for _, m := range []string{"rrf", "rsf", "dbsf"} {
			checkAgainstRef(t, m, legs)
		}
	})
}
