// Package ann is an approximate nearest-neighbour index for large vector
// stores: a hierarchical navigable small-world graph (HNSW, Malkov & Yashunin
// 2016) over the int8 codes the vector leg already keeps, with filters
// applied inside the walk (ACORN-style two-hop expansion, Patel et al. 2024)
// and a refusal, rather than a poor answer, when exact search would do better.
package ann

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/engram-memory/engram/internal/parallel"
	"github.com/engram-memory/engram/internal/vector"
)

// Defaults, from sweeps on synthetic 512-d embeddings (internal/synth)
// searched with short text queries, the hard case (queries unlike any stored
// text, top-10 cosines ~1e-4 apart), on two shared cores (load 4–7, so
// timings are loose; recall is not). At 30k, M 16 and efConstruction 100
// gave recall@10 0.977 at ef 128 and 0.988 at ef 256 (efConstruction 64:
// 0.899 at ef 128; M 24 no better and slower). At 100k (TestHarness, 100
// queries; recall@10 at ef 256 / 512 / 1024 unless said):
//   - efConstruction 100, the plain heuristic, a full list dropping one
//     redundant link: 0.920 / 0.951 / 0.970, build 58 s CPU;
//   - a full list pruned by the heuristic instead: 0.932 / 0.960 / 0.981;
//     efConstruction 150: 0.945 / 0.978 / 0.988 (200: the same);
//   - the heuristic with α 1.15 (pruneAlpha): 0.971 / 0.985 at ef 256 / 512
//     (α 1.3: 0.925 / 0.965), but a list pruned back to capacity then prunes
//     on every later link (build 104 s CPU);
//   - pruned to 28 of 32 (overflowSlack): 0.950 / 0.986 / 0.988 at ef 256 /
//     512 / 768, build 59 s CPU: the defaults.
//
// Filling every list to 2·M with the closest candidates fell to 0.867 at ef
// 512, and capping the heuristic's input at 2·keep candidates to 0.924.
// Seeding layer 0 from a beam of 64 over layer 1 (seedBeam) rather than one
// greedy node is worth 0.03 at ef 256; a beam of 256 another 0.03, at about
// the cost of doubling ef. Recall falls with size at a fixed ef: at 300k
// (efConstruction 150, α 1) 0.882 at ef 512, 0.916 at 1024.
const (
	// DefaultM is the neighbours a node keeps on the upper layers; layer 0
	// keeps 2·M, as the HNSW paper recommends.
	DefaultM = 16
	// DefaultEfConstruction is the candidate list of an insert's search.
	DefaultEfConstruction = 150
	// DefaultEf is the candidate list of a query (at least k) on a graph of
	// up to efGrowFrom nodes; larger graphs get more (efFor).
	DefaultEf = 512
	// maxLevel bounds a node's level (a level is drawn with P(≥l) = M^-l, so
	// 1M nodes reach about 5).
	maxLevel = 16
)

// Params tune a graph.
type Params struct {
	M              int // 0 means DefaultM
	EfConstruction int // 0 means DefaultEfConstruction
}

func (p Params) withDefaults() Params {
	if p.M <= 1 {
		p.M = DefaultM
	}
	p.M = min(p.M, 127) // layer-0 counts are bytes
	if p.EfConstruction <= 0 {
		p.EfConstruction = DefaultEfConstruction
	}
	return p
}

// Source gives the graph its vectors: the int8 codes of a document's unit
// vector and their scale (vector.Index implements it).
type Source interface {
	Code(doc uint32) ([]int8, float32, bool)
}

// Graph is an HNSW graph over documents. Nodes are numbered in insertion
// order and never renumbered; a document deleted or re-inserted leaves a
// tombstone: a dead node that keeps its links and a private copy of its codes,
// so walks still pass through it, but that is never returned. Owners rebuild
// when tombstones pile up (Dead).
//
// Concurrency: Search may run on many goroutines at once; Insert and Delete
// must be serialised with every other call (the owner's write lock).
type Graph struct {
	p   Params
	m0  int // layer-0 fan-out, 2·M
	dim int

	docOf  []uint32 // node → document
	nodeOf []int32  // document → live node+1; 0: none
	level  []uint8  // node → top layer

	// Layer 0, fixed-size rows: node n's neighbours are links0[n*m0 : n*m0+cnt0[n]],
	// with their similarities to n in sims0 (kept so that pruning an
	// overflowing list costs no kernel calls).
	links0 []uint32
	sims0  []float32
	cnt0   []uint8
	// Layers 1.., for the few nodes that reach them: upper[n][l-1].
	upper map[uint32][]layerLinks

	dead      []uint64            // bitset over nodes
	deadCodes map[uint32]deadCode // codes of dead nodes, for walking through them
	live      int

	entry int32 // entry node, -1 when empty
	top   int   // entry's level

	ws scratch // the serial writer's (Insert's)
}

// minDegree is the fewest links selectNeighbours keeps when it has the candidates.
func (g *Graph) minDegree() int { return g.p.M }

// pruneAlpha relaxes the heuristic as Vamana's α does: c is pruned when a
// kept node is closer to it than the base node by a factor α (distance 1 −
// cosine); α 1 is HNSW's rule, larger keeps more long links.
var pruneAlpha float32 = 1.15

// overflowSlack: an overflowing list is pruned to at most capacity −
// capacity/overflowSlack links, so that the next few are appends.
var overflowSlack = 8

// scratch is selectNeighbours' working memory: up to m0 widened code rows.
type scratch struct {
	rows  []int16
	scale []float32
}

type layerLinks struct {
	links []uint32
	sims  []float32
}

type deadCode struct {
	codes []int8
	scale float32
}

// New returns an empty graph for vectors of dim components.
func New(dim int, p Params) *Graph {
	p = p.withDefaults()
	return &Graph{p: p, m0: 2 * p.M, dim: dim, upper: map[uint32][]layerLinks{}, deadCodes: map[uint32]deadCode{}, entry: -1}
}

// Len is the number of live (searchable) documents.
func (g *Graph) Len() int { return g.live }

// Dead is the number of tombstones.
func (g *Graph) Dead() int { return len(g.docOf) - g.live }

// Dim is the vector dimension.
func (g *Graph) Dim() int { return g.dim }

// Has reports whether doc is in the graph (live).
func (g *Graph) Has(doc uint32) bool {
	return uint64(doc) < uint64(len(g.nodeOf)) && g.nodeOf[doc] != 0
}

func (g *Graph) isDead(n uint32) bool { return g.dead[n>>6]&(1<<(n&63)) != 0 }

// code returns node n's codes: from the source while it lives, from the
// tombstone copy once dead.
func (g *Graph) code(src Source, n uint32) ([]int8, float32) {
	if g.isDead(n) {
		d := g.deadCodes[n]
		return d.codes, d.scale
	}
	c, s, _ := src.Code(g.docOf[n])
	return c, s
}

// query is a vector made ready for the integer kernel.
type query struct {
	codes []int16
	scale float32
}

// preciseQuery quantises a unit vector to int16 codes, as fine as the
// integer kernel's int32 sums allow (|Σ q·c| ≤ dim·qmax·127 < 2³¹), so that
// a walk ranks nodes by the error of their codes alone, not the query's too.
func preciseQuery(qn []float32) query {
	qmax := math.Floor(min(32767, float64(math.MaxInt32)/(127*float64(max(1, len(qn))))))
	var m float32
	for _, x := range qn {
		m = max(m, float32(math.Abs(float64(x))))
	}
	q := query{codes: make([]int16, len(qn))}
	if m == 0 {
		return q
	}
	scale := float64(m) / qmax
	for i, x := range qn {
		q.codes[i] = int16(max(-qmax, min(qmax, math.Round(float64(x)/scale))))
	}
	q.scale = float32(scale)
	return q
}

func queryOf(c []int8, s float32) query {
	q := query{codes: make([]int16, len(c)), scale: s}
	for i, x := range c {
		q.codes[i] = int16(x)
	}
	return q
}

// sim is the approximate cosine of q and node n.
func (g *Graph) sim(src Source, q query, n uint32) float32 {
	c, s := g.code(src, n)
	if len(c) < len(q.codes) {
		return float32(math.Inf(-1)) // a source out of step with the graph: never chosen
	}
	return q.scale * s * float32(vector.DotInt8(q.codes, c))
}

// levelFor draws node n's level from a geometric distribution with ratio 1/M,
// deterministically (splitmix64 of the node number), so a rebuild in the same
// order builds the same graph.
func (g *Graph) levelFor(n uint32) int {
	x := uint64(n) + 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	x ^= x >> 31
	u := (float64(x>>11) + 0.5) / (1 << 53) // in (0,1)
	l := int(-math.Log(u) / math.Log(float64(g.p.M)))
	return min(l, maxLevel)
}

// Insert adds doc, whose vector src must hold, replacing (tombstoning) any
// node doc had. It fails when src has no vector for doc or its dimension is
// not the graph's.
func (g *Graph) Insert(doc uint32, src Source) error {
	if err := g.checkInsert(doc, src); err != nil {
		return err
	}
	if g.Has(doc) {
		g.deleteNode(uint32(g.nodeOf[doc]-1), src)
	}
	n := uint32(len(g.docOf))
	p := g.plan(src, doc, g.levelFor(n), &g.ws)
	g.appendNode(p)
	for l, cs := range p.links {
		for _, e := range cs {
			g.addLink(src, e.node, l, n, e.sim, &g.ws)
		}
	}
	return nil
}

func (g *Graph) checkInsert(doc uint32, src Source) error {
	c, _, ok := src.Code(doc)
	switch {
	case !ok:
		return fmt.Errorf("ann: insert doc %d: no vector", doc)
	case len(c) != g.dim:
		return fmt.Errorf("ann: insert doc %d: %d components, graph has %d", doc, len(c), g.dim)
	case int64(doc) >= math.MaxInt32:
		return fmt.Errorf("ann: insert doc %d: document number too large", doc)
	case len(g.docOf) >= math.MaxInt32-1:
		return fmt.Errorf("ann: insert doc %d: graph full", doc)
	}
	return nil
}

// insertPlan is a node about to be added: its level and its links per layer
// (links[l], most similar first), chosen against the graph as it stood.
type insertPlan struct {
	doc   uint32
	level int
	links [][]cand
}

// plan chooses doc's links for a node of level lvl. It only reads the graph
// (and writes sc), so plans for many documents can be made at once.
func (g *Graph) plan(src Source, doc uint32, lvl int, sc *scratch) insertPlan {
	p := insertPlan{doc: doc, level: lvl}
	if g.entry < 0 {
		return p
	}
	c, s, _ := src.Code(doc)
	q := queryOf(c, s)
	ep := uint32(g.entry)
	epSim := g.sim(src, q, ep)
	for l := g.top; l > lvl; l-- {
		ep, epSim = g.greedy(src, q, ep, epSim, l)
	}
	w := newWalker(len(g.docOf))
	defer w.release()
	eps := []cand{{ep, epSim}}
	p.links = make([][]cand, min(lvl, g.top)+1)
	for l := min(lvl, g.top); l >= 0; l-- {
		found := g.searchLayer(src, q, eps, g.p.EfConstruction, l, w)
		keep := g.p.M
		if l == 0 {
			keep = g.m0
		}
		p.links[l] = slices.Clone(g.selectNeighbours(src, found, keep, sc))
		eps = found
	}
	return p
}

// appendNode adds the planned node with its own links (not the reverse ones),
// and makes it the entry when it is the highest.
func (g *Graph) appendNode(p insertPlan) {
	n := uint32(len(g.docOf))
	g.docOf = append(g.docOf, p.doc)
	g.level = append(g.level, uint8(p.level))
	g.links0 = append(g.links0, make([]uint32, g.m0)...)
	g.sims0 = append(g.sims0, make([]float32, g.m0)...)
	g.cnt0 = append(g.cnt0, 0)
	if w := int(n >> 6); w >= len(g.dead) {
		g.dead = append(g.dead, 0)
	}
	if p.level > 0 {
		g.upper[n] = make([]layerLinks, p.level)
	}
	if int(p.doc) >= len(g.nodeOf) {
		g.nodeOf = append(g.nodeOf, make([]int32, int(p.doc)+1-len(g.nodeOf))...)
	}
	g.nodeOf[p.doc] = int32(n) + 1
	g.live++
	for l, cs := range p.links {
		g.setLinks(n, l, cs)
	}
	if g.entry < 0 || p.level > g.top {
		g.entry, g.top = int32(n), p.level
	}
}

// InsertBatch inserts docs (each with a vector in src, none in the graph yet
// or it is tombstoned first) as Insert would one by one, on up to workers
// goroutines: a chunk's links are chosen in parallel against the graph built
// so far, then its nodes are appended, and the reverse links are added in
// parallel by target node (each goroutine owns the lists of its targets).
// Nodes of one chunk are not linked to each other directly; chunks are a
// small fraction of the graph, and later nodes link them. It is meant for
// bulk builds: the result is deterministic for a given workers count.
func (g *Graph) InsertBatch(docs []uint32, src Source, workers int) error {
	for _, d := range docs {
		if err := g.checkInsert(d, src); err != nil {
			return err
		}
	}
	workers = max(1, workers)
	i := 0
	for ; i < len(docs) && (workers == 1 || len(g.docOf) < 1024); i++ {
		if err := g.Insert(docs[i], src); err != nil {
			return err
		}
	}
	scs := make([]scratch, workers)
	for i < len(docs) {
		chunk := min(len(docs)-i, max(64, min(len(g.docOf)/64, 256)))
		batch := docs[i : i+chunk]
		i += chunk
		for _, d := range batch {
			if g.Has(d) {
				g.deleteNode(uint32(g.nodeOf[d]-1), src)
			}
		}
		base := uint32(len(g.docOf))
		plans := make([]insertPlan, len(batch))
		parallel.Split(workers, len(batch), func(w, lo, hi int) {
			for j := lo; j < hi; j++ {
				plans[j] = g.plan(src, batch[j], g.levelFor(base+uint32(j)), &scs[w])
			}
		})
		for _, p := range plans {
			g.appendNode(p)
		}
		parallel.Split(workers, workers, func(w, _, _ int) {
			for j, p := range plans {
				n := base + uint32(j)
				for l, cs := range p.links {
					for _, e := range cs {
						if int(e.node)%workers == w {
							g.addLink(src, e.node, l, n, e.sim, &scs[w])
						}
					}
				}
			}
		})
	}
	return nil
}

// Delete tombstones doc's node, if it has one; src must still hold doc's
// vector (the tombstone keeps a copy of its codes).
func (g *Graph) Delete(doc uint32, src Source) {
	if !g.Has(doc) {
		return
	}
	g.deleteNode(uint32(g.nodeOf[doc]-1), src)
}

func (g *Graph) deleteNode(n uint32, src Source) {
	c, s, _ := src.Code(g.docOf[n])
	g.deadCodes[n] = deadCode{codes: append([]int8(nil), c...), scale: s}
	g.dead[n>>6] |= 1 << (n & 63)
	g.nodeOf[g.docOf[n]] = 0
	g.live--
}

// neighbours returns node n's links on layer l and their similarities to n.
func (g *Graph) neighbours(n uint32, l int) ([]uint32, []float32) {
	if l == 0 {
		o, c := int(n)*g.m0, int(g.cnt0[n])
		return g.links0[o : o+c], g.sims0[o : o+c]
	}
	ls := g.upper[n]
	if l-1 >= len(ls) {
		return nil, nil
	}
	return ls[l-1].links, ls[l-1].sims
}

func (g *Graph) setLinks(n uint32, l int, cs []cand) {
	if l == 0 {
		o := int(n) * g.m0
		for i, c := range cs {
			g.links0[o+i], g.sims0[o+i] = c.node, c.sim
		}
		g.cnt0[n] = uint8(len(cs))
		return
	}
	ll := layerLinks{links: make([]uint32, len(cs), g.p.M), sims: make([]float32, len(cs), g.p.M)}
	for i, c := range cs {
		ll.links[i], ll.sims[i] = c.node, c.sim
	}
	g.upper[n][l-1] = ll
}

// addLink adds the edge e→n (similarity s) on layer l. A full list drops its
// least similar entry when n is more similar than it, else stays as it is.
func (g *Graph) addLink(src Source, e uint32, l int, n uint32, s float32, sc *scratch) {
	capacity := g.p.M
	if l == 0 {
		capacity = g.m0
	}
	links, sims := g.neighbours(e, l)
	if len(links) < capacity {
		if l == 0 {
			o := int(e)*g.m0 + len(links)
			g.links0[o], g.sims0[o] = n, s
			g.cnt0[e]++
		} else {
			ll := &g.upper[e][l-1]
			ll.links = append(ll.links, n)
			ll.sims = append(ll.sims, s)
		}
		return
	}
	// Overflow: prune the capacity+1 candidates (e's links and n) with the
	// neighbour heuristic, as HNSW does, to at most 7/8 of capacity, so the
	// next few links are plain appends: one heuristic pass (a few hundred
	// kernel calls) per several links, not one on every link of a hub.
	cs := make([]cand, 0, len(links)+1)
	for i, x := range links {
		cs = append(cs, cand{x, sims[i]})
	}
	cs = append(cs, cand{n, s})
	slices.SortStableFunc(cs, func(a, b cand) int { return cmp.Compare(b.sim, a.sim) }) // best first
	kept := g.selectNeighbours(src, cs, capacity-capacity/overflowSlack, sc)
	if l == 0 {
		o := int(e) * g.m0
		for i, c := range kept {
			g.links0[o+i], g.sims0[o+i] = c.node, c.sim
		}
		g.cnt0[e] = uint8(len(kept))
		return
	}
	ll := &g.upper[e][l-1]
	ll.links, ll.sims = ll.links[:0], ll.sims[:0]
	for _, c := range kept {
		ll.links = append(ll.links, c.node)
		ll.sims = append(ll.sims, c.sim)
	}
}

// selectNeighbours is the HNSW neighbour heuristic (the paper's algorithm 4,
// without keeping pruned candidates): take candidates most similar first,
// keeping one only when no node kept so far is closer to it than the base
// node by a factor pruneAlpha (distance 1 − cosine), so links spread in
// direction instead of bunching in one cluster. cs must be most similar first.
func (g *Graph) selectNeighbours(src Source, cs []cand, keep int, sc *scratch) []cand {
	if len(cs) <= keep {
		return cs
	}
	chosen := make([]cand, 0, keep)
	var skipped []cand
	// The kept nodes' codes as queries, widened once each into the caller's scratch.
	if len(sc.rows) < keep*g.dim {
		sc.rows = make([]int16, g.m0*g.dim)
		sc.scale = make([]float32, g.m0)
	}
	for _, c := range cs {
		if len(chosen) == keep {
			break
		}
		ok := true
		for i := range chosen {
			q := query{codes: sc.rows[i*g.dim : (i+1)*g.dim], scale: sc.scale[i]}
			if pruneAlpha*(1-g.sim(src, q, c.node)) < 1-c.sim {
				ok = false
				break
			}
		}
		if ok {
			i := len(chosen)
			cc, s := g.code(src, c.node)
			row := sc.rows[i*g.dim : (i+1)*g.dim]
			for j, x := range cc[:g.dim] {
				row[j] = int16(x)
			}
			sc.scale[i] = s
			chosen = append(chosen, c)
		} else {
			skipped = append(skipped, c)
		}
	}
	// Keep at least minDegree links: on tightly clustered data (embeddings
	// share a large common component) the rule alone leaves nodes with a
	// handful of links, too few to navigate.
	for _, c := range skipped {
		if len(chosen) >= min(keep, g.minDegree()) {
			break
		}
		chosen = append(chosen, c)
	}
	return chosen
}
