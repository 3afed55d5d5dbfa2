package bm25

import (
	"math"
	"testing"
)

func TestQueryBound(t *testing.T) {
	ix := New(DefaultParams(1))
	ix.Add(0, [][]string{{"alpha", "beta"}})
	ix.Add(1, [][]string{{"beta", "gamma"}})
	ix.Add(2, [][]string{{"gamma"}})
	p := ix.Params()
	absent := p.idf(3, 0) * (p.K1 + 1)
	cases := []struct {
		name  string
		query []string
		want  float64
	}{
		{"all present", []string{"alpha", "beta"}, ix.UpperBound([]string{"alpha", "beta"})},
		{"one absent", []string{"alpha", "zeta"}, ix.UpperBound([]string{"alpha"}) + absent},
		{"all absent", []string{"zeta", "eta"}, 2 * absent},
		{"repeated absent", []string{"zeta", "zeta"}, 2 * absent},
		{"empty", nil, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := ix.QueryBound(c.query); math.Abs(got-c.want) > 1e-12 {
				t.Errorf("QueryBound(%v) = %v, want %v", c.query, got, c.want)
			}
			if ub := ix.UpperBound(c.query); ix.QueryBound(c.query) < ub {
				t.Errorf("QueryBound below UpperBound %v", ub)
			}
		})
	}
	// The best document never scores above the bound.
	for _, h := range ix.Search([]string{"alpha", "beta", "zeta"}, nil, 3) {
		if h.Score > ix.QueryBound([]string{"alpha", "beta", "zeta"}) {
			t.Errorf("doc %d scores %v above the bound", h.Doc, h.Score)
		}
	}
}

// TestRelevanceIn checks the small-collection signal against its definition:
// the same documents plus filler documents that hold none of the query's
// terms, as long on average, until the collection has minDocs.
func TestRelevanceIn(t *testing.T) {
	small := [][]string{{"nightly", "export", "archive", "bucket"}, {"deploy", "key", "vault", "export"}, {"vault", "two", "people", "open"}}
	const minDocs = 40
	ix := New(DefaultParams(1))
	ref := New(DefaultParams(1))
	for i, d := range small {
		ix.Add(uint32(i), [][]string{d})
		ref.Add(uint32(i), [][]string{d})
	}
	for i := len(small); i < minDocs; i++ {
		ref.Add(uint32(i), [][]string{{"filler", "words", "of", "four"}})
	}
	docs := []uint32{0, 1, 2}
	for _, tc := range []struct {
		name  string
		query []string
	}{
		{"clear match, one word absent", []string{"bucket", "nightly", "export", "use"}},
		{"common word", []string{"export"}},
		{"every word absent", []string{"lasagna", "recipe"}},
		{"repeated", []string{"vault", "vault", "key"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			scores, bnd, ok := ix.RelevanceIn(tc.query, nil, docs, minDocs)
			if !ok {
				t.Fatal("not computed for a collection below minDocs")
			}
			if want := ref.QueryBound(tc.query); math.Abs(bnd-want) > 1e-9 {
				t.Errorf("bound %v, want %v", bnd, want)
			}
			for i, doc := range docs {
				want, _ := ref.Score(doc, tc.query)
				if math.Abs(scores[i]-want) > 1e-9 {
					t.Errorf("doc %d: score %v, want %v", doc, scores[i], want)
				}
				if scores[i] > bnd {
					t.Errorf("doc %d: score %v above the bound %v", doc, scores[i], bnd)
				}
			}
		})
	}
	// At minDocs or more the signal is the search's own: nothing computed.
	if _, _, ok := ref.RelevanceIn([]string{"export"}, nil, docs, minDocs); ok {
		t.Error("computed for a collection of minDocs")
	}
	// A clear match in a one-document collection: the repro of issue 27.
	one := New(DefaultParams(1))
	one.Add(0, [][]string{small[0]})
	q := []string{"bucket", "nightly", "export", "use"}
	s, _ := one.Score(0, q)
	scores, bnd, _ := one.RelevanceIn(q, nil, []uint32{0}, RelevanceMinDocs)
	if raw, read := s/one.QueryBound(q), scores[0]/bnd; !(read > 1.5*raw) {
		t.Errorf("one-document collection: relevance %.3f read as %.3f, want well above", raw, read)
	}
}
