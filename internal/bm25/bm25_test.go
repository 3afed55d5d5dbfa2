package bm25

import (
	"fmt"
	"math"
	"math/rand"
	"slices"
	"strconv"
	"sync"
	"testing"
)

// handCorpus is a 3-document corpus with fields (name, text) weighted (2, 1),
// k1 = 1.2, b = 0.75, Lucene IDF. Worked by hand:
//
//	doc 0: name "red apple", text "apple pie"          dl 4
//	doc 1: name "",          text "green apple tree"   dl 3
//	doc 2: name "pie",       text "cherry pie recipe easy"  dl 5
//
// so N = 3, Σdl = 12, avgdl = 4.
//
//	idf(n=2) = ln(1 + (3−2+0.5)/(2+0.5)) = ln 1.6   = 0.470003629245736
//	idf(n=1) = ln(1 + (3−1+0.5)/(1+0.5)) = ln 8/3   = 0.980829253011726
//	norm(dl) = 1 − b + b·dl/avgdl: dl 3 → 0.8125, dl 4 → 1, dl 5 → 1.1875
//
//	"apple" doc 0: tf = 2·1 + 1·1 = 3 → 0.4700·3·2.2/(3 + 1.2·1)      = 0.738577131671870
//	"apple" doc 1: tf = 1             → 0.4700·1·2.2/(1 + 1.2·0.8125) = 0.523548346501579
//	"pie"   doc 0: tf = 1             → 0.4700·2.2/2.2                = 0.470003629245736
//	"pie"   doc 2: tf = 2·1 + 1·1 = 3 → 0.4700·3·2.2/(3 + 1.2·1.1875) = 0.701022362264826
//	"cherry" doc 2: tf = 1            → 0.9808·2.2/(1 + 1.425)        = 0.889824476959092
func handCorpus(tb testing.TB) *Index {
	tb.Helper()
	p := DefaultParams(2)
	p.FieldWeights = []float64{2, 1}
	ix := New(p)
	ix.Add(0, [][]string{{"red", "apple"}, {"apple", "pie"}})
	ix.Add(1, [][]string{nil, {"green", "apple", "tree"}})
	ix.Add(2, [][]string{{"pie"}, {"cherry", "pie", "recipe", "easy"}})
	return ix
}

func TestHandWorkedLucene(t *testing.T) {
	ix := handCorpus(t)
	tests := []struct {
		name  string
		query []string
		want  []Hit
	}{
		{"single term", []string{"apple"}, []Hit{{0, 0.738577131671870}, {1, 0.523548346501579}}},
		{"name weight", []string{"pie"}, []Hit{{2, 0.701022362264826}, {0, 0.470003629245736}}},
		{"two terms", []string{"cherry", "apple"}, []Hit{{2, 0.889824476959092}, {0, 0.738577131671870}, {1, 0.523548346501579}}},
		{"repeated term counts twice", []string{"apple", "apple"}, []Hit{{0, 2 * 0.738577131671870}, {1, 2 * 0.523548346501579}}},
		{"unknown term ignored", []string{"zebra", "cherry"}, []Hit{{2, 0.889824476959092}}},
		{"no known terms", []string{"zebra"}, nil},
		{"empty query", nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assertHits(t, ix.Search(tc.query, nil, 10), tc.want, 1e-12)
		})
	}
}

func TestUpperBoundAndScore(t *testing.T) {
	ix := handCorpus(t)
	ub := ix.UpperBound([]string{"cherry", "apple", "zebra"})
	if want := (0.980829253011726 + 0.470003629245736) * 2.2; math.Abs(ub-want) > 1e-12 {
		t.Errorf("UpperBound = %v, want %v", ub, want)
	}
	for _, h := range ix.Search([]string{"cherry", "apple", "pie"}, nil, 10) {
		if h.Score > ub+ix.UpperBound([]string{"pie"}) {
			t.Errorf("doc %d scores %v above the bound", h.Doc, h.Score)
		}
		s, ok := ix.Score(h.Doc, []string{"cherry", "apple", "pie"})
		if !ok || s != h.Score {
			t.Errorf("Score(%d) = %v, %v; Search said %v", h.Doc, s, ok, h.Score)
		}
	}
	if _, ok := ix.Score(7, []string{"apple"}); ok {
		t.Error("Score of an absent doc reported present")
	}
	if got := ix.UpperBound([]string{"zebra"}); got != 0 {
		t.Errorf("UpperBound of unknown term = %v, want 0", got)
	}
}

func TestSearchEdges(t *testing.T) {
	tests := []struct {
		name  string
		build func() *Index
		query []string
		k     int
		want  []Hit
	}{
		{"empty index", func() *Index { return New(DefaultParams(1)) }, []string{"a"}, 5, nil},
		{"k zero", func() *Index { return handCorpus(t) }, []string{"apple"}, 0, nil},
		{"k negative", func() *Index { return handCorpus(t) }, []string{"apple"}, -3, nil},
		{"k one", func() *Index { return handCorpus(t) }, []string{"apple"}, 1, []Hit{{0, 0.738577131671870}}},
		{"ties by doc ascending", func() *Index {
			ix := New(DefaultParams(1))
			for _, d := range []uint32{9, 3, 5, 1} {
				ix.Add(d, [][]string{{"x", "y"}})
			}
			ix.Add(0, [][]string{{"z"}})
			return ix
		}, []string{"x"}, 3, []Hit{{1, 0}, {3, 0}, {5, 0}}},
		{"zero-weight field never matches", func() *Index {
			p := DefaultParams(2)
			p.FieldWeights = []float64{0, 1}
			ix := New(p)
			ix.Add(0, [][]string{{"hidden"}, {"seen"}})
			return ix
		}, []string{"hidden"}, 5, nil},
		{"extra fields ignored", func() *Index {
			ix := New(DefaultParams(1))
			ix.Add(0, [][]string{{"a"}, {"b"}})
			return ix
		}, []string{"b"}, 5, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.build().Search(tc.query, nil, tc.k)
			if tc.name == "ties by doc ascending" {
				// Scores are equal; only the order is under test.
				for i := range got {
					got[i].Score = 0
				}
			}
			assertHits(t, got, tc.want, 1e-12)
		})
	}
}

func TestParamsSanitize(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	tests := []struct {
		name string
		in   Params
		want Params
	}{
		{"defaults kept", DefaultParams(3), Params{K1: 1.2, B: 0.75, FieldWeights: []float64{1, 1, 1}}},
		{"negative k1", Params{K1: -1, B: 0.5}, Params{K1: DefaultK1, B: 0.5, FieldWeights: []float64{}}},
		{"nan values", Params{K1: nan, B: nan}, Params{K1: DefaultK1, B: DefaultB, FieldWeights: []float64{}}},
		{"b clamped high", Params{K1: 2, B: 3}, Params{K1: 2, B: 1, FieldWeights: []float64{}}},
		{"b clamped low", Params{K1: 0, B: -1}, Params{K1: 0, B: 0, FieldWeights: []float64{}}},
		{"bad weights fixed", Params{K1: 1, B: 1, FieldWeights: []float64{-2, nan, inf, 0.5, 1e-10, 1e10}},
			Params{K1: 1, B: 1, FieldWeights: []float64{0, 0, 1e9, 0.5, 0, 1e9}}},
		{"huge k1 capped", Params{K1: 1e300, B: 1}, Params{K1: 1000, B: 1, FieldWeights: []float64{}}},
		{"unknown idf", Params{K1: 1, B: 1, IDF: 42}, Params{K1: 1, B: 1, FieldWeights: []float64{}}},
		{"robertson kept", Params{K1: 1, B: 1, IDF: IDFRobertson}, Params{K1: 1, B: 1, FieldWeights: []float64{}, IDF: IDFRobertson}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := New(tc.in).Params()
			if got.K1 != tc.want.K1 || got.B != tc.want.B || got.IDF != tc.want.IDF ||
				!slices.Equal(got.FieldWeights, tc.want.FieldWeights) {
				t.Errorf("Params() = %+v, want %+v", got, tc.want)
			}
		})
	}
	if p := DefaultParams(0); len(p.FieldWeights) != 1 {
		t.Errorf("DefaultParams(0) has %d fields, want 1", len(p.FieldWeights))
	}
}

func TestIDF(t *testing.T) {
	tests := []struct {
		name string
		idf  IDF
		N, n int
		want float64
	}{
		{"lucene rare", IDFLucene, 100, 1, math.Log(1 + 99.5/1.5)},
		{"lucene everywhere stays positive", IDFLucene, 10, 10, math.Log(1 + 0.5/10.5)},
		{"robertson rare", IDFRobertson, 100, 1, math.Log(99.5 / 1.5)},
		{"robertson half is floored", IDFRobertson, 10, 5, 1e-6},
		{"robertson common is floored", IDFRobertson, 10, 9, 1e-6},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := Params{IDF: tc.idf}
			if got := p.idf(tc.N, tc.n); math.Abs(got-tc.want) > 1e-15 {
				t.Errorf("idf(%d, %d) = %v, want %v", tc.N, tc.n, got, tc.want)
			}
		})
	}
	if IDFLucene.String() != "lucene" || IDFRobertson.String() != "robertson" || IDF(9).String() != "unknown" {
		t.Error("IDF.String names wrong")
	}
}

func TestRemoveAndReuse(t *testing.T) {
	ix := handCorpus(t)
	ix.Remove(0)
	ix.Remove(0)  // absent: no-op
	ix.Remove(99) // never added: no-op
	if ix.Len() != 2 {
		t.Fatalf("Len = %d, want 2", ix.Len())
	}
	if _, ok := ix.terms.find(ix.names, "red"); ok {
		t.Error(`term "red" survived the removal of its only document`)
	}
	ix.Add(0, [][]string{{"red"}, nil}) // reuse the number
	if got := ix.Search([]string{"red"}, nil, 5); len(got) != 1 || got[0].Doc != 0 {
		t.Errorf("after reuse, red → %v", got)
	}
	ix.Add(0, [][]string{{"blue"}, nil}) // replace
	if got := ix.Search([]string{"red"}, nil, 5); got != nil {
		t.Errorf("replaced doc still matches its old term: %v", got)
	}
	if ix.Len() != 3 {
		t.Errorf("Len = %d, want 3", ix.Len())
	}
}

// assertHits compares hit lists by doc and by score within rel relative error.
func assertHits(tb testing.TB, got, want []Hit, rel float64) {
	tb.Helper()
	if len(got) != len(want) {
		tb.Fatalf("got %d hits %v, want %d %v", len(got), got, len(want), want)
	}
	for i := range got {
		if got[i].Doc != want[i].Doc || !relClose(got[i].Score, want[i].Score, rel) {
			tb.Fatalf("hit %d = %+v, want %+v (all: %v)", i, got[i], want[i], got)
		}
	}
}

// relClose reports whether a and b agree within rel relative error.
func relClose(a, b, rel float64) bool {
	return math.Abs(a-b) <= rel*math.Max(math.Abs(a), math.Abs(b))
}

func TestRemoveShrinksLists(t *testing.T) {
	ix := New(DefaultParams(1))
	for d := range uint32(1000) {
		ix.Add(d, [][]string{{"shared", "w" + strconv.Itoa(int(d))}})
	}
	for d := range uint32(990) {
		ix.Remove(d)
	}
	id, _ := ix.terms.find(ix.names, "shared")
	l := ix.lists[id]
	if len(l.docs) != 10 || cap(l.docs) > 64 {
		t.Errorf("shared list: len %d cap %d, want 10 and a small capacity", len(l.docs), cap(l.docs))
	}
	if ix.terms.n != 11 || len(ix.free) != 990 {
		t.Errorf("terms %d, free ids %d; want 11 and 990", ix.terms.n, len(ix.free))
	}
	got := ix.Search([]string{"shared"}, nil, 20)
	if len(got) != 10 || got[0].Doc != 990 || got[9].Doc != 999 {
		t.Errorf("after removals: %v", got)
	}
}

func TestConcurrentSearch(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	ix := New(DefaultParams(3))
	for d := range uint32(2000) {
		ix.Add(d, randDoc(r, 3, 200))
	}
	queries := make([][]string, 64)
	want := make([][]Hit, len(queries))
	for i := range queries {
		queries[i] = randQuery(r, 200)
		want[i] = ix.Search(queries[i], nil, 10)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				j := (i + g) % len(queries)
				if got := ix.Search(queries[j], nil, 10); !slices.Equal(got, want[j]) {
					errs <- fmt.Sprintf("query %q: got %v, want %v", queries[j], got, want[j])
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
