package bm25

import (
	"bytes"
	"errors"
	"maps"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"testing"

	"github.com/engram-memory/engram/internal/binenc"
	"github.com/engram-memory/engram/internal/docset"
	"github.com/engram-memory/engram/internal/mmap"
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

// TestSnapshotMapped reads a snapshot from a file with a mapper, as the
// mirror does: the postings' documents and the documents' term ids (over a
// MiB each here) are mapped, not copied, the codes (under a MiB) read; the
// loaded index equals the original, keeps equalling it as both change (the
// mapped arrays written in private pages, lists cloned as they grow), the
// file is never written, and a byte flipped inside a mapped array fails the
// checksum.
func TestSnapshotMapped(t *testing.T) {
	p := Params{K1: 1.2, B: 0.75, FieldWeights: []float64{2, 1, 0.5}, IDF: IDFLucene}
	r := rand.New(rand.NewSource(21))
	orig := New(p)
	doc := func() [][]string {
		f := make([]string, 60+r.Intn(60))
		for i := range f {
			f[i] = "t" + strconv.Itoa(r.Intn(5000))
		}
		return [][]string{f, {"shared"}, nil}
	}
	for d := range uint32(4000) {
		orig.Add(d, doc())
	}
	var buf bytes.Buffer
	w := binenc.NewWriter(&buf)
	orig.WriteSnapshot(w)
	if err := w.Finish(); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	path := filepath.Join(t.TempDir(), "snap")
	read := func(b []byte) (*Index, error) {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		rd := binenc.NewReader(f, int64(len(b)))
		rd.SetMapper(mmap.Mapper(f))
		ix := New(p)
		if err := ix.ReadSnapshot(rd); err != nil {
			return nil, err
		}
		return ix, rd.Verify()
	}
	got, err := read(good)
	if err != nil {
		t.Fatal(err)
	}
	sameStructure(t, orig, got)
	if runtime.GOOS == "linux" {
		if m := got.MappedBytes(); m < 2<<20 || len(got.maps) < 2 {
			t.Fatalf("%d bytes mapped in %d arrays, want at least the documents and the term ids (over 2 MiB)", m, len(got.maps))
		}
		if heap, all := got.Bytes(), orig.Bytes(); heap+got.MappedBytes() > all+all/10 || heap > all/2 {
			t.Fatalf("heap %d + mapped %d, the original's heap %d", heap, got.MappedBytes(), all)
		}
	}
	check := func(when string) {
		for range 200 {
			q := []string{"t" + strconv.Itoa(r.Intn(5000)), "t" + strconv.Itoa(r.Intn(5000)), "shared"}
			if a, b := got.Search(q, nil, 10), orig.Search(q, nil, 10); !slices.Equal(a, b) {
				t.Fatalf("%s, query %q: loaded %v, original %v", when, q, a, b)
			}
		}
	}
	check("as loaded")
	seed := r.Int63()
	for _, ix := range []*Index{orig, got} {
		r = rand.New(rand.NewSource(seed))
		for range 3000 {
			d := uint32(r.Intn(5000))
			if r.Intn(3) == 0 {
				ix.Remove(d)
			} else {
				ix.Add(d, doc())
			}
		}
	}
	check("after changes")
	sameStructure(t, orig, got)
	if again, _ := os.ReadFile(path); !bytes.Equal(again, good) {
		t.Fatal("changing the loaded index changed the file")
	}
	// A byte flipped in the middle of each mapped array.
	spans := 0
	for i := 0; i+binenc.MapAlign < len(good); i += binenc.MapAlign {
		bad := bytes.Clone(good)
		bad[i+binenc.MapAlign/2] ^= 0x10
		if _, err := read(bad); !errors.Is(err, binenc.ErrCorrupt) {
			t.Fatalf("byte %d flipped: %v, want ErrCorrupt", i+binenc.MapAlign/2, err)
		}
		spans++
	}
	if spans < 32 {
		t.Fatalf("only %d flips", spans)
	}
}
