package weaviate

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/engram-memory/engram/backend"
	"github.com/engram-memory/engram/memory"
)

// Legs runs the BM25 and vector legs concurrently, each a Weaviate query with
// the filter inside.
func (b *Backend) Legs(ctx context.Context, q backend.LegQuery) (*backend.LegResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	res := &backend.LegResult{}
	if q.K <= 0 {
		return res, nil
	}
	lq := LegQuery{Text: q.Text, Vector: q.Vector, Model: q.Model, Filter: q.Filter, K: min(q.K, MaxK), WithVectors: q.WithVectors,
		Lean: lean(q.K, q.WithVectors), Windows: q.Windows}
	var (
		wg            sync.WaitGroup
		bmErr, vecErr error
		bmHits        []Hit
		vecHits       []Hit
		bound         float64
	)
	var bndErr error
	if q.Text != "" {
		wg.Add(2)
		go func() {
			defer wg.Done()
			t := time.Now()
			bmHits, bmErr = b.s.BM25(ctx, lq)
			res.BM25Took = time.Since(t)
		}()
		go func() { defer wg.Done(); bound, bndErr = b.bound(ctx, q.Text, q.Filter.Scope) }()
	}
	if q.Vector != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := time.Now()
			vecHits, vecErr = b.s.NearVector(ctx, lq)
			if errors.Is(vecErr, ErrNoVectors) {
				vecHits, vecErr = nil, nil
			}
			res.VectorTook = time.Since(t)
		}()
	}
	wg.Wait()
	if err := errors.Join(bmErr, vecErr, bndErr); err != nil {
		return nil, err
	}
	res.BM25, res.Vector, res.Bound = toHits(bmHits, q.WithVectors, q.Model), toHits(vecHits, q.WithVectors, q.Model), bound
	return res, nil
}

// toHits turns the store's hits into the seam's, moving each vector of model
// out of its memory (a leg's memory comes without its vector).
func toHits(hs []Hit, withVectors bool, model string) []backend.Hit {
	out := make([]backend.Hit, len(hs))
	for i, h := range hs {
		out[i] = backend.Hit{Memory: h.Memory, Score: h.Score}
		if e := h.Memory.Embedding; e != nil {
			if withVectors && e.Model == model && len(e.Vector) > 0 {
				out[i].Vector = e.Vector
			}
			c := *e
			c.Vector = nil
			h.Memory.Embedding = &c
		}
	}
	return out
}

// FullLegDepth is the deepest leg that reads whole memories. A leg that
// deep (an agent's search of up to 25 results: 5 candidates a result) costs
// about what a lean one does, Weaviate reading each object whole either way,
// and the engine's Complete, a second round trip after the legs, then reads
// nothing; deeper legs read lean memories and Complete the few kept. SciFact
// (abstracts of about 1.5 KB, the long end of memories), two legs at once, p50
// on one idle node: full 5.5 ms against lean and Complete 7.7 ms at 50 deep,
// 8.7 against 10.1 at 100, 20.7 against 20.0 at 250, 51.6 against 36.7 at 500.
const FullLegDepth = 128

// lean says whether a leg k deep reads lean memories: deeper than
// FullLegDepth, unless the vectors are wanted, which only a full read carries.
func lean(k int, withVectors bool) bool { return !withVectors && k > FullLegDepth }

// NativeRRFK is Weaviate's rankedFusion k in Engram's terms: Weaviate adds
// w/(60+i) with i the 0-based rank, which is w/(59+rank) with Engram's
// 1-based ranks (TestExplainRanks reads it back from explainScore).
const NativeRRFK = weaviateRRFK - 1

// Complete reads the full memories (vectors left out) of the partial ones
// the legs returned, by object UUID, one gRPC search per tenant. A memory a
// leg read whole (FullLegDepth) has its text, which every stored memory has
// and a lean one lacks: it is returned as it is, and when all are, Complete
// makes no request.
func (b *Backend) Complete(ctx context.Context, partial []*memory.Memory) ([]*memory.Memory, error) {
	byTenant := map[string][]string{}
	for _, m := range partial {
		if m.Text != "" {
			continue
		}
		t := b.s.tenantOf(m.Scope)
		byTenant[t] = append(byTenant[t], KeyID(m.ID, m.Scope))
	}
	tenants := make([]string, 0, len(byTenant))
	for t := range byTenant {
		tenants = append(tenants, t)
	}
	found := make([]map[string]*memory.Memory, len(tenants))
	err := eachTenant(ctx, tenants, func(ctx context.Context, i int, tenant string) error {
		uuids := byTenant[tenant]
		found[i] = make(map[string]*memory.Memory, len(uuids))
		for start := 0; start < len(uuids); start += maxIDsPerRequest {
			chunk := uuids[start:min(start+maxIDsPerRequest, len(uuids))]
			ms, err := b.s.byUUIDs(ctx, tenant, chunk)
			if err != nil {
				return err
			}
			for _, m := range ms {
				found[i][m.Key()] = m
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read the results: %w", err)
	}
	all := map[string]*memory.Memory{}
	for _, f := range found {
		for k, m := range f {
			all[k] = m
		}
	}
	out := make([]*memory.Memory, len(partial))
	for i, m := range partial {
		if m.Text != "" {
			out[i] = m
		} else {
			out[i] = all[m.Key()]
		}
	}
	return out, nil
}

// Hybrid is one Weaviate hybrid query with rankedFusion, the filter inside,
// Engram's weights as alpha; both legs also run on their own, concurrently,
// so that every hit carries each leg's rank and score for explain and the
// relevance signal.
func (b *Backend) Hybrid(ctx context.Context, q backend.HybridQuery) (*backend.HybridResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	t := time.Now()
	res := &backend.HybridResult{}
	if q.K <= 0 {
		return res, nil
	}
	hq := HybridQuery{
		LegQuery: LegQuery{Text: q.Text, Vector: q.Vector, Model: q.Model, Filter: q.Filter, K: min(q.K, MaxK), WithVectors: q.WithVectors,
			Lean: lean(q.K, q.WithVectors), Windows: q.Windows},
		BM25Weight: q.BM25Weight, VectorWeight: q.VectorWeight, Fusion: FusionRRF, Explain: true,
	}
	var (
		wg     sync.WaitGroup
		bound  float64
		bndErr error
	)
	if q.Text != "" && q.BM25Weight > 0 {
		wg.Add(1)
		go func() { defer wg.Done(); bound, bndErr = b.bound(ctx, q.Text, q.Filter.Scope) }()
	}
	hits, err := b.s.Hybrid(ctx, hq)
	wg.Wait()
	if errors.Is(err, ErrNoVectors) {
		err = nil
	}
	if err := errors.Join(err, bndErr); err != nil {
		return nil, err
	}
	for _, h := range hits {
		hh := backend.HybridHit{Hit: backend.Hit{Memory: h.Memory, Score: h.Score}}
		if e := h.Memory.Embedding; e != nil {
			if q.WithVectors && e.Model == q.Model && len(e.Vector) > 0 {
				hh.Vector = e.Vector
			}
			c := *e
			c.Vector = nil
			h.Memory.Embedding = &c
		}
		if h.BM25 != nil {
			hh.BM25Leg = backend.LegPlace{Rank: h.BM25.Rank, Score: h.BM25.Score}
		}
		if h.Vector != nil {
			hh.VectorLeg = backend.LegPlace{Rank: h.Vector.Rank, Score: h.Vector.Cosine}
		}
		res.Hits = append(res.Hits, hh)
	}
	res.Bound, res.Took, res.K = bound, time.Since(t), NativeRRFK
	return res, nil
}

// bound is the keyword relevance bound of a query (backend.LegResult.Bound)
// with the statistics Weaviate scores by: those of the tenant the scope
// names. A scope that names no tenant reaches several, each scored by its
// own statistics: the bound is then the largest of theirs, so that no hit's
// relevance is overstated. 0 with the word tokenizer, whose terms cannot be
// counted.
func (b *Backend) bound(ctx context.Context, text string, scope map[string]string) (float64, error) {
	if b.s.tok == nil {
		return 0, nil
	}
	terms := b.s.tok.Tokens(text)
	if len(terms) == 0 {
		return 0, nil
	}
	tenants, err := b.s.tenantsFor(ctx, scope)
	if err != nil {
		return 0, err
	}
	bounds := make([]float64, len(tenants))
	err = eachTenant(ctx, tenants, func(ctx context.Context, i int, tenant string) error {
		n, df, err := b.s.termStats(ctx, tenant, terms)
		if err != nil {
			return err
		}
		bounds[i] = queryBound(terms, n, df, b.s.cfg.K1)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("keyword bound: %w", err)
	}
	var out float64
	for _, x := range bounds {
		out = max(out, x)
	}
	return out, nil
}

// queryBound is internal/bm25's QueryBound over n documents with these
// document frequencies: Σ over the query's terms of idf·(k1+1), a term no
// document holds at idf(n, 0).
func queryBound(terms []string, n int, df map[string]int, k1 float64) float64 {
	if n == 0 {
		return 0
	}
	idf := func(f int) float64 { return math.Log(1 + (float64(n-f)+0.5)/(float64(f)+0.5)) }
	var out float64
	for _, t := range terms {
		out += idf(df[t]) * (k1 + 1)
	}
	return out
}

// modelDim reads the dimension of one stored vector of model (0: none left).
func (s *Store) modelDim(ctx context.Context, model string) (int, error) {
	tenants, err := s.Tenants(ctx)
	if err != nil {
		return 0, err
	}
	if s.cfg.TenantKey == "" {
		tenants = []string{""}
	}
	for _, tenant := range tenants {
		objs, err := s.get(ctx, tenant, "where:"+string(cond(pModel, "Equal", "valueText", gqlString(model)))+",limit:1", pDim+" _additional{id}")
		if err != nil {
			return 0, fmt.Errorf("dimension of model %s: %w", model, err)
		}
		if len(objs) > 0 && objs[0].Dim > 0 {
			return int(objs[0].Dim), nil
		}
	}
	return 0, nil
}
