// Package recall is the search pipeline: capability detection, the BM25 and
// vector legs run concurrently with filters inside, fusion, bounded boosts,
// optional rerank and MMR, and a response that explains every result.
package recall

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/engram-memory/engram/embed"
	"github.com/engram-memory/engram/internal/bm25"
	"github.com/engram-memory/engram/internal/index"
	"github.com/engram-memory/engram/internal/vector"
	"github.com/engram-memory/engram/llm"
	"github.com/engram-memory/engram/memory"
	"github.com/engram-memory/engram/rerank"
)

// Defaults of the pipeline (DESIGN §1).
const (
	DefaultLimit        = 10
	MaxLimit            = 1000
	MinCandidates       = 50 // pool per leg is max(5×limit, MinCandidates)
	DefaultEmbedTimeout = 3 * time.Second
	DefaultRerankDepth  = 30
	DefaultStageTimeout = 10 * time.Second
	DefaultMMRLambda    = 0.7
	FavoriteBoost       = 1.15 // a favorite's fused score is multiplied by this
	MaxDemandBoost      = 0.10 // demand adds at most +10%
	// demandHalf is the decayed use count at which demand gives half its maximum.
	demandHalf = 4.0
)

// ErrInvalidQuery wraps every rejection of a query.
var ErrInvalidQuery = errors.New("invalid query")

// Reasons a stage asked for was skipped: the degraded entry's reason.
var (
	ErrNoLLM      = errors.New("no LLM configured")
	ErrNoReranker = errors.New("no reranker configured")
)

// Config is what a Searcher may use. Nil providers mean the stage is absent.
type Config struct {
	Embedder     embed.Embedder
	EmbedTimeout time.Duration
	// VectorWeight is the vector leg's fusion weight (BM25's is BM25Weight, 1 by
	// default); WeightSource says where it came from (model, store, option).
	VectorWeight float64
	BM25Weight   float64
	WeightSource string
	// VectorFloor is the cosine an unrelated memory typically reaches with this
	// model: the zero point of the vector part of the relevance signal.
	VectorFloor float64
	// Fusion is the fusion a query gets when it names none (default rrf): a
	// model's default, like its weight (see the root package's ModelDefaults).
	Fusion       string
	Reranker     rerank.Reranker
	RerankDepth  int
	LLM          *llm.Client
	StageTimeout time.Duration
	Now          func() time.Time
}

// RLocker guards the index while a search reads it.
type RLocker interface {
	RLock()
	RUnlock()
}

// Searcher runs queries over an index.
type Searcher struct {
	Index *index.Index
	Lock  RLocker
	Config
}

// Validate checks a query and fills its defaults.
func Validate(q *memory.Query) error {
	q.Query = strings.TrimSpace(q.Query)
	if q.Query == "" {
		return fmt.Errorf("%w: query text is empty", ErrInvalidQuery)
	}
	switch {
	case q.Limit < 0:
		return fmt.Errorf("%w: limit %d must be positive", ErrInvalidQuery, q.Limit)
	case q.Limit == 0:
		q.Limit = DefaultLimit
	case q.Limit > MaxLimit:
		return fmt.Errorf("%w: limit %d is above the maximum %d", ErrInvalidQuery, q.Limit, MaxLimit)
	}
	switch q.Mode {
	case "":
		q.Mode = memory.ModeHybrid
	case memory.ModeHybrid, memory.ModeBM25, memory.ModeVector:
	default:
		return fmt.Errorf("%w: mode %q: want hybrid, bm25 or vector", ErrInvalidQuery, q.Mode)
	}
	switch q.Fusion {
	case "":
		q.Fusion = FusionRRF
	case FusionRRF, FusionRSF, FusionDBSF:
	default:
		return fmt.Errorf("%w: fusion %q: want rrf, rsf or dbsf", ErrInvalidQuery, q.Fusion)
	}
	if q.Candidates < 0 || q.Candidates > 10*MaxLimit {
		return fmt.Errorf("%w: candidates %d out of range 0..%d", ErrInvalidQuery, q.Candidates, 10*MaxLimit)
	}
	for name, w := range map[string]*float64{"bm25_weight": q.BM25Weight, "vector_weight": q.VectorWeight, "mmr_lambda": q.Lambda} {
		if w != nil && (math.IsNaN(*w) || *w < 0 || math.IsInf(*w, 0)) {
			return fmt.Errorf("%w: %s %v must be a finite number ≥ 0", ErrInvalidQuery, name, *w)
		}
	}
	if q.Lambda != nil && *q.Lambda > 1 {
		return fmt.Errorf("%w: mmr_lambda %v must be within [0,1]", ErrInvalidQuery, *q.Lambda)
	}
	if q.MinRelevance < 0 || q.MinRelevance > 1 || math.IsNaN(q.MinRelevance) {
		return fmt.Errorf("%w: min_relevance %v must be within [0,1]", ErrInvalidQuery, q.MinRelevance)
	}
	if q.Since != nil && q.Until != nil && !q.Since.Before(*q.Until) {
		return fmt.Errorf("%w: since %s is not before until %s", ErrInvalidQuery, q.Since.Format(time.RFC3339), q.Until.Format(time.RFC3339))
	}
	if err := memory.ValidateScope(q.Scope); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidQuery, err)
	}
	return nil
}

// Candidates is the per-leg pool for a limit: max(5×limit, MinCandidates).
func Candidates(limit int) int { return max(5*limit, MinCandidates) }

// run carries one search through the pipeline.
type run struct {
	s     *Searcher
	q     memory.Query
	resp  *memory.Response
	start time.Time
}

func (r *run) degrade(stage string, err error) {
	r.resp.Degraded = append(r.resp.Degraded, memory.Degraded{Stage: stage, Reason: err.Error()})
}

func (r *run) timed(name string, t0 time.Time) {
	r.resp.TimingsMS[name] += float64(time.Since(t0).Microseconds()) / 1000
}

// candidate is one fused result on its way to the response.
type candidate struct {
	id      string
	doc     uint32
	m       *memory.Memory
	vec     []float32
	explain memory.Explain
	score   float64
}

// Search answers one query. It fails only on an invalid query or a cancelled
// context: a missing or failing embedder, reranker or LLM degrades the response.
func (s *Searcher) Search(ctx context.Context, q memory.Query) (*memory.Response, error) {
	if q.Fusion == "" {
		q.Fusion = s.Fusion
	}
	if err := Validate(&q); err != nil {
		return nil, err
	}
	r := &run{s: s, q: q, start: time.Now(), resp: &memory.Response{
		QID: q.QID, Query: q.Query, Stages: []string{}, Degraded: []memory.Degraded{},
		TimingsMS: map[string]float64{}, Results: []memory.Result{},
	}}
	wantBM25 := q.Mode != memory.ModeVector
	qvec := r.queryVector(ctx)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	useVec := qvec != nil
	switch {
	case useVec && wantBM25:
		r.resp.Strategy = memory.StrategyHybrid
	case useVec:
		r.resp.Strategy = memory.StrategyVector
	default:
		r.resp.Strategy = memory.StrategyBM25
		wantBM25 = true
	}

	cands := r.fuseUnderLock(qvec, wantBM25)
	cands = r.rerank(ctx, cands)
	cands = r.mmr(cands)
	r.finish(cands)
	r.resp.TimingsMS["total"] = float64(time.Since(r.start).Microseconds()) / 1000
	return r.resp, nil
}

// queryVector embeds the query (or its HyDE rewrite) when the mode needs it.
// It returns nil, with the reason in degraded, when the vector leg cannot run.
func (r *run) queryVector(ctx context.Context) []float32 {
	s, q := r.s, r.q
	if q.Mode == memory.ModeBM25 {
		return nil
	}
	if s.Embedder == nil {
		r.degrade("vector", embed.ErrNoEmbedder)
		return nil
	}
	model := s.Embedder.Model()
	s.Lock.RLock()
	vi := s.Index.Vectors(model)
	stored := 0
	if vi != nil {
		stored = vi.Len()
	}
	others := s.Index.Models()
	s.Lock.RUnlock()
	names := make([]string, 0, len(others))
	for other := range others {
		if other != model {
			names = append(names, other)
		}
	}
	sort.Strings(names) // a stable response
	for _, other := range names {
		r.degrade("vector", fmt.Errorf("%d memories embedded with model %s were not compared with the query's model %s", others[other], other, model))
	}
	if stored == 0 {
		r.degrade("vector", fmt.Errorf("no memory has a vector from model %s yet", model))
		return nil
	}
	text := q.Query
	if q.HyDE {
		text = r.hyde(ctx)
	}
	t0 := time.Now()
	ectx, cancel := context.WithTimeout(ctx, durOr(s.EmbedTimeout, DefaultEmbedTimeout))
	defer cancel()
	vecs, err := s.Embedder.Embed(ectx, []string{text})
	r.timed("embed", t0)
	if err == nil && len(vecs) != 1 {
		err = fmt.Errorf("embedder returned %d vectors for 1 text", len(vecs))
	}
	if err != nil {
		if ctx.Err() == nil && ectx.Err() != nil {
			err = fmt.Errorf("embedder %s: no answer within %s", model, durOr(s.EmbedTimeout, DefaultEmbedTimeout))
		} else {
			err = fmt.Errorf("embedder %s: %w", model, err)
		}
		r.degrade("vector", err)
		return nil
	}
	if vecs[0] == nil {
		r.degrade("vector", fmt.Errorf("embedder %s has no vector for this query (no known word)", model))
		return nil
	}
	if len(vecs[0]) != vi.Dim() {
		r.degrade("vector", fmt.Errorf("embedder %s returned %d dimensions, stored vectors have %d", model, len(vecs[0]), vi.Dim()))
		return nil
	}
	return vecs[0]
}

// hyde rewrites the query for the vector leg; on any failure it keeps the query.
func (r *run) hyde(ctx context.Context) string {
	if r.s.LLM == nil {
		r.degrade("hyde", ErrNoLLM)
		return r.q.Query
	}
	t0 := time.Now()
	hctx, cancel := context.WithTimeout(ctx, durOr(r.s.StageTimeout, DefaultStageTimeout))
	defer cancel()
	text, err := llm.HyDE(hctx, r.s.LLM, r.q.Query)
	r.timed("hyde", t0)
	if err != nil {
		r.degrade("hyde", fmt.Errorf("kept the raw query: %w", err))
		return r.q.Query
	}
	r.resp.Stages = append(r.resp.Stages, "hyde")
	return text
}

// fuseUnderLock runs the legs concurrently, fuses them and applies boosts, all
// under the index's read lock, and copies what later stages need.
func (r *run) fuseUnderLock(qvec []float32, wantBM25 bool) []*candidate {
	s, q := r.s, r.q
	s.Lock.RLock()
	defer s.Lock.RUnlock()
	ix := s.Index
	pool := q.Candidates
	if pool == 0 {
		pool = Candidates(q.Limit)
	}
	t0 := time.Now()
	allow := ix.Allowed(&q.Filter)
	r.timed("filter", t0)

	var (
		wg      sync.WaitGroup
		bmHits  []bm25.Hit
		bound   float64
		vecHits []vector.Hit
		bmDur   time.Duration
		vecDur  time.Duration
	)
	if wantBM25 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := time.Now()
			bmHits, bound = ix.BM25(q.Query, allow, pool)
			bmDur = time.Since(t)
		}()
		r.resp.Stages = append(r.resp.Stages, "bm25")
	}
	if qvec != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := time.Now()
			vecHits = ix.Vectors(s.Embedder.Model()).Search(qvec, allow, pool)
			vecDur = time.Since(t)
		}()
		r.resp.Stages = append(r.resp.Stages, "vector")
	}
	wg.Wait()
	if wantBM25 {
		r.resp.TimingsMS["bm25"] = ms(bmDur)
	}
	if qvec != nil {
		r.resp.TimingsMS["vector"] = ms(vecDur)
	}

	t0 = time.Now()
	cands := r.fuse(bmHits, bound, vecHits, pool)
	r.timed("fusion", t0)
	t0 = time.Now()
	r.boost(cands)
	r.timed("boosts", t0)
	// Keep what rerank and MMR may look at; copy vectors they need.
	keep := max(q.Limit, s.RerankDepth, DefaultRerankDepth)
	if len(cands) > keep {
		cands = cands[:keep]
	}
	if q.MMR && s.Embedder != nil {
		if vi := ix.Vectors(s.Embedder.Model()); vi != nil {
			for _, c := range cands {
				c.vec = append([]float32(nil), vi.Vector(c.doc)...)
			}
		}
	}
	return cands
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func durOr(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// sortCandidates orders by score, then id: the deterministic tie-break.
func sortCandidates(cs []*candidate) {
	sort.SliceStable(cs, func(i, j int) bool {
		if cs[i].score != cs[j].score {
			return cs[i].score > cs[j].score
		}
		return cs[i].id < cs[j].id
	})
}
