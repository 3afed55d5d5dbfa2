package vector

import (
	"math/rand"
	"slices"
	"testing"

	"github.com/engram-memory/engram/internal/docset"
)

// TestRescore checks Rescore, screened (long lists) and not, against the
// brute-force reference over the listed documents, and the screened path
// against scoring every listed row in float32: identical hits, ties included
// (the fixture repeats vectors), with listed documents that have no vector.
func TestRescore(t *testing.T) {
	r := rand.New(rand.NewSource(8))
	for _, c := range []struct {
		n, dim, listed, k int
	}{
		{300, 16, 10, 3},    // short: never screened
		{300, 16, 31, 5},    // just below the screen
		{300, 16, 40, 5},    // screened (a graph walk's 4k, at least 40)
		{2000, 64, 512, 10}, // a graph search's ef candidates
		{2000, 64, 512, 200},
		{500, 7, 400, 1},
	} {
		ix, live := fixture(t, r, c.n, c.dim, 0.1)
		for range 30 {
			docs := make([]uint32, 0, c.listed)
			seen := map[uint32]bool{}
			for len(docs) < c.listed {
				d := uint32(r.Intn(2*c.n + 1)) // some have no vector
				if !seen[d] {
					seen[d] = true
					docs = append(docs, d)
				}
			}
			q := randVec(r, c.dim)
			got := ix.Rescore(q, docs, c.k)
			allow := &docset.Set{}
			for _, d := range docs {
				allow.Add(d)
			}
			if want := bruteForce(live, q, allow, c.k); !sameHits(got, want) {
				t.Fatalf("%+v: got %v, brute force %v", c, got, want)
			}
			qn, _ := Normalize(q)
			plain := newTopK(c.k)
			for _, d := range docs {
				if row, ok := ix.row(d); ok {
					plain.offer(Hit{Doc: d, Cosine: dot(qn, ix.data[row*ix.dim:(row+1)*ix.dim])})
				}
			}
			if want := mergeBest(c.k, []*topK{plain}); !slices.Equal(got, want) {
				t.Fatalf("%+v: screened %v, every row in float32 %v", c, got, want)
			}
		}
	}
}

// BenchmarkRescore is a graph search's rescoring: 512 candidates of 512-d
// rows among 100k, screened and with every candidate in float32.
func BenchmarkRescore(b *testing.B) {
	r := rand.New(rand.NewSource(9))
	const n, dim = 100_000, 512
	ix := New(dim)
	for d := range uint32(n) {
		if err := ix.Set(d, randVec(r, dim)); err != nil {
			b.Fatal(err)
		}
	}
	q := randVec(r, dim)
	docs := make([]uint32, 512)
	for i := range docs {
		docs[i] = uint32(r.Intn(n))
	}
	for _, c := range []struct {
		name string
		min  int
	}{{"screened", 32}, {"float32", 1 << 30}} {
		b.Run(c.name, func(b *testing.B) {
			defer func(old int) { rescoreScreenMin = old }(rescoreScreenMin)
			rescoreScreenMin = c.min
			for b.Loop() {
				ix.Rescore(q, docs, 10)
			}
		})
	}
}
