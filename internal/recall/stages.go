package recall

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/engram-memory/engram/backend"
	"github.com/engram-memory/engram/embed"
	"github.com/engram-memory/engram/internal/fusion"
	"github.com/engram-memory/engram/memory"
)

// Fusion methods. Native asks the backend to fuse both legs itself
// (backend.Hybrider).
const (
	FusionRRF    = "rrf"
	FusionRSF    = "rsf"
	FusionDBSF   = "dbsf"
	FusionNative = "native"
)

// weights are the legs' fusion weights for this query and where the vector
// weight came from.
func (r *run) weights() (wb, wv float64, source string) {
	s, q := r.s, r.q
	wb, wv = 1.0, s.VectorWeight
	if s.BM25Weight > 0 {
		wb = s.BM25Weight
	}
	source = s.WeightSource
	if q.BM25Weight != nil {
		wb, source = *q.BM25Weight, "query"
	}
	if q.VectorWeight != nil {
		wv, source = *q.VectorWeight, "query"
	}
	return wb, wv, source
}

// reads reports whether the embedder reads m's text: at least half of its
// letters are in scripts the model reads (embed.Reader). A share below 1 is
// kept in r.shares.
func (r *run) reads(m *memory.Memory) bool {
	if m == nil || r.s.Embedder == nil {
		return true
	}
	sh := embed.Share(r.s.Embedder, m.Text)
	if sh < 1 {
		if r.shares == nil {
			r.shares = map[string]float64{}
		}
		r.shares[m.Text] = sh
	}
	return sh >= 0.5
}

// read is the part of a cosine between the query and m that counts towards
// relevance: the product of the shares of the two texts the model reads, 1
// for two texts in its scripts. An English model's cosine between a Chinese
// question naming Kubernetes and a Chinese note naming npm reads a few Latin
// words and scores the rest alike; weighed by what it read, it no longer
// clears the bar (testdata/relevance/zh).
func (r *run) read(m *memory.Memory) float64 {
	sh := r.queryRead
	if m != nil {
		if ms, ok := r.shares[m.Text]; ok {
			sh *= ms
		}
	}
	return sh
}

// readable is the vector leg's hits without the memories written in a
// script the model does not read: their cosines say nothing about meaning
// (an English model scores any two Chinese texts alike), so they are ranked
// on keywords alone, and the response says how many.
func (r *run) readable(hs []backend.Hit) []backend.Hit {
	var out []backend.Hit // nil until a hit is left out
	for i, h := range hs {
		switch {
		case !r.reads(h.Memory):
			if out == nil {
				out = append(make([]backend.Hit, 0, len(hs)), hs[:i]...)
			}
		case out != nil:
			out = append(out, h)
		}
	}
	if out == nil {
		return hs
	}
	r.degrade("vector", fmt.Errorf("%d candidates written in a script model %s does not read were ranked on keywords alone", len(hs)-len(out), r.s.Embedder.Model()))
	return out
}

// gate is BM25's fusion weight wb after the keyword gate (Config.KeywordGate,
// or the query's): when the best keyword relevance among BM25's hits is below
// the gate, the weight shrinks in proportion, and gated says so. With no
// bound to measure relevance against, or no BM25 hit, it is left alone.
func (r *run) gate(wb float64, res *backend.LegResult) (float64, *memory.Gated) {
	g := r.s.KeywordGate
	if r.q.KeywordGate != nil {
		g = *r.q.KeywordGate
	}
	if !(g > 0) || !(res.Bound > 0) || math.IsInf(res.Bound, 0) || len(res.BM25) == 0 {
		return wb, nil
	}
	best := 0.0
	for _, h := range res.BM25 {
		best = max(best, keywordRelevance(relevanceScore(h), res.Bound))
	}
	if best >= g {
		return wb, nil
	}
	return round(wb*best/g, 6), &memory.Gated{Gate: g, Best: round(best, 6)}
}

// fuse merges the legs with the query's fusion and weights. Every result keeps
// its per-leg rank and score for explain.
func (r *run) fuse(res *backend.LegResult, pool int) []*candidate {
	s, q := r.s, r.q
	wb, wv, source := r.weights()
	legs := make([]fusion.Leg, 0, 2)
	hits := make([][]backend.Hit, 0, 2) // parallel to legs
	weights := map[string]float64{}
	// Ids are per-scope namespaces: two hits with one id are one memory only
	// when their scopes are equal. Fuse by key then; by id (no key to build)
	// when no id stands for two memories, the common case.
	name := func(m *memory.Memory) string { return m.ID }
	if idsRepeat(res) {
		name = func(m *memory.Memory) string { return m.Key() }
	}
	leg := func(legName string, w float64, hs []backend.Hit) {
		hs = byScoreThenID(hs)
		fh := make([]fusion.Hit, len(hs))
		for i, h := range hs {
			fh[i] = fusion.Hit{ID: name(h.Memory), Score: h.Score}
		}
		legs = append(legs, fusion.Leg{Name: legName, Weight: w, Hits: fh})
		hits = append(hits, hs)
		weights[legName] = w
	}
	var vhits []backend.Hit
	if r.resp.Strategy != memory.StrategyBM25 {
		vhits = r.readable(res.Vector)
	}
	var gated *memory.Gated
	if r.resp.Strategy == memory.StrategyHybrid && len(vhits) > 0 { // with no vector hit, BM25 ranks alone
		wb, gated = r.gate(wb, res)
	}
	if r.resp.Strategy != memory.StrategyVector {
		leg("bm25", wb, res.BM25)
	}
	if r.resp.Strategy != memory.StrategyBM25 {
		if r.resp.Strategy == memory.StrategyVector {
			wv = 1 // a single leg: its weight only scales the score
		}
		leg("vector", wv, vhits)
	}
	var fused []fusion.Fused
	info := &memory.FusionInfo{Method: q.Fusion, Weights: weights, Candidates: pool, Gated: gated}
	switch q.Fusion {
	case FusionRSF:
		fused = fusion.RSF(legs)
	case FusionDBSF:
		fused = fusion.DBSF(legs)
	default:
		k := q.RRFK
		if k == 0 {
			k = s.RRFK
		}
		if k == 0 {
			k = fusion.DefaultK
		}
		fused = fusion.RRF(legs, k)
		info.K = k
	}
	if len(legs) == 2 {
		info.WeightSource = source
		if wv == 0 {
			r.degrade("vector", fmt.Errorf("vector weight 0 (from the %s): the vector leg does not change the ranking", source))
		}
	}
	r.resp.Fusion = info

	out := make([]*candidate, 0, len(fused))
	for _, f := range fused {
		c := &candidate{score: f.Score}
		c.explain.RRF = f.Score
		var relB, relV float64
		for i, leg := range legs {
			lr := f.Legs[i]
			if lr.Rank == 0 {
				continue
			}
			// The fused id's first occurrence in this leg: its memory and
			// vector, without a lookup.
			if h := hits[i][lr.Rank-1]; c.m == nil {
				c.m, c.vec = h.Memory, h.Vector
			}
			switch leg.Name {
			case "bm25":
				c.explain.BM25 = &memory.LegBM25{Rank: lr.Rank, Score: round(lr.Score, 6)}
				relB = keywordRelevance(relevanceScore(hits[i][lr.Rank-1]), res.Bound)
			case "vector":
				c.explain.Vector = &memory.LegVector{Rank: lr.Rank, Cosine: round(lr.Score, 6)}
				relV = r.vectorPart(c.explain.Vector, c.m, lr.Score)
			}
		}
		c.explain.Relevance = round(relevance(relB, relV, len(legs), s.Paraphrase), 4)
		out = append(out, c)
	}
	return out
}

// vectorPart is the vector part of m's relevance for its cosine: mapped
// with the model's floor, times the share of the two texts the model read,
// which explain's vector leg shows when it is below 1.
func (r *run) vectorPart(leg *memory.LegVector, m *memory.Memory, cos float64) float64 {
	rel := vectorRelevance(cos, r.s.VectorFloor)
	if read := r.read(m); read < 1 {
		leg.Read = round(read, 4)
		rel *= read
	}
	return rel
}

// native returns the backend's native hybrid when the query can use it: both
// legs run and the backend has one. Otherwise the engine fuses, with the
// store's default fusion (rrf if that is native too); a hybrid query that
// asked for native says why in degraded.
func (r *run) native() backend.Hybrider {
	if hy, ok := r.s.Backend.(backend.Hybrider); ok && r.resp.Strategy == memory.StrategyHybrid {
		r.resp.Strategy = memory.StrategyNative
		return hy
	}
	fallback := r.s.Fusion
	if fallback == "" || fallback == FusionNative {
		fallback = FusionRRF
	}
	if r.resp.Strategy == memory.StrategyHybrid {
		r.degrade("fusion", fmt.Errorf("the backend has no native hybrid: fused here with %s", fallback))
	}
	r.q.Fusion = fallback
	return nil
}

// hybrid runs the backend's native hybrid (strategy native): one call that
// ranks and fuses both legs; the boosts and later stages apply as usual.
func (r *run) hybrid(ctx context.Context, hy backend.Hybrider, qvec []float32) ([]*candidate, error) {
	s, q := r.s, r.q
	wb, wv, source := r.weights()
	lq := r.legQuery(qvec)
	r.keywords(&lq)
	r.resp.Stages = append(r.resp.Stages, "native")
	res, err := hy.Hybrid(ctx, backend.HybridQuery{LegQuery: lq, BM25Weight: wb, VectorWeight: wv})
	if err != nil {
		return nil, err
	}
	r.resp.TimingsMS["native"] = ms(res.Took)
	r.resp.Fusion = &memory.FusionInfo{Method: FusionNative, K: res.K, Weights: map[string]float64{"bm25": wb, "vector": wv},
		WeightSource: source, Candidates: lq.K}
	if q.RRFK != 0 && q.RRFK != res.K {
		r.degrade("fusion", fmt.Errorf("rrf_k %g not applied: the backend's native fusion has its own k (%g)", q.RRFK, res.K))
	}
	if g := q.KeywordGate; g != nil && *g > 0 {
		r.degrade("fusion", fmt.Errorf("keyword_gate %g not applied: the backend fuses both legs itself", *g))
	}
	out := make([]*candidate, 0, len(res.Hits))
	for _, h := range res.Hits {
		if h.Memory == nil {
			continue
		}
		c := &candidate{m: h.Memory, vec: h.Vector, score: h.Score}
		c.explain.RRF = h.Score
		var relB, relV float64
		if p := h.BM25Leg; p.Rank > 0 {
			c.explain.BM25 = &memory.LegBM25{Rank: p.Rank, Score: round(p.Score, 6)}
			relB = keywordRelevance(relevanceScore(backend.Hit{Score: p.Score, RelevanceScore: h.RelevanceScore}), res.Bound)
		}
		if p := h.VectorLeg; p.Rank > 0 {
			c.explain.Vector = &memory.LegVector{Rank: p.Rank, Cosine: round(p.Score, 6)}
			if r.reads(h.Memory) {
				relV = r.vectorPart(c.explain.Vector, h.Memory, p.Score)
			} // else the cosine says nothing: the fused rank is the backend's
		}
		c.explain.Relevance = round(relevance(relB, relV, 2, s.Paraphrase), 4)
		out = append(out, c)
	}
	return r.boosted(ctx, out)
}

// DemandBoost is the multiplier for a decayed use count d: 1 + 0.10·d/(d+4),
// rising smoothly from 1 and never reaching 1.10.
func DemandBoost(d float64) float64 {
	if d <= 0 || math.IsNaN(d) {
		return 1
	}
	return 1 + MaxDemandBoost*d/(d+demandHalf)
}

// boost applies the bounded favorite, demand and time multipliers and
// re-sorts. It never adds a candidate.
func (r *run) boost(cands []*candidate) {
	now := r.now()
	for _, c := range cands {
		fav := 1.0
		if c.m.Favorite {
			fav = FavoriteBoost
		}
		dem := DemandBoost(c.m.DemandNow(now))
		c.explain.Boosts = memory.Boosts{Favorite: fav, Demand: round(dem, 6)}
		tb := 1.0
		if len(r.resp.Time) > 0 && memory.In(r.resp.Time, c.m.OccurredAt) {
			tb = r.resp.Time[0].Boost
			c.explain.Boosts.Time = tb
		}
		c.score = c.explain.RRF * fav * dem * tb
	}
	sortCandidates(cands)
}

// now is the pipeline's clock.
func (r *run) now() time.Time {
	if r.s.Now != nil {
		return r.s.Now()
	}
	return time.Now()
}

// rerank reorders the top candidates with the cross-encoder, when asked.
func (r *run) rerank(ctx context.Context, cands []*candidate) []*candidate {
	if !r.q.Rerank {
		return cands
	}
	if r.s.Reranker == nil {
		r.degrade("rerank", ErrNoReranker)
		return cands
	}
	depth := r.s.RerankDepth
	if depth <= 0 {
		depth = DefaultRerankDepth
	}
	top := cands[:min(depth, len(cands))]
	if len(top) == 0 {
		return cands
	}
	docs := make([]string, len(top))
	for i, c := range top {
		docs[i] = c.m.EmbedText()
	}
	t0 := time.Now()
	rctx, cancel := context.WithTimeout(ctx, durOr(r.s.StageTimeout, DefaultStageTimeout))
	defer cancel()
	scores, err := r.s.Reranker.Rerank(rctx, r.window, docs, len(docs))
	r.timed("rerank", t0)
	if err != nil {
		r.degrade("rerank", fmt.Errorf("%s: kept the fused order: %w", r.s.Reranker.Name(), err))
		return cands
	}
	out := make([]*candidate, 0, len(cands))
	seen := make([]bool, len(top))
	for _, sc := range scores {
		if sc.Index < 0 || sc.Index >= len(top) || seen[sc.Index] {
			continue
		}
		seen[sc.Index] = true
		c := top[sc.Index]
		c.explain.Rerank = &memory.Rerank{Score: round(sc.Score, 6), PreRank: sc.Index + 1}
		c.score = sc.Score
		out = append(out, c)
	}
	if len(out) == 0 {
		r.degrade("rerank", fmt.Errorf("%s: returned no usable score: kept the fused order", r.s.Reranker.Name()))
		return cands
	}
	// Anything the reranker left out keeps its order after the reranked ones,
	// at the lowest rerank score, so score stays what results are ordered by.
	floor := math.Inf(1)
	for _, c := range out {
		floor = math.Min(floor, c.score)
	}
	var rest []*candidate
	for i, c := range top {
		if !seen[i] {
			c.explain.Rerank = &memory.Rerank{Score: round(floor, 6), PreRank: i + 1}
			rest = append(rest, c)
		}
	}
	rest = append(rest, cands[len(top):]...)
	for _, c := range rest {
		c.score = floor
	}
	out = append(out, rest...)
	r.resp.Stages = append(r.resp.Stages, "rerank")
	return out
}

// mmr diversifies the candidates with their stored vectors, when asked.
func (r *run) mmr(cands []*candidate) []*candidate {
	if !r.q.MMR {
		return cands
	}
	lambda := DefaultMMRLambda
	if r.q.Lambda != nil {
		lambda = *r.q.Lambda
	}
	hasVec := false
	for _, c := range cands {
		hasVec = hasVec || c.vec != nil
	}
	if !hasVec && len(cands) > 0 {
		r.degrade("mmr", fmt.Errorf("no candidate has a stored vector from the query's model to compare: kept the order"))
		return cands
	}
	t0 := time.Now()
	in := make([]fusion.Candidate, len(cands))
	for i, c := range cands {
		// Relevance is what the earlier stages ranked by (fused and boosted, or reranked).
		in[i] = fusion.Candidate{ID: c.m.Key(), Relevance: c.score, Vector: c.vec}
	}
	picks := fusion.MMR(in, lambda, r.q.Limit)
	out := make([]*candidate, 0, len(picks))
	for _, p := range picks {
		c := cands[p.PreRank-1]
		c.explain.MMR = &memory.MMRInfo{PreRank: p.PreRank, Redundancy: round(p.Redundancy, 6), Score: round(p.Score, 6)}
		// Results are ordered by score (DESIGN §6): MMR's greedy scores never
		// rise from one pick to the next, so they keep that true.
		c.score = p.Score
		out = append(out, c)
	}
	r.timed("mmr", t0)
	r.resp.Stages = append(r.resp.Stages, "mmr")
	return out
}

// LatinShare is the share of a query's letters (embed.Scripts.Share) in
// the Latin script from which the model's Latin bars apply to it, not its
// non-Latin ones (Config.NonLatinBar). The Latin bars are measured on
// English questions, among which SciFact's naming a Greek letter (TNF-α)
// are at least 0.967 Latin; the non-Latin ones on Chinese questions, of
// which those naming English terms ("Kubernetes 的 Ingress 怎么设置 TLS？")
// are at most 0.67 Latin.
const LatinShare = 0.9

// Bar is the model's relevance bar for a strategy and a query: the keyword
// bar when only the BM25 leg ran, the vector-only bar when only the vector
// leg ran, else the model's; each the non-Latin one, where the model has
// one, for a query less than LatinShare Latin.
func (c Config) Bar(strategy, query string) float64 {
	if strategy == memory.StrategyBM25 {
		return c.KeywordBar
	}
	both, vector := c.RelevanceBar, c.VectorBar
	if (c.NonLatinBar > 0 || c.NonLatinVectorBar > 0) && embed.Latin.Share(query) < LatinShare {
		both, vector = cmp.Or(c.NonLatinBar, both), cmp.Or(c.NonLatinVectorBar, vector)
	}
	if strategy == memory.StrategyVector && vector > 0 {
		return vector
	}
	return both
}

// finish applies the relevance bar and the limit and builds the results.
func (r *run) finish(cands []*candidate) {
	t0 := time.Now()
	r.resp.RelevanceBar = r.s.Bar(r.resp.Strategy, r.window)
	if r.resp.Strategy == memory.StrategyBM25 && r.q.Mode != memory.ModeBM25 {
		r.degrade("relevance", r.keywordOnly())
	}
	bar := r.q.MinRelevance
	if bar == 0 && r.q.ModelBar {
		bar = r.resp.RelevanceBar
	}
	r.resp.MinRelevance = bar
	for _, c := range cands {
		if len(r.resp.Results) == r.q.Limit {
			break
		}
		if c.explain.Relevance < bar {
			r.resp.BelowBar++
			continue
		}
		ex := c.explain
		ex.RRF = round(ex.RRF, 8)
		ex.Fused = ex.RRF
		res := memory.ResultOf(c.m)
		res.Score, res.Explain = round(c.score, 8), &ex
		r.resp.Results = append(r.resp.Results, res)
	}
	r.timed("format", t0)
}

// keywordOnly says, for a search whose vector leg was missing, which bar
// its relevance is held to: the keyword-only bar, measured for the keyword
// part alone, not the model's, which is measured for both legs.
func (r *run) keywordOnly() error {
	msg := fmt.Sprintf("keyword-only: relevance is the keyword part alone, and relevance_bar is the keyword-only bar %g", r.s.KeywordBar)
	if r.s.Embedder != nil {
		msg += fmt.Sprintf(" (the model's %g is for both legs)", r.s.Bar(memory.StrategyHybrid, r.window))
	}
	if r.q.MinRelevance > 0 {
		msg += fmt.Sprintf("; this search applied min_relevance %g", r.q.MinRelevance)
	} else if !r.q.ModelBar {
		msg += "; this search applied no bar"
	}
	return errors.New(msg)
}

func round(x float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(x*p) / p
}

// byScoreThenID orders a leg's hits (the caller's: a LegResult is its
// caller's) by score, ties broken by id (then scope) (a backend may break them by its own
// document numbers, which depend on insertion history), so a leg's ranks, and
// so fusion, do not depend on how the index was built.
func byScoreThenID(hits []backend.Hit) []backend.Hit {
	slices.SortStableFunc(hits, func(a, b backend.Hit) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return compareKeys(a.Memory, b.Memory)
	})
	return hits
}

// idsRepeat reports whether the legs' hits hold one id in two scopes.
func idsRepeat(res *backend.LegResult) bool {
	seen := make(map[string]map[string]string, len(res.BM25)+len(res.Vector))
	for _, hs := range [][]backend.Hit{res.BM25, res.Vector} {
		for _, h := range hs {
			if sc, ok := seen[h.Memory.ID]; ok {
				if !maps.Equal(sc, h.Memory.Scope) {
					return true
				}
				continue
			}
			seen[h.Memory.ID] = h.Memory.Scope
		}
	}
	return false
}

// compareKeys orders memories by id, then scope (memory.Key's order), without
// building keys for distinct ids.
func compareKeys(a, b *memory.Memory) int {
	if c := strings.Compare(a.ID, b.ID); c != 0 {
		return c
	}
	return strings.Compare(memory.ScopeJSON(a.Scope), memory.ScopeJSON(b.Scope))
}
