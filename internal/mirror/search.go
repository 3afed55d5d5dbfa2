package mirror

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"time"

	"github.com/engram-memory/engram/backend"
	"github.com/engram-memory/engram/internal/bm25"
	"github.com/engram-memory/engram/internal/docset"
	"github.com/engram-memory/engram/internal/index"
	"github.com/engram-memory/engram/internal/vector"
	"github.com/engram-memory/engram/memory"
)

// The read side: a mirror (and a fork of it) is a backend.Searcher. Every read
// holds the read lock only while it reads the index; the memories it hands
// out are never changed afterwards (a change replaces the pointer), so callers
// keep them without a lock.

var _ backend.Searcher = (*Mirror)(nil)

// Models counts the indexed vectors per embedding model, with their dimension.
func (m *Mirror) Models(ctx context.Context) (map[string]backend.ModelInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := map[string]backend.ModelInfo{}
	for model, n := range m.ix.Models() {
		out[model] = backend.ModelInfo{Dim: m.ix.Vectors(model).Dim(), Count: n}
	}
	return out, nil
}

// Legs runs the BM25 and vector legs concurrently over the documents the
// filter admits, compiled once for both, under one read lock. Where vector
// rows read from the snapshot fail their checksum (checked as first read:
// internal/vector/check.go), the index is rebuilt from the database and the
// legs run again on it.
func (m *Mirror) Legs(ctx context.Context, q backend.LegQuery) (*backend.LegResult, error) {
	res, ix, err := m.legs(ctx, q)
	if err != nil {
		return nil, err
	}
	if cause := ix.Corrupt(); cause != nil {
		if err := m.rebuildCorrupt(ctx, ix, cause); err != nil {
			return nil, err
		}
		res, _, err = m.legs(ctx, q)
	}
	return res, err
}

// legs is Legs on the index as it is, which it returns.
func (m *Mirror) legs(ctx context.Context, q backend.LegQuery) (*backend.LegResult, *index.Index, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	ix := m.ix
	res := &backend.LegResult{}
	t0 := time.Now()
	allow := ix.Allowed(&q.Filter)
	domain := ix.Domain(q.Filter.Scope)
	// The memories inside the query's time windows, searched again so
	// that the best of them reach the engine's boost (nil: no windows).
	var inWindow *docset.Set
	if len(q.Windows) > 0 {
		inWindow = ix.OccurredIn(q.Windows, allow)
	}
	res.FilterTook = time.Since(t0)
	var (
		wg     sync.WaitGroup
		bmHits []bm25.Hit
		// relScores are the BM25 hits' relevance scores when they are not
		// their scores (backend.Hit.RelevanceScore).
		relScores []float64
		vecHits   []vector.Hit
	)
	terms := q.Terms
	if terms == nil && q.Text != "" {
		terms = ix.Tokenizer().Tokens(q.Text) // once, for the leg and its relevance
	}
	if q.Text != "" || q.Terms != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := time.Now()
			var bound float64
			search := func(allow *docset.Set) []bm25.Hit {
				return topByKey(ix, q.K, func(n int) []bm25.Hit {
					var hits []bm25.Hit
					hits, bound = ix.BM25Terms(terms, domain, allow, n)
					return hits
				}, func(h bm25.Hit) float64 { return h.Score }, func(h bm25.Hit) uint32 { return h.Doc })
			}
			bmHits = search(allow)
			if inWindow != nil {
				main := bound
				bmHits = appendNew(bmHits, search(inWindow), func(h bm25.Hit) uint32 { return h.Doc })
				bound = main
			}
			res.Bound = bound
			// A small scope's relevance signal is read as a larger one's.
			docs := make([]uint32, len(bmHits))
			for i, h := range bmHits {
				docs[i] = h.Doc
			}
			if rel, b, ok := ix.KeywordRelevanceTerms(terms, domain, docs); ok {
				relScores, res.Bound = rel, b
			}
			res.BM25Took = time.Since(t)
		}()
	}
	vi := ix.Vectors(q.Model)
	if q.Vector != nil && vi != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := time.Now()
			search := func(allow *docset.Set) []vector.Hit {
				return topByKey(ix, q.K, func(n int) []vector.Hit {
					hits, _ := ix.VectorSearch(q.Model, q.Vector, allow, n)
					return hits
				},
					func(h vector.Hit) float64 { return float64(h.Cosine) }, func(h vector.Hit) uint32 { return h.Doc })
			}
			vecHits = search(allow)
			if inWindow != nil {
				vecHits = appendNew(vecHits, search(inWindow), func(h vector.Hit) uint32 { return h.Doc })
			}
			res.VectorTook = time.Since(t)
		}()
	}
	wg.Wait()
	if !q.WithVectors {
		vi = nil
	}
	res.BM25 = make([]backend.Hit, len(bmHits))
	for i, h := range bmHits {
		res.BM25[i] = hit(ix, vi, h.Doc, h.Score)
		if relScores != nil {
			res.BM25[i].RelevanceScore = relScores[i]
		}
	}
	res.Vector = make([]backend.Hit, len(vecHits))
	for i, h := range vecHits {
		res.Vector[i] = hit(ix, vi, h.Doc, float64(h.Cosine))
	}
	return res, ix, nil
}

// appendNew appends to hits those of more whose document it lacks.
func appendNew[H any](hits, more []H, doc func(H) uint32) []H {
	seen := make(map[uint32]bool, len(hits))
	for _, h := range hits {
		seen[doc(h)] = true
	}
	for _, h := range more {
		if !seen[doc(h)] {
			hits = append(hits, h)
		}
	}
	return hits
}

// Neighbours returns the memories before and after the memory id names in
// scope (its own scope, exactly) in its episode, up to k each, in episode
// order.
func (m *Mirror) Neighbours(ctx context.Context, scope map[string]string, id string, k int) (before, after []*memory.Memory, err error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	before, after = m.ix.Neighbours(memory.Key(id, scope), k)
	return before, after, nil
}

// hit is document doc as a backend hit, with its vector from vi (a copy)
// when vi is given.
func hit(ix *index.Index, vi *vector.Index, doc uint32, score float64) backend.Hit {
	h := backend.Hit{Memory: ix.Doc(doc), Score: score}
	if vi != nil {
		h.Vector = vi.Vector(doc)
	}
	return h
}

// List returns the memories the filter admits, in key order (id, then
// scope). They are the
// indexed memories themselves: an Embedding names the model and dimension,
// the vector lives in the vector index.
func (m *Mirror) List(f *memory.Filter) []*memory.Memory {
	var out []*memory.Memory
	m.mu.RLock()
	m.ix.Each(m.ix.Allowed(f), func(x *memory.Memory) bool {
		out = append(out, x)
		return true
	})
	m.mu.RUnlock()
	// Documents are mostly numbered in id order already (a load inserts in id
	// order, new ULIDs sort last), which the sort finds quickly.
	sortByKey(out)
	return out
}

// sortByKey sorts memories by id, then scope (memory.Key's order).
func sortByKey(ms []*memory.Memory) {
	slices.SortFunc(ms, func(a, b *memory.Memory) int {
		if c := cmp.Compare(a.ID, b.ID); c != 0 {
			return c
		}
		return cmp.Compare(memory.ScopeJSON(a.Scope), memory.ScopeJSON(b.Scope))
	})
}

// Fork returns a private index for calibration: every memory with its vector
// of model (others' vectors left out), the memories of replace (by
// memory.Key) standing in for those with their keys, built in key order as a
// load is. Fork takes the
// replacements over. The fork never syncs and is never written to.
func (m *Mirror) Fork(model string, replace map[string]*memory.Memory) *Mirror {
	m.mu.RLock()
	vi := m.ix.Vectors(model)
	mems := make([]*memory.Memory, 0, m.ix.Len())
	m.ix.Each(nil, func(x *memory.Memory) bool {
		key := x.Key()
		if r, ok := replace[key]; ok {
			mems = append(mems, r)
			return true
		}
		c := *x
		c.Embedding = nil
		if doc, ok := m.ix.DocOf(key); ok && vi != nil {
			if v := vi.Vector(doc); v != nil {
				c.Embedding = &memory.Embedding{Model: model, Dim: len(v), Vector: v}
			}
		}
		mems = append(mems, &c)
		return true
	})
	m.mu.RUnlock()
	sortByKey(mems)
	f := &Mirror{opts: m.opts, tok: m.tok, params: m.params, log: m.log, snapSeq: -1}
	// A fork lives for one calibration: building a graph would cost more
	// than its searches save, so it searches exactly.
	f.ix = index.New(m.tok, m.params)
	f.ix.SetANN(index.ANNOptions{GraphMin: -1})
	f.ix.SetContext(m.opts.Context)
	f.ix.BeginBatch()
	for _, x := range mems {
		f.ix.Put(x)
	}
	f.ix.EndBatch()
	return f
}

var _ backend.QueryTermer = (*Mirror)(nil)

// QueryTerms tokenizes text as the BM25 leg does and counts, in scope (nil:
// the whole store), the memories holding each distinct term: what a long
// query's reduction ranks its terms by. Its cost is linear in the text.
func (m *Mirror) QueryTerms(ctx context.Context, text string, scope map[string]string) ([]backend.TermCount, int, error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	m.mu.RLock()
	tok := m.ix.Tokenizer()
	m.mu.RUnlock()
	counts := backend.CountTerms(tok.Tokens(text))
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	terms := make([]string, len(counts))
	for i, c := range counts {
		terms[i] = c.Term
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	n, df := m.ix.DocFreq(terms, m.ix.Domain(scope))
	for i := range counts {
		counts[i].DF = df[i]
	}
	return counts, n, nil
}
