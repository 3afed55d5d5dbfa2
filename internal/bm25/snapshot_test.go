package bm25

import (
	"bytes"
	"errors"
	"maps"
	"math/rand"
	"slices"
	"testing"

	"github.com/engram-memory/engram/internal/binenc"
	"github.com/engram-memory/engram/internal/docset"
)

// roundTrip writes ix and reads it back into a new index with params p.
func roundTrip(tb testing.TB, ix *Index, p Params) (*Index, error) {
	tb.Helper()
	var buf bytes.Buffer
	w := binenc.NewWriter(&buf)
	ix.WriteSnapshot(w)
	if err := w.Finish(); err != nil {
		tb.Fatal(err)
	}
	r := binenc.NewReader(&buf, int64(buf.Len()))
	got := New(p)
	if err := got.ReadSnapshot(r); err != nil {
		return nil, err
	}
	return got, r.Verify()
}

// TestSnapshotRoundTrip churns an index (a zero-weight field gives documents
// terms without postings), round-trips it, and checks that the copy matches
// the original structure and the brute-force reference on every query, and
// keeps matching the original as both go on changing.
func TestSnapshotRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    Params
	}{
		{"lucene", Params{K1: 1.2, B: 0.75, FieldWeights: []float64{2, 1, 0.25}, IDF: IDFLucene}},
		{"zero weight field", Params{K1: 1.5, B: 0.5, FieldWeights: []float64{1, 0, 3}, IDF: IDFRobertson}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewSource(11))
			orig, ref := New(tc.p), newRef(tc.p)
			apply := func(ix *Index, track bool) {
				for range 2000 {
					d := uint32(r.Intn(400))
					if r.Intn(3) == 0 {
						ix.Remove(d)
						if track {
							delete(ref.docs, d)
						}
						continue
					}
					fields := randDoc(r, 3, 120)
					ix.Add(d, fields)
					if track {
						ref.docs[d] = fields
					}
				}
			}
			apply(orig, true)
			got, err := roundTrip(t, orig, tc.p)
			if err != nil {
				t.Fatal(err)
			}
			sameStructure(t, orig, got)
			allow := &docset.Set{}
			for d := uint32(0); d < 400; d += 3 {
				allow.Add(d)
			}
			for i := range 300 {
				q := randQuery(r, 120)
				set := []*docset.Set{nil, allow}[i%2]
				a := got.Search(q, set, 20)
				if b := orig.Search(q, set, 20); !slices.Equal(a, b) {
					t.Fatalf("query %q: loaded %v, original %v", q, a, b)
				}
				if got.UpperBound(q) != orig.UpperBound(q) {
					t.Fatalf("query %q: upper bounds differ", q)
				}
				checkRef(t, a, ref.scores(q, set), 20)
			}
			// Both go on changing the same way and stay equal.
			seed := r.Int63()
			r = rand.New(rand.NewSource(seed))
			apply(orig, false)
			r = rand.New(rand.NewSource(seed))
			apply(got, false)
			for range 100 {
				q := randQuery(r, 120)
				if a, b := got.Search(q, nil, 20), orig.Search(q, nil, 20); !slices.Equal(a, b) {
					t.Fatalf("after more changes, query %q: loaded %v, original %v", q, a, b)
				}
			}
		})
	}
}

func TestSnapshotRejects(t *testing.T) {
	p := Params{K1: 1.2, B: 0.75, FieldWeights: []float64{1, 1, 1}}
	ix := New(p)
	r := rand.New(rand.NewSource(5))
	for d := range uint32(50) {
		ix.Add(d, randDoc(r, 3, 30))
	}
	other := p
	other.K1 = 2
	if _, err := roundTrip(t, ix, other); !errors.Is(err, binenc.ErrCorrupt) {
		t.Fatalf("other parameters: got %v, want ErrCorrupt", err)
	}
	full := New(p)
	full.Add(0, [][]string{{"x"}})
	var buf bytes.Buffer
	w := binenc.NewWriter(&buf)
	ix.WriteSnapshot(w)
	w.Finish()
	if err := full.ReadSnapshot(binenc.NewReader(&buf, int64(buf.Len()))); err == nil {
		t.Fatal("read into a non-empty index: no error")
	}
}

// sameStructure checks that b holds exactly a's index (nil and empty slices alike).
func sameStructure(tb testing.TB, a, b *Index) {
	tb.Helper()
	ok := slices.Equal(a.names, b.names) && slices.Equal(a.free, b.free) &&
		slices.Equal(a.docLen, b.docLen) && a.n == b.n && a.totalLen == b.totalLen &&
		a.terms.n == b.terms.n && len(a.lists) == len(b.lists) && len(a.docTerms) == len(b.docTerms) &&
		a.tfTab == b.tfTab && a.nCodes == b.nCodes && maps.Equal(a.tfCode, b.tfCode) && maps.Equal(a.bigTF, b.bigTF)
	for i := 0; ok && i < len(a.lists); i++ {
		ad, ac := a.lists[i].flat()
		bd, bc := b.lists[i].flat()
		ok = a.lists[i].df == b.lists[i].df && slices.Equal(ad, bd) && slices.Equal(ac, bc)
	}
	for d := 0; ok && d < len(a.docTerms); d++ {
		ok = slices.Equal(a.docTerms[d], b.docTerms[d]) && a.present[d] == b.present[d]
	}
	if !ok {
		tb.Fatal("the loaded index differs from the one written")
	}
}
