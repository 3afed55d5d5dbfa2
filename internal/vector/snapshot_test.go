package vector

import (
	"bytes"
	"errors"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"github.com/engram-memory/engram/internal/binenc"
	"github.com/engram-memory/engram/internal/docset"
	"github.com/engram-memory/engram/internal/mmap"
)

func snapshotBytes(tb testing.TB, ix *Index) []byte {
	tb.Helper()
	var buf bytes.Buffer
	w := binenc.NewWriter(&buf)
	ix.WriteSnapshot(w)
	w.EndSection()
	if err := w.FinishSections(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// readSections reads an index from the two sections WriteSnapshot wrote,
// verifying the second as the caller of ReadSnapshot must.
func readSections(secs *binenc.Sections) (*Index, error) {
	mat, r := secs.Next(), secs.Next()
	ix, err := ReadSnapshot(mat, r, 1<<20)
	if err != nil {
		return nil, err
	}
	if err := r.Verify(); err != nil {
		return nil, err
	}
	return ix, secs.Done()
}

func readBytes(b []byte) (*Index, error) {
	secs, err := binenc.OpenSections(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return nil, err
	}
	return readSections(secs)
}

// readFile writes b to a file and reads it back as the mirror does, with the
// file given to the reader so the matrices may be mapped.
func readFile(tb testing.TB, b []byte) (*Index, error) {
	path := filepath.Join(tb.TempDir(), "snap")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		tb.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	secs, err := binenc.OpenSections(f, int64(len(b)))
	if err != nil {
		return nil, err
	}
	secs.SetMapper(mmap.Mapper(f))
	ix, err := readSections(secs)
	if err != nil {
		return nil, err
	}
	if again, _ := os.ReadFile(path); !bytes.Equal(again, b) {
		tb.Fatal("reading changed the file")
	}
	return ix, nil
}

// TestSnapshotRoundTrip checks a loaded index against the original and the
// brute-force reference, before and after further changes to both: read into
// memory, and mapped from a file (matrices of a MiB or more), where changes
// write to private copies of the file's pages and additions go first into
// the mapping's spare room, then past it onto the heap.
func TestSnapshotRoundTrip(t *testing.T) {
	cases := []struct {
		name     string
		n, dim   int
		file     bool
		grow     int // rows added after the changes
		wantMaps bool
	}{
		{"in memory", 500, 24, false, 0, false},
		{"small, from a file", 500, 24, true, 0, false},
		{"mapped", 4500, 256, true, 12000, runtime.GOOS == "linux"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := rand.New(rand.NewSource(21))
			dim := c.dim
			orig, live := fixture(t, r, c.n, dim, 0.2)
			snap := snapshotBytes(t, orig)
			var got *Index
			var err error
			if c.file {
				got, err = readFile(t, snap)
			} else {
				got, err = readBytes(snap)
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, mapped := got.Bytes(); (mapped > 0) != c.wantMaps {
				t.Fatalf("mapped %d bytes, want mapping %t", mapped, c.wantMaps)
			}
			if got.Len() != orig.Len() || got.Dim() != dim || !slices.Equal(slices.Collect(got.Docs()), slices.Collect(orig.Docs())) {
				t.Fatalf("loaded %d×%d, want %d×%d", got.Len(), got.Dim(), orig.Len(), dim)
			}
			allow := &docset.Set{}
			for d := uint32(0); d < uint32(2*c.n); d += 2 {
				allow.Add(d)
			}
			check := func(stage string) {
				t.Helper()
				// Screened scans too (with mapped rows: screened, refined with
				// the residual codes, then float32 for the near ties only).
				defer func(old int) { quantMinFloats = old }(quantMinFloats)
				for i := range 200 {
					quantMinFloats = []int{quantMinFloats, 0}[i/100]
					q := randVec(r, dim)
					set := []*docset.Set{nil, allow}[i%2]
					a, b := got.Search(q, set, 10), orig.Search(q, set, 10)
					if !slices.Equal(a, b) {
						t.Fatalf("%s: loaded %v, original %v", stage, a, b)
					}
					if want := bruteForce(live, q, set, 10); !sameHits(a, want) {
						t.Fatalf("%s: loaded %v, brute force %v", stage, a, want)
					}
					// The sketches came through: the approximate path too.
					a, b = got.SearchSketch(q, set, 10, 50), orig.SearchSketch(q, set, 10, 50)
					if !slices.Equal(a, b) {
						t.Fatalf("%s: loaded sketch search %v, original %v", stage, a, b)
					}
					if i%100 == 0 {
						if want := newSketchRef(got).search(q, set, 10, 50); !slices.Equal(a, want) {
							t.Fatalf("%s: loaded sketch search %v, reference %v", stage, a, want)
						}
					}
					docs := slices.Collect(got.Docs())[:min(got.Len(), 300)]
					if a, b := got.Rescore(q, docs, 10), orig.Rescore(q, docs, 10); !slices.Equal(a, b) {
						t.Fatalf("%s: rescored %v, original %v", stage, a, b)
					}
					if a, b := got.Rescore(q, docs[:20], 5), orig.Rescore(q, docs[:20], 5); !slices.Equal(a, b) {
						t.Fatalf("%s: rescored a short list %v, original %v", stage, a, b)
					}
				}
				// Rows read from the file (unchanged since the load) and from
				// memory read the same, and so do the snapshots written again.
				fromFile := 0
				for d := range orig.Docs() {
					if r, _ := got.row(d); got.fromFile(r) {
						fromFile++
					}
					if a, b := got.Vector(d), orig.Vector(d); !slices.Equal(a, b) {
						t.Fatalf("%s: doc %d: loaded vector %v, original %v", stage, d, a, b)
					}
				}
				if want := c.wantMaps && got.fileRows > 0 && stage != "after growing"; (fromFile > 0) != want {
					t.Fatalf("%s: %d rows read from the file, want some: %t", stage, fromFile, want)
				}
				if !bytes.Equal(snapshotBytes(t, got), snapshotBytes(t, orig)) {
					t.Fatalf("%s: the loaded index's snapshot differs from the original's", stage)
				}
				if err := got.Settle(); err != nil {
					t.Fatalf("%s: %v", stage, err)
				}
			}
			check("after load")
			for range 200 {
				d := uint32(r.Intn(2 * c.n))
				if r.Intn(2) == 0 {
					orig.Remove(d)
					got.Remove(d)
					delete(live, d)
					continue
				}
				v := randVec(r, dim)
				if r.Intn(2) == 0 {
					// The prepared path too, applied to both alike (it moves
					// a replaced row to the end, as Set does not).
					row, err := Prepare(v)
					if err != nil || orig.SetRow(d, row) != nil || got.SetRow(d, row) != nil {
						t.Fatal("set row failed")
					}
				} else if orig.Set(d, v) != nil || got.Set(d, v) != nil {
					t.Fatal("set failed")
				}
				live[d] = v
			}
			check("after changes")
			for i := range c.grow {
				d := uint32(2*c.n + 1 + i)
				v := randVec(r, dim)
				if orig.Set(d, v) != nil || got.Set(d, v) != nil {
					t.Fatal("set failed")
				}
				live[d] = v
			}
			if c.grow > 0 {
				check("after growing")
				if _, mapped := got.Bytes(); mapped != 0 || len(got.maps) != 0 {
					t.Errorf("%d bytes counted mapped, %d mappings kept after the rows outgrew them", mapped, len(got.maps))
				}
			}
		})
	}
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
