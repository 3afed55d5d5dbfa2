package fusion

import (
	"math"
	"testing"
)

// TestDBSFGolden checks distribution-based fusion against hand-worked sums.
// With population σ, a score s scales to 0.5 + (s-μ)/(6σ) before clipping.
func TestDBSFGolden(t *testing.T) {
	r6 := math.Sqrt(6)
	r10 := math.Sqrt(10)
	tests := []struct {
		name string
		legs []Leg
		want []want
	}{
		{
			// bm25 (w=1): 9, 6, 3 → μ 6, σ √((9+0+9)/3) = √6: a 0.5+3/(6√6) = 0.5+1/(2√6) ≈ 0.7041,
			//   b 0.5, c 0.5-1/(2√6) ≈ 0.2959.
			// vector (w=0.5): 0.8, 0.4 → μ 0.6, σ 0.2: c 0.5+0.2/1.2 = 2/3, a 1/3.
			// single (w=1): one hit, σ 0 → d 0.5.
			//   a: 0.5+1/(2√6) + 0.5·(1/3) ≈ 0.8708;  c: 0.5-1/(2√6) + 0.5·(2/3) ≈ 0.6292;
			//   b: 0.5;  d: 0.5 (ties b, ID order).
			name: "three legs",
			legs: []Leg{
				{Name: "bm25", Weight: 1, Hits: hits("a", 9, "b", 6, "c", 3)},
				{Name: "vector", Weight: 0.5, Hits: hits("c", 0.8, "a", 0.4)},
				{Name: "single", Weight: 1, Hits: hits("d", 5)},
			},
			want: []want{
				{"a", 0.5 + 1/(2*r6) + 0.5*(1.0/3), []int{1, 2, 0}},
				{"c", 0.5 - 1/(2*r6) + 0.5*(2.0/3), []int{3, 1, 0}},
				{"b", 0.5, []int{2, 0, 0}},
				{"d", 0.5, []int{0, 0, 1}},
			},
		},
		{
			// Ten scores of 0 and one of 1: μ 1/11, σ √10/11. The 1 has z = √10 > 3 and clips
			// to 1; each 0 has z = -1/√10 and scales to 0.5 - 1/(6√10) ≈ 0.4473.
			name: "clipped outlier",
			legs: []Leg{{Name: "tail", Weight: 1, Hits: hits(
				"top", 1, "z0", 0, "z1", 0, "z2", 0, "z3", 0, "z4", 0, "z5", 0, "z6", 0, "z7", 0, "z8", 0, "z9", 0)}},
			want: []want{
				{"top", 1, nil},
				{"z0", 0.5 - 1/(6*r10), nil}, {"z1", 0.5 - 1/(6*r10), nil}, {"z2", 0.5 - 1/(6*r10), nil},
				{"z3", 0.5 - 1/(6*r10), nil}, {"z4", 0.5 - 1/(6*r10), nil}, {"z5", 0.5 - 1/(6*r10), nil},
				{"z6", 0.5 - 1/(6*r10), nil}, {"z7", 0.5 - 1/(6*r10), nil}, {"z8", 0.5 - 1/(6*r10), nil},
				{"z9", 0.5 - 1/(6*r10), nil},
			},
		},
		{
			// Non-finite scores stay out of μ, σ: finite 4, 2 → μ 3, σ 1: p 0.5+1/6, q 0.5-1/6;
			// +Inf → 1, NaN and -Inf → 0.
			name: "non-finite scores",
			legs: []Leg{{Name: "odd", Weight: 1, Hits: hits("i", math.Inf(1), "p", 4, "n", math.NaN(), "q", 2, "m", math.Inf(-1))}},
			want: []want{
				{"i", 1, nil}, {"p", 0.5 + 1.0/6, nil}, {"q", 0.5 - 1.0/6, nil},
				{"m", 0, nil}, {"n", 0, nil},
			},
		},
		{
			// All equal: σ 0, every hit 0.5 (times weight 2 → 1).
			name: "all equal",
			legs: []Leg{{Name: "flat", Weight: 2, Hits: hits("b", 7, "a", 7)}},
			want: []want{{"a", 1, []int{2}}, {"b", 1, []int{1}}},
		},
		{
			// Huge magnitudes must not overflow the mean or variance: ±Max and 0 → μ 0,
			// σ Max·√(2/3): h 0.5 + 1/(6√(2/3)) ≈ 0.7041, m 0.5, l ≈ 0.2959.
			name: "huge range",
			legs: []Leg{{Name: "big", Weight: 1, Hits: hits("h", math.MaxFloat64, "m", 0.0, "l", -math.MaxFloat64)}},
			want: []want{
				{"h", 0.5 + 1/(6*math.Sqrt(2.0/3)), nil},
				{"m", 0.5, nil},
				{"l", 0.5 - 1/(6*math.Sqrt(2.0/3)), nil},
			},
		},
		{name: "empty", legs: []Leg{{Name: "none", Weight: 1}}, want: nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkFused(t, DBSF(tc.legs), tc.want)
		})
	}
}
