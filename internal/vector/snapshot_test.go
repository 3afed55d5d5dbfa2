package vector

import (
	"bytes"
	"errors"
	"math/rand"
	"slices"
	"testing"

	"github.com/engram-memory/engram/internal/binenc"
	"github.com/engram-memory/engram/internal/docset"
)

func snapshotBytes(tb testing.TB, ix *Index) []byte {
	tb.Helper()
	var buf bytes.Buffer
	w := binenc.NewWriter(&buf)
	ix.WriteSnapshot(w)
	if err := w.Finish(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

func readBytes(b []byte) (*Index, error) {
	r := binenc.NewReader(bytes.NewReader(b), int64(len(b)))
	ix, err := ReadSnapshot(r, 1<<20)
	if err != nil {
		return nil, err
	}
	return ix, r.Verify()
}

// TestSnapshotRoundTrip checks a loaded index against the original and the
// brute-force reference, before and after further changes to both.
func TestSnapshotRoundTrip(t *testing.T) {
	r := rand.New(rand.NewSource(21))
	const dim = 24
	orig, live := fixture(t, r, 500, dim, 0.2)
	got, err := readBytes(snapshotBytes(t, orig))
	if err != nil {
		t.Fatal(err)
	}
	if got.Len() != orig.Len() || got.Dim() != dim || !slices.Equal(slices.Collect(got.Docs()), slices.Collect(orig.Docs())) {
		t.Fatalf("loaded %d×%d, want %d×%d", got.Len(), got.Dim(), orig.Len(), dim)
	}
	allow := &docset.Set{}
	for d := uint32(0); d < 1000; d += 2 {
		allow.Add(d)
	}
	check := func(stage string) {
		t.Helper()
		for i := range 100 {
			q := randVec(r, dim)
			set := []*docset.Set{nil, allow}[i%2]
			a, b := got.Search(q, set, 10), orig.Search(q, set, 10)
			if !slices.Equal(a, b) {
				t.Fatalf("%s: loaded %v, original %v", stage, a, b)
			}
			if want := bruteForce(live, q, set, 10); !sameHits(a, want) {
				t.Fatalf("%s: loaded %v, brute force %v", stage, a, want)
			}
		}
	}
	check("after load")
	for range 200 {
		d := uint32(r.Intn(1000))
		if r.Intn(2) == 0 {
			orig.Remove(d)
			got.Remove(d)
			delete(live, d)
			continue
		}
		v := randVec(r, dim)
		if orig.Set(d, v) != nil || got.Set(d, v) != nil {
			t.Fatal("set failed")
		}
		live[d] = v
	}
	check("after changes")
}

// sameHits compares hit lists by document, with cosines equal to rounding.
func sameHits(a, b []Hit) bool {
	return slices.EqualFunc(a, b, func(x, y Hit) bool {
		d := x.Cosine - y.Cosine
		return x.Doc == y.Doc && d < 1e-5 && d > -1e-5
	})
}

func TestSnapshotCorrupt(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	ix, _ := fixture(t, r, 40, 8, 0)
	good := snapshotBytes(t, ix)
	var dup bytes.Buffer
	w := binenc.NewWriter(&dup)
	w.Uint32(snapshotVersion)
	w.Uint64(1)
	w.Uint32s([]uint32{3, 3}) // one document in two rows
	w.Float32s([]float32{1, 1})
	w.Float32s([]float32{0, 0})
	w.Float32s([]float32{1, 1})
	w.Int8s([]int8{127, 127})
	w.Finish()
	// One row for document 2³¹-2: an 8 GB doc→row table if trusted.
	var huge bytes.Buffer
	w = binenc.NewWriter(&huge)
	w.Uint32(snapshotVersion)
	w.Uint64(1)
	w.Uint32s([]uint32{1<<31 - 2})
	w.Float32s([]float32{1})
	w.Float32s([]float32{0})
	w.Float32s([]float32{1})
	w.Int8s([]int8{127})
	w.Finish()
	for _, c := range []struct {
		name string
		in   []byte
	}{
		{"truncated", good[:len(good)/2]},
		{"duplicate document", dup.Bytes()},
		{"document number beyond the index", huge.Bytes()},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := readBytes(c.in); !errors.Is(err, binenc.ErrCorrupt) {
				t.Fatalf("got %v, want ErrCorrupt", err)
			}
		})
	}
}
