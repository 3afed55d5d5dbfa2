package bm25

import (
	"math/rand"
	"slices"
	"testing"

	"github.com/engram-memory/engram/internal/docset"
)

// TestDomainMatchesSubIndex: a search in a domain scores exactly as the
// brute-force reference over an index that holds the domain's documents only,
// whatever lies outside it, with and without a filter inside the domain, with
// zero-weight fields (whose terms count in df without a posting), through every
// search path, and with the statistics cache before and after the index
// changes.
func TestDomainMatchesSubIndex(t *testing.T) {
	for _, weights := range [][]float64{{3, 0.5, 1}, {1, 0, 1}} {
		r := rand.New(rand.NewSource(int64(len(weights)) + int64(weights[1]*10)))
		p := Params{K1: 1.2, B: 0.75, FieldWeights: weights, IDF: IDFRobertson}
		ix := New(p)
		docs := map[uint32][][]string{}
		for d := range uint32(300) {
			docs[d] = randDoc(r, 3, 40)
			ix.Add(d, docs[d])
		}
		for round := range 3 {
			domain := docset.New(300)
			sub := newRef(p)
			for d := range uint32(300) {
				if _, ok := docs[d]; ok && r.Intn(3+round) == 0 {
					domain.Add(d)
					sub.docs[d] = docs[d]
				}
			}
			dom := &Domain{Key: "dom", Docs: domain}
			for i := range 150 {
				q, k := randQuery(r, 40), 1+r.Intn(15)
				allow := domain
				if i%2 == 1 {
					allow = domain.Clone()
					allow.ForEach(func(d uint32) bool {
						if r.Intn(2) == 0 {
							allow.Remove(d)
						}
						return true
					})
				}
				got := ix.SearchIn(q, dom, allow, k)
				checkRef(t, got, sub.scores(q, allow), k)
				if again := ix.SearchIn(q, dom, allow, k); !slices.Equal(got, again) {
					t.Fatalf("cached statistics changed the result: %v then %v", got, again)
				}
				checkDomainPaths(t, ix, q, dom, allow, k)
				fresh := New(p)
				for d, f := range sub.docs {
					fresh.Add(d, f)
				}
				if b, want := ix.QueryBoundIn(q, dom), fresh.QueryBound(q); !relClose(b, want, 1e-12) {
					t.Fatalf("query bound in the domain %v, over the domain's own index %v", b, want)
				}
			}
			// Change the index: the next search must not use stale statistics.
			for range 20 {
				d := uint32(r.Intn(300))
				if r.Intn(2) == 0 {
					ix.Remove(d)
					delete(docs, d)
				} else {
					docs[d] = randDoc(r, 3, 40)
					ix.Add(d, docs[d])
				}
			}
		}
	}
}

// checkDomainPaths runs every strategy with the domain's statistics.
func checkDomainPaths(tb testing.TB, ix *Index, q []string, d *Domain, allow *docset.Set, k int) {
	tb.Helper()
	n, total, df := ix.stats(d)
	if n == 0 {
		return
	}
	qts, _ := ix.resolve(q, nil, n, df)
	sc := newScorer(&ix.p, float64(total)/float64(n))
	full := ix.searchPostings(qts, sc, allow, k, false)
	pruned := ix.searchPostings(qts, sc, allow, k, true)
	direct := ix.searchAllowed(qts, sc, allow, k)
	if !slices.Equal(full, pruned) || !slices.Equal(full, direct) {
		tb.Fatalf("query %q k %d: postings %v, pruned %v, direct %v", q, k, full, pruned, direct)
	}
}

// TestDomainIsolation: documents outside the domain never move a score in
// it, and the whole index's domain is the plain search.
func TestDomainIsolation(t *testing.T) {
	p := DefaultParams(1)
	ix := New(p)
	ix.Add(0, [][]string{{"alpha", "beta"}})
	ix.Add(1, [][]string{{"alpha", "gamma", "delta"}})
	dom := docset.New(2)
	dom.Add(0)
	dom.Add(1)
	d := &Domain{Key: "a", Docs: dom}
	before := ix.SearchIn([]string{"alpha", "beta"}, d, nil, 10)
	bound := ix.QueryBoundIn([]string{"alpha", "beta", "zeta"}, d)
	for doc := uint32(2); doc < 50; doc++ {
		ix.Add(doc, [][]string{{"beta", "zeta", "omega", "omega"}})
	}
	after := ix.SearchIn([]string{"alpha", "beta"}, d, nil, 10)
	if !slices.Equal(before, after) {
		t.Fatalf("scores in the domain moved when documents outside it were added: %v then %v", before, after)
	}
	if b := ix.QueryBoundIn([]string{"alpha", "beta", "zeta"}, d); b != bound {
		t.Fatalf("bound moved: %v then %v", bound, b)
	}
	if whole, plain := ix.SearchIn([]string{"beta"}, nil, nil, 5), ix.Search([]string{"beta"}, nil, 5); !slices.Equal(whole, plain) {
		t.Fatalf("nil domain %v, plain search %v", whole, plain)
	}
}
