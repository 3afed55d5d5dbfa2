package fusion

import (
	"encoding/binary"
	"math"
	"math/rand"
	"testing"
)

// refMMR is MMR's brute-force twin: each step recomputes every candidate's
// redundancy from scratch against all picks, with a plain dot product.
func refMMR(cands []Candidate, lambda float64, k int) []Pick {
	if math.IsNaN(lambda) {
		lambda = DefaultLambda
	}
	lambda = math.Max(0, math.Min(1, lambda))
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, c := range cands {
		if !math.IsNaN(c.Relevance) && !math.IsInf(c.Relevance, 0) {
			lo, hi = math.Min(lo, c.Relevance), math.Max(hi, c.Relevance)
		}
	}
	rel := func(s float64) float64 {
		switch {
		case math.IsNaN(s) || math.IsInf(s, -1):
			return 0
		case math.IsInf(s, 1) || hi == lo:
			return 1
		}
		if math.IsInf(hi-lo, 1) { // the same overflow guard MMR has
			return (s/2 - lo/2) / (hi/2 - lo/2)
		}
		return (s - lo) / (hi - lo)
	}
	var picks []Pick
	taken := map[int]bool{}
	for len(picks) < k && len(picks) < len(cands) {
		best := Pick{PreRank: -1}
		for i, c := range cands {
			if taken[i] {
				continue
			}
			red, any := 0.0, false
			for _, p := range picks {
				v := cands[p.PreRank-1].Vector
				if len(v) == 0 || len(v) != len(c.Vector) {
					continue
				}
				d := 0.0
				for j := range v {
					d += float64(v[j]) * float64(c.Vector[j])
				}
				if math.IsNaN(d) {
					continue
				}
				d = math.Max(-1, math.Min(1, d))
				if !any || d > red {
					red, any = d, true
				}
			}
			s := lambda*rel(c.Relevance) - (1-lambda)*red
			if best.PreRank < 0 || s > best.Score {
				best = Pick{ID: c.ID, PreRank: i + 1, Relevance: rel(c.Relevance), Redundancy: red, Score: s}
			}
		}
		taken[best.PreRank-1] = true
		picks = append(picks, best)
	}
	return picks
}

// checkMMR compares MMR with the reference. Dot products summed in another
// order may differ in the last bits, so a near-tie may flip; the picks are
// compared exactly only while no such near-tie has occurred.
func checkMMR(t testing.TB, cands []Candidate, lambda float64, k int) {
	t.Helper()
	got, want := MMR(cands, lambda, k), refMMR(cands, lambda, k)
	if len(got) != len(want) {
		t.Fatalf("%d picks, reference %d", len(got), len(want))
	}
	seen := map[int]bool{}
	for i, g := range got {
		if seen[g.PreRank] || g.PreRank < 1 || g.PreRank > len(cands) {
			t.Fatalf("pick %d: bad or repeated pre-rank %d", i, g.PreRank)
		}
		seen[g.PreRank] = true
		if math.IsNaN(g.Score) || math.IsNaN(g.Redundancy) || g.Relevance < 0 || g.Relevance > 1 {
			t.Fatalf("pick %d: %+v out of range", i, g)
		}
		w := want[i]
		if g.PreRank != w.PreRank {
			if math.Abs(g.Score-w.Score) > 1e-9 {
				t.Fatalf("pick %d: %+v, reference %+v", i, g, w)
			}
			return // a near-tie resolved the other way: later picks legitimately differ
		}
		if math.Abs(g.Score-w.Score) > 1e-9 || math.Abs(g.Redundancy-w.Redundancy) > 1e-9 || g.Relevance != w.Relevance {
			t.Fatalf("pick %d: %+v, reference %+v", i, g, w)
		}
	}
}

// TestMMRMatchesReference compares MMR with its brute-force twin on random inputs.
func TestMMRMatchesReference(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	for range 500 {
		n := r.Intn(30)
		cands := randomCandidates(r, n, 1+r.Intn(9))
		if n > 0 && r.Intn(4) == 0 {
			cands[r.Intn(n)].Vector = []float32{1} // mismatched length: incomparable
		}
		checkMMR(t, cands, []float64{0, 0.3, 0.5, 0.7, 1, -1, 2, math.NaN()}[r.Intn(8)], r.Intn(n+3)-1)
	}
}

// FuzzMMR decodes candidates from bytes (NaN and infinite values included)
// and compares MMR with the reference.
func FuzzMMR(f *testing.F) {
	f.Add([]byte{3, 2, 7, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120})
	f.Add([]byte{5, 4, 5, 0, 0, 0, 0, 0, 0, 0, 0, 255, 255, 255, 255, 0, 0, 128, 127})
	f.Fuzz(func(t *testing.T, data []byte) {
		next := func(n int) []byte {
			if len(data) < n {
				data = append(data, make([]byte, n-len(data))...)
			}
			b := data[:n]
			data = data[n:]
			return b
		}
		head := next(3)
		n, dim, k := int(head[0]%24), int(head[1]%6), int(head[2]%30)-2
		lambda := float64(head[2]%11) / 10
		cands := make([]Candidate, n)
		for i := range cands {
			cands[i].ID = string(rune('a' + i))
			cands[i].Relevance = math.Float64frombits(binary.LittleEndian.Uint64(next(8)))
			if dim == 0 || next(1)[0]%5 == 0 {
				continue
			}
			v := make([]float32, dim)
			for j := range v {
				v[j] = float32(int8(next(1)[0])) / 64
			}
			cands[i].Vector = v
		}
		checkMMR(t, cands, lambda, k)
	})
}
