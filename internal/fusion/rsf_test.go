package fusion

import (
	"math"
	"testing"
)

// TestRSFGolden checks relative score fusion against hand-worked sums.
func TestRSFGolden(t *testing.T) {
	inf := math.Inf(1)
	tests := []struct {
		name string
		legs []Leg
		want []want
	}{
		{
			// bm25 (w=1): a 10, b 6, c 2 → min 2, max 10: a 1, b 0.5, c 0.
			// vector (w=0.5): c 0.75, a 0.5, d 0.25 → c 1, a 0.5, d 0.
			//   a: 1 + 0.5·0.5 = 1.25;  b: 0.5;  c: 0 + 0.5·1 = 0.5 (ties b, ID order);  d: 0.
			name: "two weighted legs",
			legs: []Leg{
				{Name: "bm25", Weight: 1, Hits: hits("a", 10, "b", 6, "c", 2)},
				{Name: "vector", Weight: 0.5, Hits: hits("c", 0.75, "a", 0.5, "d", 0.25)},
			},
			want: []want{
				{"a", 1.25, []int{1, 2}},
				{"b", 0.5, []int{2, 0}},
				{"c", 0.5, []int{3, 1}},
				{"d", 0, []int{0, 3}},
			},
		},
		{
			// One hit, and all-equal scores, normalise to 1: p 2·1 + 1 = 3, q 1, r 1.
			name: "one hit and all equal",
			legs: []Leg{
				{Name: "one", Weight: 2, Hits: hits("p", 0.3)},
				{Name: "flat", Weight: 1, Hits: hits("q", 4, "r", 4, "p", 4)},
			},
			want: []want{{"p", 3, []int{1, 3}}, {"q", 1, []int{0, 1}}, {"r", 1, []int{0, 2}}},
		},
		{
			// Non-finite scores stay out of min/max (finite range 1..3):
			//   s +Inf → 1, t 3 → 1, u 2 → 0.5, v 1 → 0, w NaN → 0, x -Inf → 0.
			name: "non-finite scores",
			legs: []Leg{{Name: "odd", Weight: 1, Hits: hits("s", inf, "t", 3, "u", 2, "v", 1, "w", math.NaN(), "x", -inf)}},
			want: []want{
				{"s", 1, nil}, {"t", 1, nil}, {"u", 0.5, nil},
				{"v", 0, nil}, {"w", 0, nil}, {"x", 0, nil},
			},
		},
		{
			// A duplicate's later score is ignored: a 5 (first), b 1 → a 1, b 0; c 3 → 0.5.
			name: "duplicate in a leg",
			legs: []Leg{{Name: "dup", Weight: 1, Hits: hits("a", 5, "c", 3, "a", 100, "b", 1)}},
			want: []want{{"a", 1, []int{1}}, {"c", 0.5, []int{2}}, {"b", 0, []int{4}}},
		},
		{
			// Extreme magnitudes must not overflow max-min: 0, 0.5, 1.
			name: "huge range",
			legs: []Leg{{Name: "big", Weight: 1, Hits: hits("h", math.MaxFloat64, "m", 0.0, "l", -math.MaxFloat64)}},
			want: []want{{"h", 1, nil}, {"m", 0.5, nil}, {"l", 0, nil}},
		},
		{name: "empty", legs: []Leg{{Name: "none", Weight: 1}}, want: nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkFused(t, RSF(tc.legs), tc.want)
		})
	}
}
