package weaviate

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"

	pb "github.com/weaviate/weaviate/grpc/generated/protocol/v1"

	"github.com/engram-memory/engram/internal/index"
	"github.com/engram-memory/engram/memory"
)

// ErrNoVectors is returned by the vector and hybrid legs when no memory has a
// vector of the query's model (and dimension) yet: there is nothing to compare
// the query with, and vectors of other models are never compared with it.
var ErrNoVectors = errors.New("no stored vector of this model")

// MaxK bounds a leg's result count: Weaviate refuses limit+offset above its
// QUERY_MAXIMUM_RESULTS (default 10000).
const MaxK = 10000

// LegQuery asks one leg for its top K memories inside Filter.
type LegQuery struct {
	// Text is the keyword query; the class's tokenizer splits it.
	Text string
	// Vector is the query vector of Model (its named vector is searched).
	Vector []float32
	Model  string
	Filter memory.Filter
	K      int
	// FieldWeights are BM25's weights for name, description and text (nil:
	// 1 each), as Engram's Options.FieldWeights.
	FieldWeights []float64
	// WithVectors fetches each hit's vector (for MMR).
	WithVectors bool
	// Windows are spans of occurred_at (backend.LegQuery.Windows): with
	// them, a leg returns its K best and after them its K best of the
	// memories that occurred inside a window, no memory twice.
	Windows []memory.TimeWindow
	// Lean fetches only what identifies and filters a hit (id, scope, type,
	// scene, tags, source, created_at, the episode fields): no texts, metadata or vectors. For
	// candidate pools that fusion cuts down to a few results, whose memories
	// GetMany then reads: on SciFact, two 500-deep legs of full memories took
	// 250 ms (median), lean legs and GetMany of the top 100 54 ms.
	Lean bool

	// uuids reads no property at all: each hit's Memory holds only its
	// object's UUID (KeyID of its id and scope), as ID, and the filter is
	// the server's alone. For the native hybrid's explain legs, which need a
	// hit's rank and score only: Weaviate then reads no object (a 50-deep
	// SciFact leg 1.2-1.9 ms against 3.3-4.6 lean). Hits of equal score from
	// different tenants are merged in UUID order, not id order.
	uuids bool
}

// Hit is one leg result.
type Hit struct {
	Memory *memory.Memory
	Rank   int     // from 1
	Score  float64 // BM25 score, or cosine similarity for the vector leg
}

func (q *LegQuery) check(needVector bool) error {
	if q.K <= 0 || q.K > MaxK {
		return fmt.Errorf("%w: k %d out of range 1..%d", memory.ErrInvalid, q.K, MaxK)
	}
	if needVector {
		if q.Model == "" || len(q.Vector) == 0 {
			return fmt.Errorf("%w: a vector search needs a model and a vector", memory.ErrInvalid)
		}
		for i, x := range q.Vector {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return fmt.Errorf("%w: query vector value %d is %v", memory.ErrInvalid, i, x)
			}
		}
	}
	if len(q.FieldWeights) != 0 && len(q.FieldWeights) != 3 {
		return fmt.Errorf("%w: %d field weights, want 3 (name, description, text)", memory.ErrInvalid, len(q.FieldWeights))
	}
	for _, w := range q.FieldWeights {
		if math.IsNaN(w) || w < 0 || math.IsInf(w, 0) {
			return fmt.Errorf("%w: field weight %v must be a finite number >= 0", memory.ErrInvalid, w)
		}
	}
	return nil
}

// keywordQuery is the text Weaviate's BM25 gets: Engram's terms, or the raw
// text for TokenizerWord. "" means no term: nothing can match.
func (s *Store) keywordQuery(text string) string {
	if s.tok == nil {
		return strings.TrimSpace(text)
	}
	return s.terms(text)
}

// searchProperties lists the BM25 properties, with TokenizerWord's field
// weights as Weaviate boosts ("name^2"), then the context and the day with
// their field weights as boosts (searchedContext).
func (s *Store) searchProperties(weights []float64) ([]string, error) {
	props := searchProps(s.cfg.Tokenizer)
	var out []string
	if len(props) == 1 {
		for _, w := range weights {
			if w != 1 {
				return nil, fmt.Errorf("%w: field weights %v: with tokenizer engram name, description and text are one field (Engram's default weights); use tokenizer word for weights", memory.ErrInvalid, weights)
			}
		}
		out = props
	} else {
		for i, p := range props {
			switch {
			case i >= len(weights) || weights == nil || weights[i] == 1:
				out = append(out, p)
			case weights[i] > 0:
				out = append(out, boosted(p, weights[i]))
			}
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("%w: every field weight is 0", memory.ErrInvalid)
		}
	}
	return append(out, s.searchedContext()...), nil
}

// searchedContext are the context and day properties BM25 searches besides
// a memory's own words, each boosted by its field weight in the built-in
// backend (index.DefaultFieldWeights): none when the store holds no context
// (index.DefaultContext) or the weight is 0. Weaviate scores each property
// with its own statistics and adds the boosted scores (docs/weaviate.md).
func (s *Store) searchedContext() []string {
	w := index.DefaultFieldWeights()
	var out []string
	if s.context.Neighbours > 0 && w[index.FieldContext] > 0 {
		out = append(out, boosted(pContext, w[index.FieldContext]))
	}
	if s.context.Dates && w[index.FieldDate] > 0 {
		out = append(out, boosted(pDay, w[index.FieldDate]))
	}
	return out
}

// boosted is a property with a BM25 boost, as Weaviate names it.
func boosted(prop string, w float64) string {
	if w == 1 {
		return prop
	}
	return prop + "^" + strconv.FormatFloat(w, 'g', -1, 64)
}

// vectorFor is the named vector of a query's model, once the class has it.
func (s *Store) vectorFor(ctx context.Context, model string, dim int) (string, error) {
	name := VectorName(model, dim)
	if s.hasVector(name) {
		return name, nil
	}
	info, err := s.getClass(ctx) // another process may have added it
	if err != nil {
		return "", err
	}
	if err := s.check(info); err != nil {
		return "", err
	}
	if !s.hasVector(name) {
		return "", fmt.Errorf("%w: model %s, %d dimensions", ErrNoVectors, model, dim)
	}
	return name, nil
}

// BM25 ranks memories inside the filter by Weaviate's BM25 over their name,
// description and text (one field of Engram's terms with TokenizerEngram,
// three properties with TokenizerWord). Scores are on Engram's scale: Weaviate leaves out
// the constant factor k1+1 of the Okapi formula (as Lucene does since 8.0),
// which is put back, so that a score means the same on both backends.
func (s *Store) BM25(ctx context.Context, q LegQuery) ([]Hit, error) {
	if err := q.check(false); err != nil {
		return nil, err
	}
	text := s.keywordQuery(q.Text)
	if text == "" {
		return nil, nil
	}
	props, err := s.searchProperties(q.FieldWeights)
	if err != nil {
		return nil, err
	}
	scale := 1 + s.cfg.K1
	return s.leg(ctx, &q, func(r *pb.SearchRequest) {
		r.Bm25Search = &pb.BM25{Query: text, Properties: props}
		r.Metadata = &pb.MetadataRequest{Score: true}
	}, func(f *fields) (float64, error) {
		sc, err := strconv.ParseFloat(f.Additional.Score.String(), 64)
		return sc * scale, err
	})
}

// NearVector ranks memories inside the filter by cosine similarity to the
// query vector, over the vectors of the query's model only.
func (s *Store) NearVector(ctx context.Context, q LegQuery) ([]Hit, error) {
	if err := q.check(true); err != nil {
		return nil, err
	}
	name, err := s.vectorFor(ctx, q.Model, len(q.Vector))
	if err != nil {
		return nil, err
	}
	return s.leg(ctx, &q, func(r *pb.SearchRequest) {
		r.NearVector = &pb.NearVector{Vectors: []*pb.Vectors{queryVector(name, q.Vector)}, Targets: &pb.Targets{TargetVectors: []string{name}}}
		r.Metadata = &pb.MetadataRequest{Distance: true}
	}, func(f *fields) (float64, error) {
		if f.Additional.Distance == nil {
			return 0, errors.New("no distance in the answer")
		}
		return 1 - *f.Additional.Distance, nil // cosine distance is 1 - cos
	})
}

// queryVector is a query vector as gRPC carries it.
func queryVector(name string, v []float32) *pb.Vectors {
	return &pb.Vectors{Name: name, VectorBytes: vectorBytes(v), Type: pb.Vectors_VECTOR_TYPE_SINGLE_FP32}
}

// leg runs one ranked search (set fills in the search and the metadata
// score reads) in every tenant the filter reaches and merges the tenants'
// hits by score (exact for cosine; for BM25 each tenant's own statistics
// score its memories, so a merge over tenants is approximate). With windows
// it runs again inside them and appends what that adds.
func (s *Store) leg(ctx context.Context, q *LegQuery, set func(*pb.SearchRequest), score func(*fields) (float64, error)) ([]Hit, error) {
	run := func(window *clause) ([]Hit, error) {
		per, err := rankedGet(ctx, s, q, set, window, func(o *fields, m *memory.Memory) (Hit, error) {
			sc, err := score(o)
			if err != nil {
				return Hit{}, fmt.Errorf("memory %s: score: %w", m.ID, err)
			}
			return Hit{Memory: m, Score: sc}, nil
		})
		if err != nil {
			return nil, fmt.Errorf("search: %w", err)
		}
		return mergeTenants(per, q.K, func(h Hit) (float64, string) { return h.Score, h.Memory.ID }), nil
	}
	hits, err := withWindows(q.Windows, run, func(h Hit) string { return h.Memory.Key() })
	if err != nil {
		return nil, err
	}
	for i := range hits {
		hits[i].Rank = i + 1
	}
	return hits, nil
}

// withWindows runs a search (run(nil)) and, when there are windows, the same
// search inside them, and appends to the first hits those of the second
// that it lacks (by key): backend.LegQuery.Windows.
func withWindows[H any](windows []memory.TimeWindow, run func(window *clause) ([]H, error), key func(H) string) ([]H, error) {
	hits, err := run(nil)
	w, ok := windowsClause(windows)
	if err != nil || !ok {
		return hits, err
	}
	more, err := run(&w)
	if err != nil {
		return nil, fmt.Errorf("inside the time windows: %w", err)
	}
	seen := make(map[string]bool, len(hits))
	for _, h := range hits {
		seen[key(h)] = true
	}
	for _, h := range more {
		if !seen[key(h)] {
			hits = append(hits, h)
		}
	}
	return hits, nil
}

// rankedGet runs a ranked gRPC search (set fills in the search and its
// metadata; q.K deep, q's filter and the clause and (if any) pushed down, the
// properties q asks for) in every tenant q's filter reaches, one call each,
// and returns each tenant's hits, made by hit from every answer q's filter
// admits, in the tenant's order. Errors of a tenant's call are returned as
// they are; the caller says which search failed.
func rankedGet[H any](ctx context.Context, s *Store, q *LegQuery, set func(*pb.SearchRequest), and *clause, hit func(*fields, *memory.Memory) (H, error)) ([][]H, error) {
	cs, err := filterClauses(&q.Filter)
	if err != nil {
		return nil, err
	}
	if and != nil {
		cs = append(cs, *and)
	}
	tenants, err := s.tenantsFor(ctx, q.Filter.Scope)
	if err != nil {
		return nil, err
	}
	if len(tenants) == 0 { // a multi-tenant class nobody wrote to yet
		return nil, nil
	}
	filter := protoFilter(cs)
	var vectors []string
	if q.WithVectors {
		vectors = s.vectorSelection(true)
	}
	per := make([][]H, len(tenants))
	err = eachTenant(ctx, tenants, func(ctx context.Context, ti int, tenant string) error {
		req := &pb.SearchRequest{Limit: uint32(q.K), Filters: filter}
		set(req)
		req.Properties, req.Metadata = selection(q.Lean, vectors, req.Metadata)
		if q.uuids {
			req.Properties = &pb.PropertiesRequest{}
		}
		objs, err := s.search(ctx, tenant, req)
		if err != nil {
			return err
		}
		for i := range objs {
			var m *memory.Memory
			if q.uuids {
				h, err := hit(&objs[i], &memory.Memory{ID: objs[i].Additional.ID})
				if err != nil {
					return err
				}
				per[ti] = append(per[ti], h)
				continue
			}
			if q.Lean {
				m, err = objs[i].decodeLean()
			} else {
				m, err = objs[i].decode(q.WithVectors)
			}
			if err != nil {
				return err
			}
			if !q.Filter.Match(m) {
				continue
			}
			h, err := hit(&objs[i], m)
			if err != nil {
				return err
			}
			per[ti] = append(per[ti], h)
		}
		return nil
	})
	return per, err
}

// Fusions of the native hybrid call.
const (
	FusionRRF = "rrf" // Weaviate's rankedFusion: Σ w/(60+i), i from 0
	FusionRSF = "rsf" // Weaviate's relativeScoreFusion: Σ w·minmax(score)
)

// HybridLegDepth is how many results each leg of Weaviate's hybrid call
// fetches before fusing: max(QUERY_HYBRID_MAXIMUM_RESULTS, limit), and that
// setting's default is 100.
const HybridLegDepth = 100

// HybridQuery asks for one native hybrid search: Weaviate runs both legs
// with the filter inside and fuses them in one call.
type HybridQuery struct {
	LegQuery
	// BM25Weight and VectorWeight are Engram's leg weights; Weaviate takes
	// their ratio as alpha = VectorWeight/(BM25Weight+VectorWeight).
	BM25Weight, VectorWeight float64
	// Fusion is FusionRRF (default) or FusionRSF.
	Fusion string
	// Explain also runs both legs on their own (concurrently with the
	// hybrid call, HybridLegDepth deep) so that every hit carries each leg's
	// rank and score. Without it a hit carries what Weaviate's explainScore
	// says: the leg ranks under rrf, the leg scores under rsf.
	Explain bool
}

// mergeTenants is one ranked list from each tenant's: by score, then id,
// cut at k. One tenant's list is already that.
func mergeTenants[H any](per [][]H, k int, key func(H) (float64, string)) []H {
	if len(per) == 1 {
		return per[0]
	}
	var hits []H
	for _, h := range per {
		hits = append(hits, h...)
	}
	sort.SliceStable(hits, func(i, j int) bool {
		si, ii := key(hits[i])
		sj, ij := key(hits[j])
		if si != sj {
			return si > sj
		}
		return ii < ij
	})
	return hits[:min(len(hits), k)]
}

// HybridHit is one fused result.
type HybridHit struct {
	Memory *memory.Memory
	// Score is Weaviate's fused score times BM25Weight+VectorWeight, which
	// puts it on the scale of Engram's weights: for rrf, Σ w_leg/(59+rank).
	Score float64
	// BM25 and Vector are the hit's place in each leg; nil when the leg did
	// not return it. Without Explain, Score (rrf) or Rank (rsf) is 0: unknown.
	BM25   *memory.LegBM25
	Vector *memory.LegVector
}

// Alpha is Weaviate's hybrid alpha for Engram's leg weights.
func Alpha(bm25Weight, vectorWeight float64) (float64, error) {
	if math.IsNaN(bm25Weight) || math.IsNaN(vectorWeight) || bm25Weight < 0 || vectorWeight < 0 ||
		math.IsInf(bm25Weight, 0) || math.IsInf(vectorWeight, 0) || bm25Weight+vectorWeight == 0 {
		return 0, fmt.Errorf("%w: leg weights %v and %v: want finite, >= 0, not both 0", memory.ErrInvalid, bm25Weight, vectorWeight)
	}
	return vectorWeight / (bm25Weight + vectorWeight), nil
}

// Hybrid runs Weaviate's hybrid search and returns its top K fused hits in
// Weaviate's order.
func (s *Store) Hybrid(ctx context.Context, q HybridQuery) ([]HybridHit, error) {
	if err := q.check(true); err != nil {
		return nil, err
	}
	alpha, err := Alpha(q.BM25Weight, q.VectorWeight)
	if err != nil {
		return nil, err
	}
	fusion := pb.Hybrid_FUSION_TYPE_RANKED
	switch q.Fusion {
	case "", FusionRRF:
		q.Fusion = FusionRRF
	case FusionRSF:
		fusion = pb.Hybrid_FUSION_TYPE_RELATIVE_SCORE
	default:
		return nil, fmt.Errorf("%w: fusion %q: want rrf or rsf", memory.ErrInvalid, q.Fusion)
	}
	name, err := s.vectorFor(ctx, q.Model, len(q.Vector))
	if err != nil {
		return nil, err
	}
	props, err := s.searchProperties(q.FieldWeights)
	if err != nil {
		return nil, err
	}
	a := float32(alpha)
	hybrid := &pb.Hybrid{Query: s.keywordQuery(q.Text), Properties: props, Vectors: []*pb.Vectors{queryVector(name, q.Vector)},
		Targets: &pb.Targets{TargetVectors: []string{name}}, AlphaParam: &a, UseAlphaParam: true, FusionType: fusion}
	scale := q.BM25Weight + q.VectorWeight

	var (
		wg              sync.WaitGroup
		bmHits, vecHits []Hit
		bmErr, vecErr   error
		depth           = max(HybridLegDepth, q.K)
		legQ            = q.LegQuery
		hits            []HybridHit
		hybErr          error
	)
	legQ.K = min(depth, MaxK)
	legQ.WithVectors, legQ.uuids = false, true
	// A leg of weight 0 does not run in Weaviate's call (alpha 0 or 1), so
	// it is not explained either.
	if q.Explain && q.BM25Weight > 0 {
		wg.Add(1)
		go func() { defer wg.Done(); bmHits, bmErr = s.BM25(ctx, legQ) }()
	}
	if q.Explain && q.VectorWeight > 0 {
		wg.Add(1)
		go func() { defer wg.Done(); vecHits, vecErr = s.NearVector(ctx, legQ) }()
	}
	hits, hybErr = s.hybridCall(ctx, &q, hybrid, alpha, scale)
	wg.Wait()
	if hybErr != nil {
		return nil, hybErr
	}
	if q.Explain {
		if err := errors.Join(bmErr, vecErr); err != nil {
			return nil, fmt.Errorf("explain legs: %w", err)
		}
		bm := make(map[string]Hit, len(bmHits)) // by object UUID
		for _, h := range bmHits {
			bm[h.Memory.ID] = h
		}
		vec := make(map[string]Hit, len(vecHits))
		for _, h := range vecHits {
			vec[h.Memory.ID] = h
		}
		for i := range hits {
			id := KeyID(hits[i].Memory.ID, hits[i].Memory.Scope)
			hits[i].BM25, hits[i].Vector = nil, nil
			if h, ok := bm[id]; ok {
				hits[i].BM25 = &memory.LegBM25{Rank: h.Rank, Score: h.Score}
			}
			if h, ok := vec[id]; ok {
				hits[i].Vector = &memory.LegVector{Rank: h.Rank, Cosine: h.Score}
			}
		}
	}
	return hits, nil
}

// hybridCall runs the hybrid Get in every tenant the filter reaches, reads
// each hit's legs from explainScore and merges tenants by fused score; with
// windows, it runs again inside them and appends what that adds.
func (s *Store) hybridCall(ctx context.Context, q *HybridQuery, hybrid *pb.Hybrid, alpha, scale float64) ([]HybridHit, error) {
	return withWindows(q.Windows, func(window *clause) ([]HybridHit, error) {
		return s.hybridGet(ctx, q, hybrid, alpha, scale, window)
	}, func(h HybridHit) string { return h.Memory.Key() })
}

// hybridGet is one hybrid search (inside the window, if any) of hybridCall.
func (s *Store) hybridGet(ctx context.Context, q *HybridQuery, hybrid *pb.Hybrid, alpha, scale float64, window *clause) ([]HybridHit, error) {
	set := func(r *pb.SearchRequest) {
		r.HybridSearch = hybrid
		r.Metadata = &pb.MetadataRequest{Score: true, ExplainScore: true}
	}
	per, err := rankedGet(ctx, s, &q.LegQuery, set, window, func(o *fields, m *memory.Memory) (HybridHit, error) {
		sc, err := strconv.ParseFloat(o.Additional.Score.String(), 64)
		if err != nil {
			return HybridHit{}, fmt.Errorf("memory %s: fused score: %w", m.ID, err)
		}
		h := HybridHit{Memory: m, Score: sc * scale}
		legs := parseExplain(o.Additional.ExplainScore)
		if l, ok := legs["keyword"]; ok {
			h.BM25 = &memory.LegBM25{Rank: l.rank(q.Fusion, 1-alpha), Score: l.original * (1 + s.cfg.K1)}
		}
		if l, ok := legs["vector"]; ok {
			h.Vector = &memory.LegVector{Rank: l.rank(q.Fusion, alpha), Cosine: l.original}
		}
		return h, nil
	})
	if err != nil {
		return nil, fmt.Errorf("hybrid search: %w", err)
	}
	return mergeTenants(per, q.K, func(h HybridHit) (float64, string) { return h.Score, h.Memory.ID }), nil
}
