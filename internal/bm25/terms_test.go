package bm25

import (
	"fmt"
	"math/rand"
	"sync"
	"testing"
)

// TestCountedAddMatchesAdd: documents counted concurrently and added with
// AddTerms score exactly as documents added with Add.
func TestCountedAddMatchesAdd(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	vocab := make([]string, 80)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("w%d", i)
	}
	docs := make([][][]string, 400)
	for d := range docs {
		docs[d] = make([][]string, 3)
		for f := range docs[d] {
			for range r.Intn(12) {
				docs[d][f] = append(docs[d][f], vocab[r.Intn(len(vocab))])
			}
		}
	}
	p := DefaultParams(3)
	p.FieldWeights = []float64{2, 1.5, 1}
	plain, counted := New(p), New(p)
	terms := make([]Terms, len(docs))
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for d := w; d < len(docs); d += 4 {
				terms[d] = counted.Count(docs[d])
			}
		}()
	}
	wg.Wait()
	for d := range docs {
		plain.Add(uint32(d), docs[d])
		counted.AddTerms(uint32(d), terms[d])
	}
	for range 50 {
		q := []string{vocab[r.Intn(len(vocab))], vocab[r.Intn(len(vocab))]}
		a, b := plain.Search(q, nil, 30), counted.Search(q, nil, 30)
		if len(a) != len(b) {
			t.Fatalf("query %v: %d vs %d hits", q, len(a), len(b))
		}
		for i := range a {
			if a[i] != b[i] {
				t.Fatalf("query %v hit %d: %+v vs %+v", q, i, a[i], b[i])
			}
		}
	}
}
