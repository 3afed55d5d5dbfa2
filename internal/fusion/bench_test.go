package fusion

import (
	"fmt"
	"math/rand"
	"testing"
)

// benchLegs builds a BM25-like and a cosine-like leg of n hits each that
// share about half their IDs.
func benchLegs(n int) []Leg {
	r := rand.New(rand.NewSource(1))
	bm, vec := make([]Hit, n), make([]Hit, n)
	for i := range n {
		bm[i] = Hit{ID: fmt.Sprintf("01J%08d", i), Score: 20 - 15*float64(i)/float64(n)}
		vec[i] = Hit{ID: fmt.Sprintf("01J%08d", r.Intn(2*n)), Score: 0.9 - 0.5*float64(i)/float64(n)}
	}
	return []Leg{{Name: "bm25", Weight: 1, Hits: bm}, {Name: "vector", Weight: 0.1, Hits: vec}}
}

// BenchmarkFusion fuses two legs of n hits each (250 is the pool for a
// limit of 50).
func BenchmarkFusion(b *testing.B) {
	for _, n := range []int{50, 250, 1000} {
		legs := benchLegs(n)
		for _, f := range fusers {
			b.Run(fmt.Sprintf("%s/n=%d", f.name, n), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					f.fuse(legs)
				}
			})
		}
	}
}

// BenchmarkMMR picks k of n candidates with dim-dimensional vectors.
func BenchmarkMMR(b *testing.B) {
	for _, c := range []struct{ n, dim, k int }{{50, 512, 10}, {50, 100, 10}, {250, 384, 50}} {
		cands := randomCandidates(rand.New(rand.NewSource(2)), c.n, c.dim)
		b.Run(fmt.Sprintf("n=%d/dim=%d/k=%d", c.n, c.dim, c.k), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				MMR(cands, DefaultLambda, c.k)
			}
		})
	}
}
