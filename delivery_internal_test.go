package engram

import (
	"math/rand"
	"slices"
	"testing"
)

// TestTopKMatchesSort: the bounded selection a brief uses keeps exactly the
// k best of a full sort, in order.
func TestTopKMatchesSort(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	for _, k := range []int{1, 2, 7, 50} {
		for range 100 {
			xs := r.Perm(r.Intn(120))
			top := topK[int]{k: k, better: func(a, b int) bool { return a > b }}
			for _, x := range xs {
				top.add(x)
			}
			want := slices.Clone(xs)
			slices.Sort(want)
			slices.Reverse(want)
			want = want[:min(k, len(want))]
			if !slices.Equal(top.items, want) {
				t.Fatalf("k=%d: got %v, want %v", k, top.items, want)
			}
		}
	}
}
