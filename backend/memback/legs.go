package memback

import (
	"cmp"
	"context"
	"math"
	"slices"
	"time"

	"github.com/engram-memory/engram/backend"
	"github.com/engram-memory/engram/memory"
)

// scored is a memory with a leg's score.
type scored struct {
	m     *memory.Memory
	score float64
	rel   float64 // the relevance score, when it is not score
}

// top is the best k of hits, by score, a tie broken by memory key (as the
// SQLite backend cuts a tie at the k-th hit).
func top(hits []scored, k int) []scored {
	slices.SortFunc(hits, func(a, b scored) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return cmp.Compare(a.m.Key(), b.m.Key())
	})
	return hits[:min(len(hits), max(k, 0))]
}

// withWindows is a leg's best k and, after them, its best k among the
// memories that occurred inside one of windows, none twice
// (backend.LegQuery.Windows).
func withWindows(hits []scored, k int, windows []memory.TimeWindow) []scored {
	var in []scored
	for _, h := range hits {
		if memory.In(windows, h.m.OccurredAt) {
			in = append(in, h)
		}
	}
	out := slices.Clone(top(hits, k))
	if len(windows) == 0 {
		return out
	}
	seen := map[string]bool{}
	for _, h := range out {
		seen[h.m.Key()] = true
	}
	for _, h := range top(in, k) {
		if !seen[h.m.Key()] {
			out = append(out, h)
		}
	}
	return out
}

// searchable reports whether a vector can be compared: some values, all
// finite, not all zero.
func searchable(v []float32) bool {
	return len(v) > 0 && memory.CheckVector(v) == nil
}

// unit is v scaled to length 1.
func unit(v []float32) []float32 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	n = math.Sqrt(n)
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(float64(x) / n)
	}
	return out
}

// Cosine is the cosine of the angle between a and b (of one length), in
// float64: the vector leg's score.
func Cosine(a, b []float32) float64 {
	var d, na, nb float64
	for i := range a {
		d += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return d / math.Sqrt(na*nb)
}

// Legs runs the BM25 leg and the vector leg over every memory q.Filter
// admits (memory.Filter.Match, supersession derived first), BM25 with the
// statistics of q.Filter.Scope's memories (bm25.go).
func (b *Backend) Legs(ctx context.Context, q backend.LegQuery) (*backend.LegResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	b.mu.RLock()
	defer b.mu.RUnlock()
	res := &backend.LegResult{}
	all := b.view()
	if q.Text != "" || q.Terms != nil {
		t := time.Now()
		terms := q.Terms
		if terms == nil {
			terms = b.tok.Tokens(q.Text)
		}
		docs := b.analyzeOf(all, q.Filter.Scope)
		s := statsOf(docs, terms)
		relN := 0 // the N the relevance signal reads, when not s.n
		if s.n > 0 && s.n < b.p.RelevanceMinDocs {
			relN = b.p.RelevanceMinDocs
		}
		var hits []scored
		for _, d := range docs {
			if !q.Filter.Match(d.m) {
				continue
			}
			if sc := b.p.score(s, s.n, d); sc > 0 {
				h := scored{m: d.m, score: sc}
				if relN > 0 {
					h.rel = b.p.score(s, relN, d)
				}
				hits = append(hits, h)
			}
		}
		res.Bound = b.p.bound(s, s.n)
		if relN > 0 {
			res.Bound = b.p.bound(s, relN)
		}
		for _, h := range withWindows(hits, q.K, q.Windows) {
			hit := b.hit(h.m, h.score, q)
			hit.RelevanceScore = h.rel
			res.BM25 = append(res.BM25, hit)
		}
		res.BM25Took = time.Since(t)
	}
	if q.Vector != nil && searchable(q.Vector) {
		t := time.Now()
		var hits []scored
		for _, m := range all {
			e := m.Embedding
			if e == nil || e.Model != q.Model || len(e.Vector) != len(q.Vector) || !searchable(e.Vector) || !q.Filter.Match(m) {
				continue
			}
			hits = append(hits, scored{m: m, score: Cosine(q.Vector, e.Vector)})
		}
		for _, h := range withWindows(hits, q.K, q.Windows) {
			res.Vector = append(res.Vector, b.hit(h.m, h.score, q))
		}
		res.VectorTook = time.Since(t)
	}
	return res, nil
}

// hit is m as a leg returns it: without its vector, and with its vector of
// q.Model, of length 1, when q asks.
func (b *Backend) hit(m *memory.Memory, score float64, q backend.LegQuery) backend.Hit {
	h := backend.Hit{Memory: withoutVector(m), Score: score}
	if e := m.Embedding; q.WithVectors && e != nil && e.Model == q.Model && searchable(e.Vector) {
		h.Vector = unit(e.Vector)
	}
	return h
}
