package bm25

import (
	"math"
	"math/rand"
	"slices"
	"strconv"
	"testing"

	"github.com/engram-memory/engram/internal/docset"
)

// refIndex is the brute-force twin of Index: it keeps raw documents and
// recomputes every statistic per query with the formula as FTS5 writes it.
type refIndex struct {
	p    Params
	docs map[uint32][][]string
}

func newRef(p Params) *refIndex {
	return &refIndex{p: p.sanitize(), docs: map[uint32][][]string{}}
}

// scores returns every document's positive score for query.
func (r *refIndex) scores(query []string, allow *docset.Set) map[uint32]float64 {
	N := len(r.docs)
	nf := len(r.p.FieldWeights)
	var total float64
	df := map[string]int{}
	for _, fields := range r.docs {
		seen := map[string]bool{}
		for _, toks := range fields[:min(len(fields), nf)] {
			for _, t := range toks {
				if t != "" {
					total++
					seen[t] = true
				}
			}
		}
		for t := range seen {
			df[t]++
		}
	}
	out := map[uint32]float64{}
	if N == 0 {
		return out
	}
	avgdl := total / float64(N)
	k1, b := r.p.K1, r.p.B
	for d, fields := range r.docs {
		if !allow.Has(d) {
			continue
		}
		var dl float64
		for _, toks := range fields[:min(len(fields), nf)] {
			for _, t := range toks {
				if t != "" {
					dl++
				}
			}
		}
		var s float64
		for _, q := range query {
			if df[q] == 0 {
				continue
			}
			var tf float64
			for f, toks := range fields[:min(len(fields), nf)] {
				for _, t := range toks {
					if t == q {
						tf += r.p.FieldWeights[f]
					}
				}
			}
			if tf == 0 {
				continue
			}
			idf := r.p.idf(N, df[q])
			s += idf * (tf * (k1 + 1)) / (tf + k1*(1-b+b*dl/avgdl))
		}
		if s > 0 {
			out[d] = s
		}
	}
	return out
}

// checkRef verifies got as Search(query, allow, k): the right number of hits,
// each scored as the reference scores that doc, in non-increasing order with
// ties by doc, and every rank's score equal to the reference's at that rank.
func checkRef(tb testing.TB, got []Hit, ref map[uint32]float64, k int) {
	tb.Helper()
	want := make([]Hit, 0, len(ref))
	for d, s := range ref {
		want = append(want, Hit{d, s})
	}
	slices.SortFunc(want, func(a, b Hit) int {
		if a.Score != b.Score {
			if a.Score > b.Score {
				return -1
			}
			return 1
		}
		return int(a.Doc) - int(b.Doc)
	})
	if len(want) > k {
		want = want[:k]
	}
	if len(got) != len(want) {
		tb.Fatalf("got %d hits, want %d", len(got), len(want))
	}
	for i, h := range got {
		if !relClose(h.Score, ref[h.Doc], 1e-12) || !relClose(h.Score, want[i].Score, 1e-12) {
			tb.Fatalf("rank %d: doc %d score %v; reference doc score %v, rank score %v",
				i, h.Doc, h.Score, ref[h.Doc], want[i].Score)
		}
		if i > 0 && worse(got[i-1], h) {
			tb.Fatalf("ranks %d and %d out of order: %v, %v", i-1, i, got[i-1], h)
		}
	}
}

// randDoc makes up to nf fields of random words from a skewed vocabulary, so
// some terms are in most documents and some in few.
func randDoc(r *rand.Rand, nf, vocab int) [][]string {
	fields := make([][]string, nf)
	for f := range fields {
		n := r.Intn(8)
		for range n {
			// Squaring a uniform variate skews towards low term numbers.
			u := r.Float64()
			fields[f] = append(fields[f], "w"+strconv.Itoa(int(u*u*float64(vocab))))
		}
	}
	return fields
}

func randQuery(r *rand.Rand, vocab int) []string {
	q := make([]string, 1+r.Intn(4))
	for i := range q {
		q[i] = "w" + strconv.Itoa(r.Intn(vocab+3)) // a few terms are absent
	}
	return q
}

func TestSearchMatchesReference(t *testing.T) {
	for _, idf := range []IDF{IDFLucene, IDFRobertson} {
		t.Run(idf.String(), func(t *testing.T) {
			r := rand.New(rand.NewSource(int64(idf) + 7))
			p := Params{K1: 1.5, B: 0.6, FieldWeights: []float64{3, 0.5, 1}, IDF: idf}
			ix, ref := New(p), newRef(p)
			for d := range uint32(400) {
				fields := randDoc(r, 3, 60)
				ix.Add(d, fields)
				ref.docs[d] = fields
			}
			for i := range 300 {
				q, k := randQuery(r, 60), 1+r.Intn(20)
				var allow *docset.Set
				if i%2 == 1 {
					allow = docset.New(400)
					for d := range uint32(400) {
						if r.Intn(1+i%7) == 0 {
							allow.Add(d)
						}
					}
				}
				checkRef(t, ix.Search(q, allow, k), ref.scores(q, allow), k)
				checkPathsAgree(t, ix, q, allow, k)
			}
		})
	}
}

// checkPathsAgree runs every search strategy (exhaustive term-at-a-time,
// pruned term-at-a-time, document-at-a-time) and requires identical results.
// maskAllow is a fuzz target's allow-list over docs 0..n-1: none when m is
// a multiple of 3, else the docs d whose bit d%8 is set in m.
func maskAllow(m int, n uint32) *docset.Set {
	if m%3 == 0 {
		return nil
	}
	allow := docset.New(int(n))
	for d := range n {
		if m&(1<<(d%8)) != 0 {
			allow.Add(d)
		}
	}
	return allow
}

func checkPathsAgree(tb testing.TB, ix *Index, q []string, allow *docset.Set, k int) {
	tb.Helper()
	if ix.n == 0 || k <= 0 {
		return
	}
	qts, _ := ix.resolve(q, nil, ix.n, ix.wholeDF)
	sc := newScorer(&ix.p, ix.avgdl())
	all := allow
	if all == nil {
		all = docset.New(len(ix.present))
		for d := range ix.present {
			all.Add(uint32(d))
		}
	}
	full := ix.searchPostings(qts, sc, allow, k, false)
	pruned := ix.searchPostings(qts, sc, allow, k, true)
	direct := ix.searchAllowed(qts, sc, all, k)
	if !slices.Equal(full, pruned) || !slices.Equal(full, direct) {
		tb.Fatalf("query %q k %d: postings %v, pruned %v, direct %v", q, k, full, pruned, direct)
	}
}

func TestFilterSmallScopeInLargeIndex(t *testing.T) {
	ix := New(DefaultParams(3))
	allow := docset.New(10000)
	scope := map[uint32]bool{17: true, 2048: true, 5000: true, 7777: true, 9999: true}
	for d := range uint32(10000) {
		text := []string{"common", "match", "match", "match"} // outsiders score higher
		if scope[d] {
			text = []string{"match", "filler", "filler", "filler", "filler"}
			allow.Add(d)
		}
		ix.Add(d, [][]string{nil, nil, text})
	}
	allow.Add(3) // in scope but matches nothing: must not appear
	ix.Remove(3)
	tests := []struct {
		name  string
		allow *docset.Set
		k     int
		want  []uint32
	}{
		{"scope of five, k 10", allow, 10, []uint32{17, 2048, 5000, 7777, 9999}},
		{"scope of five, k 3", allow, 3, []uint32{17, 2048, 5000}},
		{"empty scope", docset.New(0), 10, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := ix.Search([]string{"match"}, tc.allow, tc.k)
			var docs []uint32
			for _, h := range got {
				docs = append(docs, h.Doc)
			}
			if !slices.Equal(docs, tc.want) {
				t.Errorf("docs = %v, want %v", docs, tc.want)
			}
			checkPathsAgree(t, ix, []string{"match"}, tc.allow, tc.k)
		})
	}
}

func TestRemoveReAddEquivalence(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	p := Params{K1: 1.2, B: 0.75, FieldWeights: []float64{2, 1, 0.25}, IDF: IDFRobertson}
	churned := New(p)
	live := map[uint32][][]string{}
	for range 5000 {
		d := uint32(r.Intn(300))
		if r.Intn(3) == 0 {
			churned.Remove(d)
			delete(live, d)
			continue
		}
		fields := randDoc(r, 3, 80)
		churned.Add(d, fields)
		live[d] = fields
	}
	fresh := New(p)
	for d := range uint32(300) {
		if f, ok := live[d]; ok {
			fresh.Add(d, f)
		}
	}
	if churned.Len() != fresh.Len() || churned.totalLen != fresh.totalLen {
		t.Fatalf("Len %d/%d, total length %d/%d", churned.Len(), fresh.Len(), churned.totalLen, fresh.totalLen)
	}
	if churned.terms.n != fresh.terms.n || churned.terms.n+len(churned.free) != len(churned.names) {
		t.Fatalf("terms: churned %d (+%d free of %d ids), fresh %d",
			churned.terms.n, len(churned.free), len(churned.names), fresh.terms.n)
	}
	postings := func(ix *Index) (n int) {
		for _, l := range ix.lists {
			n += l.size()
		}
		return n
	}
	if a, b := postings(churned), postings(fresh); a != b {
		t.Fatalf("postings: churned %d, fresh %d", a, b)
	}
	for range 300 {
		q := randQuery(r, 80)
		a, b := churned.Search(q, nil, 25), fresh.Search(q, nil, 25)
		if !slices.Equal(a, b) {
			t.Fatalf("query %q: churned %v, fresh %v", q, a, b)
		}
		if churned.UpperBound(q) != fresh.UpperBound(q) {
			t.Fatalf("query %q: upper bounds differ", q)
		}
	}
}

// FuzzIndexOps drives random adds, removes and searches from the fuzz input
// and checks every search against the reference and across both paths.
func FuzzIndexOps(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 3, 1, 2, 0, 7, 7, 3, 0, 1})
	f.Add([]byte{0, 0, 9, 9, 9, 2, 0, 3, 9, 1, 0, 4, 4, 4, 4, 3, 4})
	f.Fuzz(func(t *testing.T, data []byte) {
		p := Params{K1: 1.2, B: 0.75, FieldWeights: []float64{2, 1}, IDF: IDF(len(data) % 2)}
		ix, ref := New(p), newRef(p)
		ix.maxCodes = []int{maxCodes, 1, 2}[len(data)%3] // small tables escape
		next := func() int {
			if len(data) == 0 {
				return 0
			}
			b := data[0]
			data = data[1:]
			return int(b)
		}
		for len(data) > 0 {
			op, arg := next()%4, next()
			switch op {
			case 0, 1:
				fields := make([][]string, 2)
				for f := range fields {
					for range next() % 5 {
						fields[f] = append(fields[f], "t"+strconv.Itoa(next()%9))
					}
				}
				ix.Add(uint32(arg%16), fields)
				ref.docs[uint32(arg%16)] = fields
			case 2:
				ix.Remove(uint32(arg % 16))
				delete(ref.docs, uint32(arg%16))
			case 3:
				q := []string{"t" + strconv.Itoa(arg%10), "t" + strconv.Itoa(next()%10)}
				allow := maskAllow(next(), 16)
				k := 1 + arg%6
				checkRef(t, ix.Search(q, allow, k), ref.scores(q, allow), k)
				checkPathsAgree(t, ix, q, allow, k)
			}
			if ix.Len() != len(ref.docs) {
				t.Fatalf("Len = %d, want %d", ix.Len(), len(ref.docs))
			}
		}
		if math.IsNaN(ix.avgdl()) {
			t.Fatal("avgdl is NaN")
		}
	})
}
