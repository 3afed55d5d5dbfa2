package eval

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"testing"
)

// Hand-worked cases. log2 values used below:
// 1/log2(2) = 1, 1/log2(3) = 0.630930, 1/log2(4) = 0.5, 1/log2(5) = 0.430677,
// 1/log2(6) = 0.386853.
func TestScoreHandWorked(t *testing.T) {
	// Twelve relevant memories r0..r11 (grade 1), for the uncapped-recall case.
	twelve := map[string]int{}
	for i := range 12 {
		twelve["r"+strconv.Itoa(i)] = 1
	}
	cases := []struct {
		name   string
		ranked []string
		gold   map[string]int
		want   Metrics
	}{
		{
			// Relevant a, b (grade 1) at ranks 2 and 4.
			// DCG  = 1/log2(3) + 1/log2(5) = 0.630930 + 0.430677 = 1.061606
			// IDCG = 1/log2(2) + 1/log2(3) = 1 + 0.630930 = 1.630930
			// nDCG@10 = nDCG@5 = 1.061606 / 1.630930 = 0.650921
			// recall@5 = 2/2; first relevant at rank 2: MRR 0.5, hit@1 0.
			name:   "binary two relevant at ranks 2 and 4",
			ranked: []string{"x", "a", "y", "b"},
			gold:   map[string]int{"a": 1, "b": 1},
			want: Metrics{NDCG10: 0.650921, NDCG5: 0.650921, Recall5: 1, Recall10: 1, Recall100: 1,
				Hit1: 0, MRR: 0.5, Any5: 1, Any10: 1},
		},
		{
			// Graded, gain = grade (trec_eval), not 2^g-1. a=2, b=1, c=1; c never retrieved.
			// DCG  = 1/log2(2) [b] + 2/log2(3) [a] = 1 + 1.261860 = 2.261860
			// IDCG = 2/log2(2) + 1/log2(3) + 1/log2(4) = 2 + 0.630930 + 0.5 = 3.130930
			// nDCG = 2.261860 / 3.130930 = 0.722424 (with 2^g-1 gains it would be 0.700.)
			// recall = 2/3; b at rank 1: hit@1 1, MRR 1.
			name:   "graded gains use the grade itself",
			ranked: []string{"b", "a", "z"},
			gold:   map[string]int{"a": 2, "b": 1, "c": 1},
			want: Metrics{NDCG10: 0.722424, NDCG5: 0.722424, Recall5: 2.0 / 3, Recall10: 2.0 / 3,
				Recall100: 2.0 / 3, Hit1: 1, MRR: 1, Any5: 1, Any10: 1},
		},
		{
			// Twelve relevant, retrieved at ranks 1, 3 and 11 (non-relevant filler elsewhere).
			// DCG@10  = 1 + 1/log2(4) = 1.5 (rank 11 is past the cut)
			// IDCG@10 = Σ_{i=1..10} 1/log2(i+1) = 4.543559 → nDCG@10 = 0.330138
			// DCG@5   = 1.5; IDCG@5 = Σ_{i=1..5} 1/log2(i+1) = 2.948459 → nDCG@5 = 0.508740
			// recall@5 = 2/12 and recall@10 = 2/12 (uncapped: not 2/5 or 2/10); recall@100 = 3/12.
			name:   "uncapped recall with more relevant than k",
			ranked: []string{"r0", "n1", "r1", "n3", "n4", "n5", "n6", "n7", "n8", "n9", "r2"},
			gold:   twelve,
			want: Metrics{NDCG10: 0.330138, NDCG5: 0.508740, Recall5: 2.0 / 12, Recall10: 2.0 / 12,
				Recall100: 3.0 / 12, Hit1: 1, MRR: 1, Any5: 1, Any10: 1},
		},
		{
			// Relevant only at rank 6: outside top 5, inside top 10.
			// DCG@10 = 1/log2(7) = 0.356207; IDCG = 1 → nDCG@10 0.356207, nDCG@5 0.
			// MRR = 1/6.
			name:   "first relevant at rank six",
			ranked: []string{"n1", "n2", "n3", "n4", "n5", "a"},
			gold:   map[string]int{"a": 1},
			want: Metrics{NDCG10: 0.356207, NDCG5: 0, Recall5: 0, Recall10: 1, Recall100: 1,
				Hit1: 0, MRR: 1.0 / 6, Any5: 0, Any10: 1},
		},
		{
			// A duplicate does not take a second rank: ranked is x, a (a at rank 2).
			name:   "duplicates count once",
			ranked: []string{"x", "x", "a", "a"},
			gold:   map[string]int{"a": 1},
			want: Metrics{NDCG10: 0.630930, NDCG5: 0.630930, Recall5: 1, Recall10: 1, Recall100: 1,
				Hit1: 0, MRR: 0.5, Any5: 1, Any10: 1},
		},
		{
			// Grades of 0 and below are judged non-relevant and add nothing.
			name:   "zero and negative grades are not relevant",
			ranked: []string{"z", "neg", "a"},
			gold:   map[string]int{"z": 0, "neg": -1, "a": 1},
			want: Metrics{NDCG10: 0.5, NDCG5: 0.5, Recall5: 1, Recall10: 1, Recall100: 1,
				Hit1: 0, MRR: 1.0 / 3, Any5: 1, Any10: 1},
		},
		{
			name:   "nothing retrieved",
			ranked: nil,
			gold:   map[string]int{"a": 1},
			want:   Metrics{NDCG10: 0, NDCG5: 0, Recall5: 0, Recall10: 0, Recall100: 0, Hit1: 0, MRR: 0, Any5: 0, Any10: 0},
		},
		{
			// No relevant judgement: every metric is 0, never NaN.
			name:   "no relevant judgements",
			ranked: []string{"a"},
			gold:   map[string]int{"a": 0},
			want:   Metrics{NDCG10: 0, NDCG5: 0, Recall5: 0, Recall10: 0, Recall100: 0, Hit1: 0, MRR: 0, Any5: 0, Any10: 0},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Score(tc.ranked, tc.gold)
			assertMetrics(t, got, tc.want, 1e-6)
		})
	}
}

func assertMetrics(t testing.TB, got, want Metrics, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("got %d metrics %v, want %d", len(got), got, len(want))
	}
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			t.Errorf("%s missing", k)
			continue
		}
		if math.IsNaN(g) || math.Abs(g-w) > tol {
			t.Errorf("%s = %.6f, want %.6f", k, g, w)
		}
	}
}

// refScore is the brute-force reference: each metric computed on its own, straight
// from its definition, over the de-duplicated ranking.
func refScore(ranked []string, gold map[string]int) Metrics {
	var list []string
	seen := map[string]bool{}
	for _, id := range ranked {
		if !seen[id] {
			seen[id] = true
			list = append(list, id)
		}
	}
	var rel []int
	for _, g := range gold {
		if g > 0 {
			rel = append(rel, g)
		}
	}
	m := Metrics{}
	ndcg := func(k int) float64 {
		var dcg, idcg float64
		for i := 0; i < k && i < len(list); i++ {
			if g := gold[list[i]]; g > 0 {
				dcg += float64(g) / math.Log2(float64(i+2))
			}
		}
		sorted := append([]int(nil), rel...)
		sort.Sort(sort.Reverse(sort.IntSlice(sorted)))
		for i := 0; i < k && i < len(sorted); i++ {
			idcg += float64(sorted[i]) / math.Log2(float64(i+2))
		}
		if idcg == 0 {
			return 0
		}
		return dcg / idcg
	}
	count := func(k int) int {
		n := 0
		for i := 0; i < k && i < len(list); i++ {
			if gold[list[i]] > 0 {
				n++
			}
		}
		return n
	}
	recall := func(k int) float64 {
		if len(rel) == 0 {
			return 0
		}
		return float64(count(k)) / float64(len(rel))
	}
	anyK := func(k int) float64 {
		if count(k) > 0 {
			return 1
		}
		return 0
	}
	m[NDCG10], m[NDCG5] = ndcg(10), ndcg(5)
	m[Recall5], m[Recall10], m[Recall100] = recall(5), recall(10), recall(100)
	m[Hit1], m[Any5], m[Any10] = anyK(1), anyK(5), anyK(10)
	m[MRR] = 0
	for i, id := range list {
		if gold[id] > 0 {
			m[MRR] = 1 / float64(i+1)
			break
		}
	}
	return m
}

func randomRun(r *rand.Rand, docs, n int) ([]string, map[string]int) {
	ranked := make([]string, n)
	for i := range ranked {
		ranked[i] = "d" + strconv.Itoa(r.IntN(docs))
	}
	gold := map[string]int{}
	for range r.IntN(15) {
		gold["d"+strconv.Itoa(r.IntN(docs))] = r.IntN(4) - 1
	}
	return ranked, gold
}

func TestScoreMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 3000 {
		ranked, gold := randomRun(r, 5+r.IntN(200), r.IntN(130))
		got, want := Score(ranked, gold), refScore(ranked, gold)
		for k, w := range want {
			if math.Abs(got[k]-w) > 1e-12 {
				t.Fatalf("run %d: %s = %v, reference %v (ranked %v, gold %v)", i, k, got[k], w, ranked, gold)
			}
		}
	}
}

func FuzzScore(f *testing.F) {
	f.Add(uint64(1), 10, 20)
	f.Add(uint64(7), 3, 0)
	f.Fuzz(func(t *testing.T, seed uint64, docs, n int) {
		docs, n = 1+abs(docs)%300, abs(n)%300
		ranked, gold := randomRun(rand.New(rand.NewPCG(seed, 0)), docs, n)
		got, want := Score(ranked, gold), refScore(ranked, gold)
		for k, w := range want {
			g := got[k]
			if math.IsNaN(g) || g < 0 || g > 1+1e-12 || math.Abs(g-w) > 1e-12 {
				t.Fatalf("%s = %v, reference %v", k, g, w)
			}
		}
	})
}

func abs(x int) int {
	if x < 0 {
		if x == math.MinInt {
			return 0
		}
		return -x
	}
	return x
}

func BenchmarkScore(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			r := rand.New(rand.NewPCG(3, 4))
			ranked, gold := randomRun(r, 2*n, n)
			b.ReportAllocs()
			for b.Loop() {
				Score(ranked, gold)
			}
		})
	}
}
