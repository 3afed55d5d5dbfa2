package ann

// Choosing between the exact scan, the sign-sketch scan and the graph for
// one search.

import (
	"math"

	"github.com/engram-memory/engram/internal/docset"
	"github.com/engram-memory/engram/internal/vector"
)

// DefaultExactBelow is the allowed-document count at or below which a search
// scans exactly instead of walking the graph. Not swept; set from two end
// points of engram bench at 100k 512-d (load ~12 on two cores): an exact
// scan of all 100k rows took ~6 ms in the vector leg and a graph search
// ~1–1.5 ms, so an exact scan of 20k rows costs about a walk, and is exact.
const DefaultExactBelow = 20_000

// DefaultFilteredExactBelow is the allowed count at or below which a filter
// that admits at most 1/filteredShare of the graph is scanned exactly
// although it is over ExactBelow: a walk that must step over most of the
// graph to find allowed nodes costs far more than an unfiltered one, and
// misses more. Measured at 1M synthetic 512-d (TestHarness, 100 queries,
// load ~3, rows prefetched): with every 10th document allowed the walk gave
// recall@10 0.907 at ef 512 (9.2 ms p50) and 0.935 at ef 1024 (16 ms), the
// exact scan of its 100k rows 1.0 in 15.5 ms p50 (13.6 ms of CPU over two
// cores, most of it waiting on DRAM); in engram bench at 1M that scan's leg
// took 9.6 ms p50.
const DefaultFilteredExactBelow = 100_000

// filteredShare: the filtered exact rule applies to filters admitting at
// most 1/filteredShare of the graph.
const filteredShare = 8

// sketchShare: without a graph, a filter admitting at most 1/sketchShare of
// the rows is scanned exactly. In engram bench at 1M with 10% allowed, the
// exact scan of the filter's rows took 9.10 ms p50 (91 ns an allowed row,
// read out of order) and the sketch scan 6.02 ms, which reads every row's
// sketch whatever the filter: the exact scan costs less up to about 66k
// allowed rows, a 15th.
const sketchShare = 16

// Policy configures SearchVectors.
type Policy struct {
	ExactBelow int // 0 means DefaultExactBelow; negative: always try the graph
	// FilteredExactBelow: 0 means DefaultFilteredExactBelow; negative (or a
	// negative ExactBelow) turns the filtered rule off.
	FilteredExactBelow int
	Ef                 int // 0 means efFor the graph's size
	// Cands is how many rows a sketch scan keeps for the exact search: 0
	// means sketchCands of the allowed count and k.
	Cands int
	// NoSketch: without a graph, search exactly.
	NoSketch bool
}

// sketchCands is how many of a sketch scan's best rows are searched exactly
// for k hits among allowed rows: 1000 at 100k allowed, growing with the
// allowed count to the power 0.4 (2512 at 1M), and never under 16k.
// Measured on synthetic 512-d memories with their short queries
// (TestHarness, 100 queries, recall@10 against the exact scan): at 100k,
// the best 500 held 0.988 of the true top 10, 1000 held 0.998; at 1M, 2000
// held 0.986 and 4000 0.997, 4000 taking 1.6 ms more (7.9 against 6.3 ms
// p50). The count does not grow with k: a search for the hybrid's pool of
// 51 then returns, as its top 10, exactly what a search for 10 would,
// whose recall is what was measured; its deeper ranks are less exact.
func sketchCands(allowed, k int) int {
	c := 1000 * math.Pow(float64(allowed)/100_000, 0.4)
	return max(16*k, int(math.Ceil(c)))
}

// efGrowFrom is the graph size from which the default candidate list grows,
// with the square root of the size: DefaultEf up to 250k, 1024 at 1M. At a
// fixed ef recall falls with size (0.986 at 100k, 0.897 at 300k, 0.82 at 1M
// at ef 512); at 1M (TestHarness, 100 queries, load ~3, code rows
// prefetched) ef 1024 gave 0.879 in 5.1 ms p50 against 0.820 in 3.0 ms, and
// ef 2048 0.904, so doubling it again costs more than the budget allows
// for little.
const efGrowFrom = 250_000

// efFor is the default candidate list of a walk over a graph of live nodes.
func efFor(live int) int {
	if live <= efGrowFrom {
		return DefaultEf
	}
	return int(float64(DefaultEf) * math.Sqrt(float64(live)/efGrowFrom))
}

// exact reports whether a search whose filter admits allowed of the graph's
// live documents (filtered: there is a filter) should scan exactly.
func (p Policy) exact(live, allowed int, filtered bool) bool {
	if p.ExactBelow < 0 {
		return false
	}
	exactBelow := p.ExactBelow
	if exactBelow == 0 {
		exactBelow = DefaultExactBelow
	}
	if allowed <= exactBelow {
		return true
	}
	fe := p.FilteredExactBelow
	if fe == 0 {
		fe = DefaultFilteredExactBelow
	}
	return filtered && allowed <= fe && allowed <= live/filteredShare
}

// Path says how a search was answered.
type Path int

const (
	PathExact    Path = iota // the filter (or the store) was small: exact scan
	PathGraph                // the graph walk, rescored exactly
	PathFallback             // the walk gave up: exact scan
	PathSketch               // no graph: the sign-sketch scan, its best rows searched exactly
)

// SearchVectors returns the k nearest allowed documents to q, as
// vi.Search does, approximately when that pays. With an allowed count at or
// below the policy's ExactBelow it is vi.Search itself. Without a graph it
// is the sign-sketch scan (vi.SearchSketch, sketchCands rows searched
// exactly), unless a filter admits at most 1/sketchShare of the rows. With
// a graph, a filter within FilteredExactBelow and 1/filteredShare of the
// documents is scanned exactly; otherwise the graph's candidates (ef of
// them) are rescored in float32 and the best k returned, and a walk that
// gives up falls back to vi.Search. g must index exactly vi's documents
// (Graph.Check).
func SearchVectors(g *Graph, vi *vector.Index, q []float32, allow *docset.Set, k int, p Policy) ([]vector.Hit, Path) {
	ef := p.Ef
	if ef <= 0 && g != nil {
		ef = efFor(g.Len())
	}
	allowed := vi.Len()
	if allow != nil {
		allowed = min(allowed, allow.Len())
	}
	if p.exact(vi.Len(), allowed, allow != nil && g != nil) || k < 1 || len(q) != vi.Dim() || !vector.Finite(q) {
		return vi.Search(q, allow, k), PathExact
	}
	if g == nil {
		if p.ExactBelow < 0 || p.NoSketch || allow != nil && allowed <= vi.Len()/sketchShare {
			// "Always the graph", and there is none; or a filter whose
			// rows cost less scanned exactly than every row's sketch.
			return vi.Search(q, allow, k), PathExact
		}
		cands := p.Cands
		if cands <= 0 {
			cands = sketchCands(allowed, k)
		}
		if cands >= allowed {
			return vi.Search(q, allow, k), PathExact
		}
		return vi.SearchSketch(q, allow, k, cands), PathSketch
	}
	qn, _ := vector.Normalize(q)
	pq := preciseQuery(qn)
	res, ok := g.Search(vi, Query{Codes: pq.codes, Scale: pq.scale, Allow: allow, Allowed: allowed, K: k, Ef: max(ef, k)})
	if !ok {
		return vi.Search(q, allow, k), PathFallback
	}
	// Two stages: the walk's candidates are ranked by their int8 cosine to
	// the finely quantised query (off by the codes' rounding alone, ~1e-4),
	// and only the best few are read in float32.
	res = res[:min(len(res), rescoreCount(k))]
	docs := make([]uint32, len(res))
	for i, r := range res {
		docs[i] = r.Doc
	}
	return vi.Rescore(q, docs, k), PathGraph
}

// rescoreCount is how many of a walk's best candidates (by int8 cosine) are
// rescored in float32 for k hits.
func rescoreCount(k int) int {
	if rescoreAll {
		return math.MaxInt
	}
	return max(4*k, rescoreMin)
}

var (
	rescoreMin = 40
	rescoreAll = false // tests: rescore every candidate
)
