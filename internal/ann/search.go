package ann

// Searching the graph. Upper layers are walked greedily without the filter
// (they only find the region); layer 0 is a best-first search with a
// candidate list of ef. With an allow-list, only allowed live nodes are
// scored and kept; when most of a node's neighbours are filtered out, the
// walk also looks at the neighbours of those neighbours (ACORN-1's two-hop
// expansion), so a sparse filter does not cut the graph into islands. Every
// scored node counts against a budget; a walk that would score more nodes
// than the filter allows gives up, since an exact scan of the allowed
// documents is then cheaper and exact.

import (
	"math"
	"sync"

	"github.com/engram-memory/engram/internal/docset"
	"github.com/engram-memory/engram/internal/vector"
)

// seedBeam is the beam width over layer 1 that seeds layer 0 (1: greedy).
var seedBeam = 64

type cand struct {
	node uint32
	sim  float32
}

// walker marks visited nodes with an epoch number, so a search clears nothing.
type walker struct {
	mark  []uint32
	epoch uint32
	b     batch
}

// batch is the nodes about to be scored, with their codes: all codes are
// looked up and prefetched first and then scored, so the memory loads of one
// node's neighbours overlap instead of waiting on each other (in a large
// graph nearly every code row is a cache miss).
type batch struct {
	nodes  []uint32
	codes  [][]int8
	scales []float32
	sims   []float32
}

// score fills b.sims with the similarity of q to each of b.nodes.
func (g *Graph) score(src Source, q query, b *batch) []float32 {
	n := len(b.nodes)
	if cap(b.codes) < n {
		b.codes = make([][]int8, n)
		b.scales = make([]float32, n)
		b.sims = make([]float32, n)
	}
	codes, scales, sims := b.codes[:n], b.scales[:n], b.sims[:n]
	for i, x := range b.nodes {
		codes[i], scales[i] = g.code(src, x)
		vector.Prefetch(codes[i])
	}
	for i, c := range codes {
		if len(c) < len(q.codes) {
			sims[i] = float32(math.Inf(-1)) // a source out of step with the graph: never chosen
			continue
		}
		sims[i] = q.scale * scales[i] * float32(vector.DotInt8(q.codes, c))
	}
	return sims
}

var walkers sync.Pool

func newWalker(n int) *walker {
	w, _ := walkers.Get().(*walker)
	if w == nil {
		w = &walker{}
	}
	if len(w.mark) < n {
		w.mark = make([]uint32, n+n/4)
		w.epoch = 0
	}
	w.epoch++
	if w.epoch == 0 { // wrapped: start over
		clear(w.mark)
		w.epoch = 1
	}
	return w
}

func (w *walker) release() { walkers.Put(w) }

// visit marks n and reports whether it was unmarked.
func (w *walker) visit(n uint32) bool {
	if w.mark[n] == w.epoch {
		return false
	}
	w.mark[n] = w.epoch
	return true
}

// maxHeap and minHeap order candidates by similarity.
type maxHeap []cand

func (h *maxHeap) push(c cand) {
	*h = append(*h, c)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if s[p].sim >= s[i].sim {
			break
		}
		s[p], s[i] = s[i], s[p]
		i = p
	}
}

func (h *maxHeap) pop() cand {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	s = s[:last]
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < len(s) && s[l].sim > s[m].sim {
			m = l
		}
		if r := l + 1; r < len(s) && s[r].sim > s[m].sim {
			m = r
		}
		if m == i {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	*h = s
	return top
}

// minHeap keeps the best ef: its root is the worst kept.
type minHeap []cand

func (h *minHeap) push(c cand) {
	*h = append(*h, c)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if s[p].sim <= s[i].sim {
			break
		}
		s[p], s[i] = s[i], s[p]
		i = p
	}
}

func (h *minHeap) pop() cand {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	s = s[:last]
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < len(s) && s[l].sim < s[m].sim {
			m = l
		}
		if r := l + 1; r < len(s) && s[r].sim < s[m].sim {
			m = r
		}
		if m == i {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	*h = s
	return top
}

// offer keeps c among the best ef.
func (h *minHeap) offer(c cand, ef int) {
	if len(*h) < ef {
		h.push(c)
		return
	}
	if c.sim > (*h)[0].sim {
		h.pop()
		h.push(c)
	}
}

// bestFirst empties h into a slice, most similar first.
func (h *minHeap) bestFirst() []cand {
	out := make([]cand, len(*h))
	for i := len(out) - 1; i >= 0; i-- {
		out[i] = h.pop()
	}
	return out
}

// greedy walks layer l from ep to the most similar node it can reach.
func (g *Graph) greedy(src Source, q query, ep uint32, epSim float32, l int) (uint32, float32) {
	for changed := true; changed; {
		changed = false
		links, _ := g.neighbours(ep, l)
		for _, n := range links {
			if s := g.sim(src, q, n); s > epSim {
				ep, epSim, changed = n, s, true
			}
		}
	}
	return ep, epSim
}

// searchLayer is the construction search: best-first over layer l from eps,
// keeping the ef most similar live nodes (dead ones are walked through),
// most similar first.
func (g *Graph) searchLayer(src Source, q query, eps []cand, ef, l int, w *walker) []cand {
	w.epoch++
	if w.epoch == 0 {
		clear(w.mark)
		w.epoch = 1
	}
	var cands maxHeap
	var best minHeap
	for _, e := range eps {
		if w.visit(e.node) {
			cands.push(e)
			if !g.isDead(e.node) {
				best.offer(e, ef)
			}
		}
	}
	for len(cands) > 0 {
		c := cands.pop()
		if len(best) >= ef && c.sim < best[0].sim {
			break
		}
		links, _ := g.neighbours(c.node, l)
		w.b.nodes = w.b.nodes[:0]
		for _, n := range links {
			if w.visit(n) {
				w.b.nodes = append(w.b.nodes, n)
			}
		}
		for i, s := range g.score(src, q, &w.b) {
			n := w.b.nodes[i]
			if len(best) < ef || s > best[0].sim {
				cands.push(cand{n, s})
				if !g.isDead(n) {
					best.offer(cand{n, s}, ef)
				}
			}
		}
	}
	return best.bestFirst()
}

// Query is a search request.
type Query struct {
	Codes []int16 // the query's int8 codes widened (vector.QueryCodes)
	Scale float32
	// Allow limits results to these documents; nil allows every one.
	Allow *docset.Set
	// Allowed is Allow's size (or the number of vectors for nil): the
	// budget of scored nodes beyond which the walk gives up.
	Allowed int
	K, Ef   int
}

// Result is one candidate: a document and its approximate (int8) cosine.
type Result struct {
	Doc uint32
	Sim float32
}

// Search returns up to max(Ef, K) allowed live documents nearest q, most
// similar first by their int8 cosine (callers rescore them exactly). ok is
// false when the walk gave up (it would have scored more nodes than
// q.Allowed) or found fewer than min(K, q.Allowed) documents: the caller
// must then search exactly. Safe for concurrent use with other searches.
func (g *Graph) Search(src Source, q Query) (res []Result, ok bool) {
	if g.live == 0 {
		return nil, true
	}
	if len(q.Codes) != g.dim || q.K < 1 {
		return nil, false
	}
	ef := max(q.Ef, q.K)
	qq := query{codes: q.Codes, scale: q.Scale}
	ep := uint32(g.entry)
	epSim := g.sim(src, qq, ep)
	for l := g.top; l > 1; l-- {
		ep, epSim = g.greedy(src, qq, ep, epSim, l)
	}
	w := newWalker(len(g.docOf))
	defer w.release()
	// Seeds for layer 0: a beam over layer 1 rather than its one greedy
	// best, so a query unlike any stored vector (a short text against long
	// ones) starts from several regions.
	seeds := []cand{{ep, epSim}}
	if g.top >= 1 && seedBeam > 1 {
		seeds = g.searchLayer(src, qq, seeds, seedBeam, 1, w)
		if len(seeds) == 0 {
			seeds = []cand{{ep, epSim}}
		}
	}
	w.epoch++ // layer 0 starts unvisited
	if w.epoch == 0 {
		clear(w.mark)
		w.epoch = 1
	}
	allowed := func(n uint32) bool { return !g.isDead(n) && q.Allow.Has(g.docOf[n]) }
	budget := q.Allowed
	if budget <= 0 {
		budget = math.MaxInt
	}
	var cands maxHeap
	var best minHeap
	for _, s := range seeds {
		w.visit(s.node)
		cands.push(s)
		if allowed(s.node) {
			best.offer(s, ef)
		}
	}
	scored := len(seeds)
	var blocked []uint32
	for len(cands) > 0 {
		c := cands.pop()
		if len(best) >= ef && c.sim < best[0].sim {
			break
		}
		links, _ := g.neighbours(c.node, 0)
		nb := w.b.nodes[:0]
		if q.Allow == nil {
			for _, n := range links {
				if w.visit(n) {
					nb = append(nb, n)
				}
			}
			w.b.nodes = nb
			// Unfiltered: dead nodes are walked through, not returned.
			for i, s := range g.score(src, qq, &w.b) {
				n := nb[i]
				scored++
				if len(best) < ef || s > best[0].sim {
					cands.push(cand{n, s})
					if !g.isDead(n) {
						best.offer(cand{n, s}, ef)
					}
				}
			}
		} else {
			blocked = blocked[:0]
			for _, n := range links {
				// Filtered nodes are not marked: another node's expansion
				// may need to hop through them too.
				if !allowed(n) {
					blocked = append(blocked, n)
				} else if w.visit(n) {
					nb = append(nb, n)
				}
			}
			// Two hops when most neighbours were filtered out, up to a
			// full list's worth of allowed nodes.
			if len(blocked) > len(links)/2 {
			hop:
				for _, b := range blocked {
					links2, _ := g.neighbours(b, 0)
					for _, n := range links2 {
						if len(nb) >= g.m0 {
							break hop
						}
						if allowed(n) && w.visit(n) {
							nb = append(nb, n)
						}
					}
				}
			}
			w.b.nodes = nb
			for i, s := range g.score(src, qq, &w.b) {
				scored++
				if len(best) < ef || s > best[0].sim {
					cands.push(cand{nb[i], s})
					best.offer(cand{nb[i], s}, ef)
				}
			}
		}
		if scored > budget {
			return nil, false
		}
	}
	out := best.bestFirst()
	if len(out) < min(q.K, q.Allowed) {
		return nil, false
	}
	res = make([]Result, len(out))
	for i, c := range out {
		res[i] = Result{Doc: g.docOf[c.node], Sim: c.sim}
	}
	return res, true
}
