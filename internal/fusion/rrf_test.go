package fusion

import (
	"fmt"
	"math"
	"testing"
)

// TestRRFGolden checks RRF against hand-worked sums.
func TestRRFGolden(t *testing.T) {
	tests := []struct {
		name string
		legs []Leg
		k    float64
		want []want
	}{
		{
			// k=60. bm25 (w=1): a=1, b=2, c=3. vector (w=0.5): c=1, a=2, d=3.
			//   a: 1/61 + 0.5/62 = 0.016393442622950820 + 0.008064516129032258 = 0.024457958751983078
			//   c: 1/63 + 0.5/61 = 0.015873015873015872 + 0.008196721311475410 = 0.024069737184491282
			//   b: 1/62                                                          = 0.016129032258064516
			//   d: 0.5/63                                                        = 0.007936507936507936
			name: "two weighted legs",
			legs: []Leg{
				{Name: "bm25", Weight: 1, Hits: hits("a", 9.0, "b", 7.0, "c", 3.0)},
				{Name: "vector", Weight: 0.5, Hits: hits("c", 0.9, "a", 0.8, "d", 0.1)},
			},
			k: 60,
			want: []want{
				{"a", 0.024457958751983078, []int{1, 2}},
				{"c", 0.024069737184491282, []int{3, 1}},
				{"b", 0.016129032258064516, []int{2, 0}},
				{"d", 0.007936507936507936, []int{0, 3}},
			},
		},
		{
			// k=1: x is first in one leg, second in the other; y the reverse.
			//   x: 1/(1+1) + 1/(1+2) = 0.5 + 0.3333… = 0.8333…, y the same: tie, x < y by ID.
			//   z: 1/(1+3) = 0.25
			name: "small k and a tie",
			legs: []Leg{
				{Name: "l1", Weight: 1, Hits: hits("y", 1, "x", 1, "z", 1)},
				{Name: "l2", Weight: 1, Hits: hits("x", 1, "y", 1)},
			},
			k: 1,
			want: []want{
				{"x", 0.5 + 1.0/3, []int{2, 1}},
				{"y", 0.5 + 1.0/3, []int{1, 2}},
				{"z", 0.25, []int{3, 0}},
			},
		},
		{
			// k<=0 means 60: a = 1/61, b = 1/62.
			name: "default k",
			legs: []Leg{{Name: "only", Weight: 1, Hits: hits("a", 1, "b", 1)}},
			k:    -5,
			want: []want{{"a", 1.0 / 61, []int{1}}, {"b", 1.0 / 62, []int{2}}},
		},
		{
			// A duplicate inside one leg counts once at its first rank; c keeps position 4.
			//   a: 1/61, b: 1/62, c: 1/64.
			name: "duplicate in a leg",
			legs: []Leg{{Name: "dup", Weight: 1, Hits: hits("a", 3, "b", 2, "a", 1, "c", 0)}},
			k:    60,
			want: []want{{"a", 1.0 / 61, []int{1}}, {"b", 1.0 / 62, []int{2}}, {"c", 1.0 / 64, []int{4}}},
		},
		{
			// Weight 0 (and a negative weight, treated as 0) keeps IDs at score 0.
			//   a: 1/61 + 0 = 0.01639…, z: 0 (only in the zero-weight legs), ties by ID: y < z.
			name: "zero and negative weights",
			legs: []Leg{
				{Name: "main", Weight: 1, Hits: hits("a", 1)},
				{Name: "mute", Weight: 0, Hits: hits("z", 1, "a", 1)},
				{Name: "neg", Weight: -2, Hits: hits("y", 1)},
			},
			k: 60,
			want: []want{
				{"a", 1.0 / 61, []int{1, 2, 0}},
				{"y", 0, []int{0, 0, 1}},
				{"z", 0, []int{0, 1, 0}},
			},
		},
		{name: "no legs", legs: nil, k: 60, want: nil},
		{name: "empty legs", legs: []Leg{{Name: "a"}, {Name: "b", Weight: 1}}, k: 60, want: nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkFused(t, RRF(tc.legs, tc.k), tc.want)
		})
	}
}

// TestRRFOneLegKeepsOrder checks that fusing a single leg reproduces it.
func TestRRFOneLegKeepsOrder(t *testing.T) {
	var hs []Hit
	for i := range 100 {
		// IDs deliberately not in lexical order.
		hs = append(hs, Hit{ID: fmt.Sprintf("m%03d", (i*37)%100), Score: float64(-i)})
	}
	got := RRF([]Leg{{Name: "bm25", Weight: 1, Hits: hs}}, 0)
	if len(got) != len(hs) {
		t.Fatalf("got %d results, want %d", len(got), len(hs))
	}
	for i, f := range got {
		if f.ID != hs[i].ID || f.Legs[0].Rank != i+1 || f.Legs[0].Score != hs[i].Score {
			t.Fatalf("position %d: got %+v, want %s at rank %d", i, f, hs[i].ID, i+1)
		}
	}
}

// TestWeightsScale checks that a leg's weight scales its contribution linearly.
func TestWeightsScale(t *testing.T) {
	a := hits("a", 5, "b", 4, "c", 1)
	b := hits("c", 0.9, "d", 0.5, "a", 0.1)
	for _, f := range fusers {
		t.Run(f.name, func(t *testing.T) {
			base := f.fuse([]Leg{{Name: "x", Weight: 1, Hits: a}, {Name: "y", Weight: 1, Hits: b}})
			onlyX := f.fuse([]Leg{{Name: "x", Weight: 1, Hits: a}, {Name: "y", Weight: 0, Hits: b}})
			onlyY := f.fuse([]Leg{{Name: "x", Weight: 0, Hits: a}, {Name: "y", Weight: 1, Hits: b}})
			scaled := f.fuse([]Leg{{Name: "x", Weight: 3, Hits: a}, {Name: "y", Weight: 0.25, Hits: b}})
			x, y, s, all := byID(onlyX), byID(onlyY), byID(scaled), byID(base)
			for id := range all {
				if d := all[id] - (x[id] + y[id]); math.Abs(d) > tol {
					t.Errorf("%s: w=1,1 gives %g, legs alone sum to %g", id, all[id], x[id]+y[id])
				}
				if want := 3*x[id] + 0.25*y[id]; math.Abs(s[id]-want) > tol {
					t.Errorf("%s: w=3,0.25 gives %g, want %g", id, s[id], want)
				}
			}
		})
	}
}

func byID(fs []Fused) map[string]float64 {
	m := make(map[string]float64, len(fs))
	for _, f := range fs {
		m[f.ID] = f.Score
	}
	return m
}
