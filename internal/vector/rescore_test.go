package vector

import (
	"math/rand"
	"runtime"
	"slices"
	"testing"

	"github.com/engram-memory/engram/internal/docset"
	"github.com/engram-memory/engram/internal/synth"
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

// TestCascadeReadsNearTies measures what the residual codes are for: on the
// synthetic bench corpus (clustered 512-d vectors, short text queries, top
// scores a few 1e-4 apart), mapped from a snapshot, an exact search screens
// the rows with the int8 codes and then reads in float32 only the hits and
// the near ties at the cut, not every row the screen left. The hits are those
// of the same index on the heap.
func TestCascadeReadsNearTies(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the matrices are mapped on Linux only")
	}
	const n, dim, k = 20_000, 512, 10
	// Where the int8 kernel is the portable one (purego), searches skip
	// the screen; this test is about what follows it.
	defer func(a bool) { screenAlways = a }(screenAlways)
	screenAlways = true
	corpus := synth.New(synth.Config{Seed: synth.DefaultSeed, Dim: dim})
	heap := New(dim)
	for i := range n {
		m := corpus.Memory(i)
		if err := heap.Set(uint32(i), corpus.Vector(m.Name+" "+m.Description+" "+m.Text)); err != nil {
			t.Fatal(err)
		}
	}
	mapped, err := readFile(t, snapshotBytes(t, heap))
	if err != nil {
		t.Fatal(err)
	}
	if !mapped.mappedData() {
		t.Fatal("the float32 rows were not mapped")
	}
	var candidates, read, searches int
	defer func() { onCascade = nil }()
	const queries = 30
	for i := range queries {
		text, _ := corpus.Query(i+1, n)
		q := corpus.Vector(text)
		want := heap.Search(q, nil, k)
		onCascade = func(c, r int) { candidates, read, searches = candidates+c, read+r, searches+1 }
		got := mapped.Search(q, nil, k)
		onCascade = nil
		if !slices.Equal(got, want) {
			t.Fatalf("query %d: mapped %v, on the heap %v", i, got, want)
		}
	}
	if searches != queries {
		t.Fatalf("%d of %d searches went through the screen", searches, queries)
	}
	t.Logf("per search: %d rows left by the int8 screen, %d read in float32 (k %d)", candidates/queries, read/queries, k)
	if read > 2*k*queries || read*4 > candidates {
		t.Fatalf("read %d float32 rows of %d screened candidates over %d searches: the refinement keeps too many", read, candidates, queries)
	}
}
