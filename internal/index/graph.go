package index

// The vector leg's approximate index: one ann.Graph per model, kept only while
// the model has at least GraphMin vectors. Below that a search is the exact
// scan up to the policy's ExactBelow allowed documents (the relevance
// goldens, all small, are exact) and the sign-sketch scan above it. The graph is
// built once when a model reaches GraphMin (or after a rebuild from the rows),
// by the owner off the lock over a copy of the codes (GraphBuild), then
// follows every write; it is rebuilt when tombstones outnumber half its live
// nodes and dropped when the model shrinks below GraphMin/2. Until a graph is
// installed, searches are exact.

import (
	"context"
	"runtime"
	"slices"

	"github.com/engram-memory/engram/internal/ann"
	"github.com/engram-memory/engram/internal/docset"
	"github.com/engram-memory/engram/internal/vector"
)

// DefaultGraphMin is the vector count from which a model gets a graph. Below
// it searches over ann.DefaultExactBelow allowed documents scan the sign
// sketches (vector.Index.SearchSketch), which at 1M synthetic 512-d
// memories held recall@10 0.997 where the graph's walk held 0.879, and need
// no build (the graph's took 698 s at 1M). The sketch scan reads 64 bytes
// of every row: the vector leg took 7.29 ms p50 at 1M in engram bench, a
// walk 5.1 ms (at ef 1024, the harness), and the scan grows with the store,
// so past 2M a walk is faster, if less exact.
const DefaultGraphMin = 2_000_000

// ANNOptions tune the approximate index.
type ANNOptions struct {
	// GraphMin is the vector count from which a model gets a graph: 0 means
	// DefaultGraphMin, negative never builds one.
	GraphMin int
	Policy   ann.Policy
}

// SetANN configures the approximate index. Call it on an empty index, before
// the first Put or snapshot read. A policy without an exact threshold gets
// ann.DefaultExactBelow scaled down with a GraphMin below the default (2/5 of
// it), and ann.DefaultFilteredExactBelow likewise (twice it), so a small
// threshold set for tests or tuning still walks the graph. A negative
// GraphMin turns the sketch scan off too, so that without a graph (one read
// from a snapshot is still used) each search is exact: a reference, a
// calibration fork.
func (ix *Index) SetANN(o ANNOptions) {
	ix.graphMin, ix.annPolicy = o.GraphMin, o.Policy
	if o.GraphMin < 0 {
		ix.annPolicy.NoSketch = true
	}
	if ix.annPolicy.ExactBelow == 0 {
		ix.annPolicy.ExactBelow = ann.DefaultExactBelow
		if m := ix.minGraph(); m > 0 {
			ix.annPolicy.ExactBelow = max(1, min(ann.DefaultExactBelow, m*2/5))
		}
	}
	if ix.annPolicy.FilteredExactBelow == 0 {
		ix.annPolicy.FilteredExactBelow = ann.DefaultFilteredExactBelow
		if m := ix.minGraph(); m > 0 {
			ix.annPolicy.FilteredExactBelow = max(1, min(ann.DefaultFilteredExactBelow, m*2))
		}
	}
}

func (ix *Index) minGraph() int {
	switch {
	case ix.graphMin == 0:
		return DefaultGraphMin
	case ix.graphMin < 0:
		return -1
	}
	return ix.graphMin
}

// graphAdd follows a vector just stored for doc into the model's graph. A
// model that has just reached the threshold, or whose graph has more
// tombstones than half its live nodes, is marked as wanting a (new) graph:
// the owner builds it off the lock (PrepareGraphBuilds), as searches go on
// exactly meanwhile.
func (ix *Index) graphAdd(model string, vi *vector.Index, doc uint32) {
	if b := ix.building[model]; b != nil {
		b.dirty = append(b.dirty, doc)
		return
	}
	if ix.bulk {
		return
	}
	if g := ix.graphs[model]; g != nil {
		if g.Dead() > g.Len()/2+1024 {
			delete(ix.graphs, model) // rebuilt from scratch: cheaper than walking the tombstones
			ix.wantGraphs = true
			return
		}
		_ = g.Insert(doc, vi) // vi has just stored doc's vector of the graph's dimension
		return
	}
	if m := ix.minGraph(); m > 0 && vi.Len() >= m {
		ix.wantGraphs = true
	}
}

// graphRemove tombstones doc in the model's graph before its vector goes, or
// drops the graph when the model falls well below the threshold.
func (ix *Index) graphRemove(model string, vi *vector.Index, doc uint32) {
	if b := ix.building[model]; b != nil {
		b.dirty = append(b.dirty, doc)
		return
	}
	g := ix.graphs[model]
	if g == nil {
		return
	}
	if m := ix.minGraph(); ix.bulk || m < 0 || vi.Len() <= m/2 {
		delete(ix.graphs, model)
		return
	}
	g.Delete(doc, vi)
}

// BeginBulk defers graph upkeep during a bulk load: puts do not touch the
// graphs; after EndBulk, one build per model (PrepareGraphBuilds, or
// BuildGraphs) replaces inserting the vectors one at a time.
func (ix *Index) BeginBulk() { ix.bulk = true }

// EndBulk ends a bulk load.
func (ix *Index) EndBulk() {
	ix.bulk = false
	ix.wantGraphs = true
}

// WantsGraphs reports whether some model may need a graph built: it reached
// the threshold, its graph was dropped for tombstones, or a bulk load ended.
func (ix *Index) WantsGraphs() bool { return ix.wantGraphs }

// GraphBuild is the building of one model's graph off the index's lock:
// PrepareGraphBuilds copies the model's codes (under the write lock), Run
// builds the graph over the copy (no lock), and InstallGraph (under the write
// lock again) applies the documents written meanwhile and installs it.
type GraphBuild struct {
	model string
	src   *codeCopy
	docs  []uint32
	dirty []uint32 // documents whose vector changed or went since the copy
	g     *ann.Graph
}

// Model is the model whose graph is built.
func (b *GraphBuild) Model() string { return b.model }

// Len is the number of vectors copied for the build.
func (b *GraphBuild) Len() int { return len(b.docs) }

// PrepareGraphBuilds starts a build for every model at or over the threshold
// with no graph and none being built. The caller holds the write lock, and
// must finish each build with InstallGraph or AbandonGraphBuild.
func (ix *Index) PrepareGraphBuilds() []*GraphBuild {
	ix.wantGraphs = false
	m := ix.minGraph()
	if m < 0 {
		return nil
	}
	var out []*GraphBuild
	for model, vi := range ix.vecs {
		if ix.graphs[model] != nil || ix.building[model] != nil || vi.Len() < m {
			continue
		}
		b := &GraphBuild{model: model, src: copyCodes(vi), docs: slices.Collect(vi.Docs())}
		ix.building[model] = b
		out = append(out, b)
	}
	return out
}

// Run builds the graph over the copied codes on workers goroutines,
// checking ctx between chunks. It takes no lock.
func (b *GraphBuild) Run(ctx context.Context, workers int) error {
	g := ann.New(b.src.dim, ann.Params{})
	const chunk = 8192
	for lo := 0; lo < len(b.docs); lo += chunk {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := g.InsertBatch(b.docs[lo:min(lo+chunk, len(b.docs))], b.src, workers); err != nil {
			return err
		}
	}
	b.g = g
	return nil
}

// InstallGraph finishes a build that Run completed: the documents written
// since the copy are tombstoned (with their copied codes) and inserted again
// from the live vectors, so the graph covers exactly the model's vectors. The
// caller holds the write lock.
func (ix *Index) InstallGraph(b *GraphBuild) {
	delete(ix.building, b.model)
	vi := ix.vecs[b.model]
	g := b.g
	if vi == nil || g == nil || vi.Dim() != g.Dim() {
		return
	}
	slices.Sort(b.dirty)
	b.dirty = slices.Compact(b.dirty)
	for _, d := range b.dirty {
		g.Delete(d, b.src)
	}
	for _, d := range b.dirty {
		if vi.Has(d) {
			_ = g.Insert(d, vi)
		}
	}
	if g.Check(vi, vi.Len()) != nil {
		ix.wantGraphs = true // cannot happen; try again rather than trust it
		return
	}
	ix.graphs[b.model] = g
}

// AbandonGraphBuild forgets a build that will not be installed. The caller
// holds the write lock.
func (ix *Index) AbandonGraphBuild(b *GraphBuild) {
	if ix.building[b.model] == b {
		delete(ix.building, b.model)
	}
}

// BuildGraphs builds every graph wanted now, on the calling goroutine and
// all CPUs, for callers that own the index alone (a fork).
func (ix *Index) BuildGraphs() {
	for _, b := range ix.PrepareGraphBuilds() {
		if b.Run(context.Background(), runtime.GOMAXPROCS(0)) == nil {
			ix.InstallGraph(b)
		} else {
			ix.AbandonGraphBuild(b)
		}
	}
}

// codeCopy is a private copy of a vector index's codes, for building a graph
// while the index changes.
type codeCopy struct {
	dim   int
	codes []int8
	scale []float32
	rowOf []int32 // doc → row+1
}

func copyCodes(vi *vector.Index) *codeCopy {
	c := &codeCopy{dim: vi.Dim(), codes: make([]int8, 0, vi.Len()*vi.Dim()), scale: make([]float32, 0, vi.Len())}
	for doc := range vi.Docs() {
		codes, s, _ := vi.Code(doc)
		c.codes = append(c.codes, codes...)
		c.scale = append(c.scale, s)
		if int(doc) >= len(c.rowOf) {
			c.rowOf = append(c.rowOf, make([]int32, int(doc)+1-len(c.rowOf))...)
		}
		c.rowOf[doc] = int32(len(c.scale))
	}
	return c
}

// Code implements ann.Source.
func (c *codeCopy) Code(doc uint32) ([]int8, float32, bool) {
	if int(doc) >= len(c.rowOf) || c.rowOf[doc] == 0 {
		return nil, 0, false
	}
	r := int(c.rowOf[doc]) - 1
	return c.codes[r*c.dim : (r+1)*c.dim : (r+1)*c.dim], c.scale[r], true
}

// Graph returns the model's ANN graph, or nil when it has none.
func (ix *Index) Graph(model string) *ann.Graph { return ix.graphs[model] }

// VectorSearch runs the vector leg for model: the k documents in allow
// nearest q, exactly (vector.Index.Search) unless the model has a graph and
// the filter admits more than the policy's exact threshold (ann.SearchVectors).
func (ix *Index) VectorSearch(model string, q []float32, allow *docset.Set, k int) ([]vector.Hit, ann.Path) {
	vi := ix.vecs[model]
	if vi == nil {
		return nil, ann.PathExact
	}
	return ann.SearchVectors(ix.graphs[model], vi, q, allow, k, ix.annPolicy)
}
