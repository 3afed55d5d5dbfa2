package rerank

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestOrder(t *testing.T) {
	tests := []struct {
		name    string
		scores  []Score
		n, topN int
		want    []Score
		wantErr string
	}{
		{"sorted", []Score{{0, 3}, {1, 2}}, 2, 0, []Score{{0, 3}, {1, 2}}, ""},
		{"reversed", []Score{{1, 2}, {0, 3}}, 2, 0, []Score{{0, 3}, {1, 2}}, ""},
		{"ties by index", []Score{{2, 1}, {0, 1}, {1, 1}}, 3, 0, []Score{{0, 1}, {1, 1}, {2, 1}}, ""},
		{"top n", []Score{{0, 1}, {1, 5}, {2, 3}}, 3, 2, []Score{{1, 5}, {2, 3}}, ""},
		{"top n above n", []Score{{0, 1}}, 1, 10, []Score{{0, 1}}, ""},
		{"negative scores", []Score{{0, -3}, {1, -1}}, 2, 0, []Score{{1, -1}, {0, -3}}, ""},
		{"omitted follow in input order", []Score{{2, 7}, {4, 9}}, 5, 0, []Score{{4, 9}, {2, 7}, {0, 7}, {1, 7}, {3, 7}}, ""},
		{"none scored", nil, 3, 0, nil, "no scores"},
		{"out of range", []Score{{3, 1}}, 3, 0, nil, "index 3, outside the 3"},
		{"negative index", []Score{{-1, 1}}, 3, 0, nil, "index -1"},
		{"duplicate", []Score{{1, 1}, {0, 1}, {1, 2}}, 3, 0, nil, "result 2 scores index 1 a second time"},
		{"NaN", []Score{{0, math.NaN()}}, 1, 0, nil, "non-finite score NaN"},
		{"Inf", []Score{{0, math.Inf(1)}}, 1, 0, nil, "non-finite score +Inf"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := slices.Clone(tt.scores)
			got, err := order(tt.scores, tt.n, tt.topN)
			if tt.wantErr != "" {
				if !errors.Is(err, ErrInvalidResponse) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want ErrInvalidResponse mentioning %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(got, tt.want) {
				t.Fatalf("order = %v, %v; want %v", got, err, tt.want)
			}
			if !slices.Equal(in, tt.scores) {
				t.Error("input modified")
			}
		})
	}
}

// referenceOrder is order by brute force: every document gets a key
// (scored first, then score, then index) and the best topN keys win by
// repeated selection.
func referenceOrder(scores []Score, n, topN int) []Score {
	scoredAt := make(map[int]float64)
	low := math.Inf(1)
	for _, s := range scores {
		scoredAt[s.Index] = s.Score
		low = min(low, s.Score)
	}
	better := func(a, b int) bool {
		sa, oka := scoredAt[a]
		sb, okb := scoredAt[b]
		if oka != okb {
			return oka
		}
		if sa != sb {
			return sa > sb
		}
		return a < b
	}
	used := make([]bool, n)
	var out []Score
	for range limit(topN, n) {
		best := -1
		for d := range n {
			if !used[d] && (best < 0 || better(d, best)) {
				best = d
			}
		}
		used[best] = true
		s, ok := scoredAt[best]
		if !ok {
			s = low
		}
		out = append(out, Score{best, s})
	}
	return out
}

func TestOrderMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 1; n <= 6; n++ {
		for trial := range 300 {
			perm := rng.Perm(n)
			scores := make([]Score, 1+rng.IntN(n))
			for i := range scores {
				// Few distinct values, so ties are common.
				scores[i] = Score{perm[i], float64(rng.IntN(4)) - 1}
			}
			for topN := -1; topN <= n+1; topN++ {
				got, err := order(scores, n, topN)
				want := referenceOrder(scores, n, topN)
				if err != nil || !slices.Equal(got, want) {
					t.Fatalf("n=%d trial %d topN=%d scores %v:\n got %v, %v\nwant %v", n, trial, topN, scores, got, err, want)
				}
			}
		}
	}
}

func BenchmarkOrder(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		rng := rand.New(rand.NewPCG(3, 4))
		scores := make([]Score, n)
		for i, d := range rng.Perm(n) {
			scores[i] = Score{d, rng.Float64()}
		}
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := order(scores, n, 10); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
