package index

// The vector leg's approximate index: one ann.Graph per model, kept only while
// the model has at least GraphMin vectors. Below that every search is the
// exact scan (and the relevance goldens, all small, are exact). The graph is
// built once when a model reaches GraphMin, then follows every write; it is
// rebuilt when tombstones outnumber half its live nodes and dropped when the
// model shrinks below GraphMin/2.

import (
	"runtime"
	"slices"

	"github.com/engram-memory/engram/internal/ann"
	"github.com/engram-memory/engram/internal/docset"
	"github.com/engram-memory/engram/internal/vector"
)

// DefaultGraphMin is the vector count from which a model gets a graph: below
// it the exact int8 scan is as fast as a walk (see ann.DefaultExactBelow),
// and building a graph for it would cost more than it saves.
const DefaultGraphMin = 50_000

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
// it), so a small threshold set for tests or tuning still walks the graph.
func (ix *Index) SetANN(o ANNOptions) {
	ix.graphMin, ix.annPolicy = o.GraphMin, o.Policy
	if ix.annPolicy.ExactBelow == 0 {
		ix.annPolicy.ExactBelow = ann.DefaultExactBelow
		if m := ix.minGraph(); m > 0 {
			ix.annPolicy.ExactBelow = max(1, min(ann.DefaultExactBelow, m*2/5))
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

// graphAdd follows a vector just stored for doc: into the model's graph, or
// building the graph when the model has just reached the threshold.
func (ix *Index) graphAdd(model string, vi *vector.Index, doc uint32) {
	if ix.bulk {
		return // EndBulk builds the graphs
	}
	if g := ix.graphs[model]; g != nil {
		if g.Dead() > g.Len()/2+1024 {
			ix.buildGraph(model, vi)
			return
		}
		_ = g.Insert(doc, vi) // vi has just stored doc's vector of the graph's dimension
		return
	}
	if m := ix.minGraph(); m > 0 && vi.Len() >= m {
		ix.buildGraph(model, vi)
	}
}

// graphRemove tombstones doc in the model's graph before its vector goes, or
// drops the graph when the model falls well below the threshold.
func (ix *Index) graphRemove(model string, vi *vector.Index, doc uint32) {
	g := ix.graphs[model]
	if g == nil {
		return
	}
	if ix.bulk {
		delete(ix.graphs, model) // EndBulk builds it again
		return
	}
	if m := ix.minGraph(); m < 0 || vi.Len() <= m/2 {
		delete(ix.graphs, model)
		return
	}
	g.Delete(doc, vi)
}

// buildGraph builds the model's graph from its vectors, in row order, on
// every CPU (ann.Graph.InsertBatch).
func (ix *Index) buildGraph(model string, vi *vector.Index) {
	g := ann.New(vi.Dim(), ann.Params{})
	_ = g.InsertBatch(slices.Collect(vi.Docs()), vi, runtime.GOMAXPROCS(0)) // every doc has a vector of vi's dimension
	ix.graphs[model] = g
}

// BeginBulk defers graph upkeep during a bulk load: puts do not touch the
// graphs, and EndBulk builds each one needed once, in parallel, instead of
// inserting the vectors one at a time.
func (ix *Index) BeginBulk() { ix.bulk = true }

// EndBulk ends a bulk load, building the graph of every model that has
// reached the threshold and has none.
func (ix *Index) EndBulk() {
	ix.bulk = false
	m := ix.minGraph()
	if m < 0 {
		return
	}
	for model, vi := range ix.vecs {
		if ix.graphs[model] == nil && vi.Len() >= m {
			ix.buildGraph(model, vi)
		}
	}
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
