package index

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand"
	"slices"
	"testing"

	"github.com/engram-memory/engram/internal/ann"
	"github.com/engram-memory/engram/internal/binenc"
	"github.com/engram-memory/engram/internal/docset"
	"github.com/engram-memory/engram/internal/tokenize"
	"github.com/engram-memory/engram/internal/vector"
	"github.com/engram-memory/engram/memory"
)

const graphDim = 16

// vecMemory is memory i with a random vector near one of four directions.
func vecMemory(r *rand.Rand, i int) *memory.Memory {
	m := &memory.Memory{ID: fmt.Sprintf("v%05d", i), Text: "alpha", Type: []string{"fact", "note"}[i%2], Scope: map[string]string{}}
	v := make([]float32, graphDim)
	v[r.Intn(4)] = 3
	for j := range v {
		v[j] += float32(r.NormFloat64())
	}
	m.Embedding = &memory.Embedding{Model: "m", Dim: graphDim, Vector: v}
	return m
}

func graphIndex(min int) *Index {
	ix := newIndex()
	ix.SetANN(ANNOptions{GraphMin: min, Policy: ann.Policy{ExactBelow: -1, Ef: 32}})
	return ix
}

// checkGraph asserts that the model's graph exists exactly when wanted and
// covers exactly its vectors, and that graph searches return only live,
// allowed documents with a recall floor against the exact scan.
func checkGraph(t *testing.T, ix *Index, want bool, r *rand.Rand, stage string) {
	t.Helper()
	vi, g := ix.Vectors("m"), ix.Graph("m")
	if (g != nil) != want {
		t.Fatalf("%s: graph %v with %d vectors, want one: %v", stage, g != nil, vi.Len(), want)
	}
	if g == nil {
		return
	}
	if err := g.Check(vi, vi.Len()); err != nil {
		t.Fatalf("%s: %v", stage, err)
	}
	hit, total := 0, 0
	for i := range 20 {
		q := vecMemory(r, 0).Embedding.Vector
		var allow *docset.Set
		if i%2 == 1 {
			allow = ix.Allowed(&memory.Filter{Type: "fact"})
		}
		got, _ := ix.VectorSearch("m", q, allow, 10)
		want := vi.Search(q, allow, 10)
		for _, h := range got {
			if !vi.Has(h.Doc) || !allow.Has(h.Doc) {
				t.Fatalf("%s: graph returned document %d (live %v, allowed %v)", stage, h.Doc, vi.Has(h.Doc), allow.Has(h.Doc))
			}
		}
		total += len(want)
		for _, w := range want {
			if slices.ContainsFunc(got, func(h vector.Hit) bool { return h.Doc == w.Doc }) {
				hit++
			}
		}
	}
	if recall := float64(hit) / float64(total); recall < 0.9 {
		t.Fatalf("%s: recall@10 %.3f, want ≥ 0.9", stage, recall)
	}
}

// TestGraphFollowsWrites: the graph appears at GraphMin vectors, follows
// puts, replacements and deletes, and goes when the model shrinks below
// half the threshold.
func TestGraphFollowsWrites(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	ix := graphIndex(400)
	// The owner's duty after each write: build what the index wants.
	put := func(m *memory.Memory) {
		ix.Put(m)
		if ix.WantsGraphs() {
			ix.BuildGraphs()
		}
	}
	for i := range 399 {
		put(vecMemory(r, i))
	}
	checkGraph(t, ix, false, r, "below the threshold")
	put(vecMemory(r, 399))
	checkGraph(t, ix, true, r, "at the threshold")
	churn(r, ix, 400, 600, put)
	checkGraph(t, ix, true, r, "after churn")
	for i := range 1000 {
		if ix.Vectors("m").Len() <= 150 {
			break
		}
		ix.Delete(vecMemory(r, i).Key())
	}
	checkGraph(t, ix, false, r, "after shrinking")
}

// churn makes rounds random writes over memories from 0 to n+rounds: new
// ones, replacements (a new vector under the same key), some without a
// vector, and deletes.
func churn(r *rand.Rand, ix *Index, n, rounds int, put func(*memory.Memory)) {
	for i := range rounds {
		switch k := r.Intn(10); {
		case k < 5:
			put(vecMemory(r, n+i)) // new
		case k < 7:
			put(vecMemory(r, r.Intn(n+i))) // replace
		case k < 8:
			m := vecMemory(r, r.Intn(n+i))
			m.Embedding = nil // replaced by one without a vector
			put(m)
		default:
			ix.Delete(vecMemory(r, r.Intn(n+i)).Key())
		}
	}
}

// TestGraphBuildWhileWriting: a graph built off the lock over a copy of the
// codes, with writes to the index between the copy and the install, covers
// exactly the model's vectors once installed, and searches well.
func TestGraphBuildWhileWriting(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	ix := graphIndex(500)
	ix.BeginBulk()
	for i := range 800 {
		ix.Put(vecMemory(r, i))
	}
	ix.EndBulk()
	if !ix.WantsGraphs() {
		t.Fatal("a bulk load past the threshold wants no graph")
	}
	builds := ix.PrepareGraphBuilds()
	if len(builds) != 1 || len(ix.PrepareGraphBuilds()) != 0 {
		t.Fatalf("%d builds, and a second prepare while one runs must start none", len(builds))
	}
	churn(r, ix, 800, 300, func(m *memory.Memory) { ix.Put(m) })
	if ix.Graph("m") != nil {
		t.Fatal("graph installed before the build finished")
	}
	if err := builds[0].Run(context.Background(), 2); err != nil {
		t.Fatal(err)
	}
	churn(r, ix, 1100, 100, func(m *memory.Memory) { ix.Put(m) })
	ix.InstallGraph(builds[0])
	checkGraph(t, ix, true, r, "installed after writes")
	churn(r, ix, 1200, 200, func(m *memory.Memory) { ix.Put(m) })
	checkGraph(t, ix, true, r, "writes after the install")

	// A cancelled build installs nothing and leaves the model free to build again.
	ix2 := graphIndex(500)
	ix2.BeginBulk()
	for i := range 600 {
		ix2.Put(vecMemory(r, i))
	}
	ix2.EndBulk()
	b := ix2.PrepareGraphBuilds()[0]
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := b.Run(ctx, 2); err == nil {
		t.Fatal("a cancelled build ran")
	}
	ix2.AbandonGraphBuild(b)
	ix2.Put(vecMemory(r, 600))
	ix2.BuildGraphs()
	checkGraph(t, ix2, true, r, "built after an abandoned build")
}

// TestGraphSnapshot: a snapshot carries the graph, which is read (not
// rebuilt) and answers as the written one; a graph that does not cover the
// vectors it was written with, a truncated file or a flipped byte in the
// graph's section is rejected.
func TestGraphSnapshot(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	ix := graphIndex(300)
	for i := range 700 {
		ix.Put(vecMemory(r, i))
	}
	ix.BuildGraphs()
	for i := 0; i < 700; i += 9 {
		ix.Delete(vecMemory(r, i).Key())
	}
	good := snapshotOf(t, ix)
	// A load with graphs disabled still uses the stored one: never rebuilt,
	// never dropped on open.
	secs, err := binenc.OpenSections(bytes.NewReader(good), int64(len(good)))
	if err != nil {
		t.Fatal(err)
	}
	got, err := ReadSnapshot(secs, tokenize.New(tokenize.DefaultOptions()), ix.bm.Params(), ix.ctx, ANNOptions{GraphMin: -1, Policy: ann.Policy{ExactBelow: -1, Ef: 32}})
	if err == nil {
		err = secs.Done()
	}
	if err != nil {
		t.Fatal(err)
	}
	if got.Graph("m") == nil {
		t.Fatal("graph not loaded")
	}
	if !slices.Equal(snapshotOf(t, got), good) {
		t.Fatal("loaded index writes a different snapshot")
	}
	for range 30 {
		q := vecMemory(r, 0).Embedding.Vector
		a, pa := ix.VectorSearch("m", q, nil, 10)
		b, pb := got.VectorSearch("m", q, nil, 10)
		if !slices.Equal(a, b) || pa != ann.PathGraph || pb != ann.PathGraph {
			t.Fatalf("loaded %v (path %d), written %v (path %d)", b, pb, a, pa)
		}
	}

	// Stale: the graph of a different set of vectors, of the same model and dimension.
	other := graphIndex(300)
	for i := range 650 {
		other.Put(vecMemory(r, i))
	}
	other.BuildGraphs()
	stale := newIndexFrom(t, good)
	stale.graphs["m"] = other.graphs["m"]
	spans, err := binenc.Spans(good)
	if err != nil {
		t.Fatal(err)
	}
	// The graph of the one model is the last section.
	if len(spans) != len(snapshotOfNoGraph(t, ix).spans())+1 {
		t.Fatal("the graph's section is not where the test expects it")
	}
	graph := spans[len(spans)-1]
	graphStart := int(graph[0])
	flipped := slices.Clone(good)
	flipped[graphStart+int(graph[1])/2] ^= 0x10
	for _, c := range []struct {
		name string
		in   []byte
	}{
		{"stale graph", snapshotOf(t, stale)},
		{"truncated in the graph", good[:graphStart+100]},
		{"flipped byte in the graph", flipped},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := load(c.in, tokenize.DefaultOptions()); !errors.Is(err, binenc.ErrCorrupt) {
				t.Fatalf("got %v, want ErrCorrupt", err)
			}
		})
	}
}

// newIndexFrom loads a snapshot, failing the test on error.
func newIndexFrom(t *testing.T, b []byte) *Index {
	t.Helper()
	ix, err := load(b, tokenize.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

// snapshotOfNoGraph is ix's snapshot without its (one) graph.
func snapshotOfNoGraph(t *testing.T, ix *Index) snapshotBytes {
	t.Helper()
	g := ix.graphs["m"]
	delete(ix.graphs, "m")
	defer func() { ix.graphs["m"] = g }()
	return snapshotOf(t, ix)
}

// Without a graph, searches over the exact threshold scan the sketches; a
// negative GraphMin makes every search exact (the bench's reference and a
// calibration fork rely on it).
func TestNoGraphPaths(t *testing.T) {
	for _, c := range []struct {
		graphMin int
		want     ann.Path
	}{{0, ann.PathSketch}, {-1, ann.PathExact}} {
		r := rand.New(rand.NewSource(3))
		ix := newIndex()
		ix.SetANN(ANNOptions{GraphMin: c.graphMin})
		for i := range ann.DefaultExactBelow + 500 {
			ix.Put(vecMemory(r, i))
		}
		q := vecMemory(r, 0).Embedding.Vector
		got, path := ix.VectorSearch("m", q, nil, 10)
		if path != c.want || len(got) != 10 {
			t.Errorf("GraphMin %d: path %d with %d hits, want path %d", c.graphMin, path, len(got), c.want)
		}
		if ix.Graph("m") != nil {
			t.Errorf("GraphMin %d: a graph at %d vectors", c.graphMin, ix.Vectors("m").Len())
		}
	}
}
