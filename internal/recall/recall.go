// Package recall is the search pipeline over a backend's legs: capability
// detection, the BM25 and vector legs (or the backend's native hybrid) with
// filters inside, fusion, bounded boosts, optional rerank and MMR, and a
// response that explains every result.
package recall

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/engram-memory/engram/backend"
	"github.com/engram-memory/engram/embed"
	"github.com/engram-memory/engram/llm"
	"github.com/engram-memory/engram/memory"
	"github.com/engram-memory/engram/rerank"
)

// Defaults of the pipeline (DESIGN §1).
const (
	DefaultLimit        = 10
	MaxLimit            = 1000
	MinCandidates       = 50 // pool per leg is max(5×limit, MinCandidates)
	MaxRRFK             = 1e6
	DefaultEmbedTimeout = 3 * time.Second
	DefaultRerankDepth  = 30
	DefaultStageTimeout = 10 * time.Second
	DefaultMMRLambda    = 0.7
	FavoriteBoost       = 1.15 // a favorite's fused score is multiplied by this
	MaxDemandBoost      = 0.10 // demand adds at most +10%
	// DefaultTimeBoost multiplies the fused score of a memory that occurred
	// inside a window the query's date phrases name (measured on LoCoMo's
	// questions that hold a date: docs/evaluation.md, "LoCoMo dev").
	DefaultTimeBoost = 1.5
	// MaxTimeBoost bounds Config.TimeBoost.
	MaxTimeBoost = 4.0
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
	// Paraphrase weighs a hybrid result's vector part on its own in its
	// relevance (relevance.go); at most 0.5 it changes nothing: the mean.
	Paraphrase float64
	// RelevanceBar is the model's bar on the relevance of a search that used
	// both legs; KeywordBar the bar of one that ran on keywords alone (whose
	// relevance is the keyword part unhalved); VectorBar the model's bar of
	// one that ran on the vector leg alone (0: RelevanceBar). A query's
	// ModelBar applies the one for the strategy that ran.
	RelevanceBar, KeywordBar, VectorBar float64
	// NonLatinBar and NonLatinVectorBar, when above 0, stand for
	// RelevanceBar and VectorBar for a query less than LatinShare of whose
	// letters are Latin: a multilingual model's cosines between such texts
	// sit elsewhere than between English ones, so its bars for them are
	// measured apart.
	NonLatinBar, NonLatinVectorBar float64
	// Fusion is the fusion a query gets when it names none (default rrf): a
	// model's default, like its weight (see the root package's ModelDefaults).
	Fusion string
	// RRFK is the k a query gets under rrf when it names none; 0 means
	// fusion.DefaultK.
	RRFK float64
	// KeywordGate is the model's keyword gate (a query's KeywordGate
	// overrides it): the keyword relevance BM25's best match must reach for
	// BM25 to keep its whole weight in a hybrid; 0 is off (stages.go, gate).
	KeywordGate  float64
	Reranker     rerank.Reranker
	RerankDepth  int
	LLM          *llm.Client
	StageTimeout time.Duration
	Now          func() time.Time
	// TimeBoost multiplies the fused score of a memory that occurred inside
	// a window the query's date phrases name; 0 means DefaultTimeBoost, 1
	// (or less) reads no dates.
	TimeBoost float64
}

// Searcher runs queries over a backend's legs. When the backend is also a
// backend.Hybrider, a query with fusion "native" runs as its one hybrid call.
type Searcher struct {
	Backend backend.Searcher
	Config
}

// MaxWeight bounds a fusion weight given with a query: far above any useful
// one (weights are relative; 1 is the keyword leg's), and low enough that a
// weighted score never overflows.
const MaxWeight = 1e6

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
	case FusionRRF, FusionRSF, FusionDBSF, FusionNative:
	default:
		return fmt.Errorf("%w: fusion %q: want rrf, rsf, dbsf or native", ErrInvalidQuery, q.Fusion)
	}
	if q.Candidates < 0 || q.Candidates > 10*MaxLimit {
		return fmt.Errorf("%w: candidates %d out of range 0..%d", ErrInvalidQuery, q.Candidates, 10*MaxLimit)
	}
	for name, w := range map[string]*float64{"bm25_weight": q.BM25Weight, "vector_weight": q.VectorWeight, "mmr_lambda": q.Lambda} {
		if w != nil && !(*w >= 0 && *w <= MaxWeight) { // false for NaN
			return fmt.Errorf("%w: %s %v must be a number from 0 to %g", ErrInvalidQuery, name, *w, float64(MaxWeight))
		}
	}
	if g := q.KeywordGate; g != nil && !(*g >= 0 && *g <= 1) { // false for NaN
		return fmt.Errorf("%w: keyword_gate %v must be within [0,1] (0: off)", ErrInvalidQuery, *g)
	}
	if math.IsNaN(q.RRFK) || q.RRFK < 0 || q.RRFK > MaxRRFK {
		return fmt.Errorf("%w: rrf_k %v must be within [0,%g] (0: the default)", ErrInvalidQuery, q.RRFK, float64(MaxRRFK))
	}
	if q.Lambda != nil && *q.Lambda > 1 {
		return fmt.Errorf("%w: mmr_lambda %v must be within [0,1]", ErrInvalidQuery, *q.Lambda)
	}
	if q.MinRelevance < 0 || q.MinRelevance > 1 || math.IsNaN(q.MinRelevance) {
		return fmt.Errorf("%w: min_relevance %v must be within [0,1]", ErrInvalidQuery, q.MinRelevance)
	}
	if q.Neighbours < 0 || q.Neighbours > memory.MaxNeighbours {
		return fmt.Errorf("%w: neighbours %d must be within 0..%d", ErrInvalidQuery, q.Neighbours, memory.MaxNeighbours)
	}
	if err := memory.CheckEpisode(q.Episode); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidQuery, err)
	}
	for name, t := range map[string]*time.Time{"since": q.Since, "until": q.Until, "as_of": q.AsOf, "now": q.Now} {
		if t != nil {
			if err := memory.CheckTime(name, *t); err != nil {
				return fmt.Errorf("%w: %v", ErrInvalidQuery, err)
			}
		}
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
	// window is the query text the vector leg, date reading, HyDE and
	// rerank read: the query, or a long one's window (reduce.go).
	window string
	// terms are a long query's kept keyword terms; nil: the BM25 leg
	// tokenizes the query.
	terms []string
	// queryRead is the share of the window the model reads (embed.Share),
	// set as the vector leg embeds it; 1 until then.
	queryRead float64
	// shares are the memory texts of the vector leg the model reads only
	// part of (embed.Share below 1). A text missing from it is read whole.
	shares map[string]float64
}

func (r *run) degrade(stage string, err error) {
	r.resp.Degraded = append(r.resp.Degraded, memory.Degraded{Stage: stage, Reason: err.Error()})
}

func (r *run) timed(name string, t0 time.Time) {
	r.resp.TimingsMS[name] += float64(time.Since(t0).Microseconds()) / 1000
}

// candidate is one fused result on its way to the response: the memory as
// the leg returned it, so nothing is looked up again until the result is built.
type candidate struct {
	m       *memory.Memory
	vec     []float32 // its stored vector, for MMR
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
	// What is current, unless asked for every version or for what was
	// current at another time: inside the legs, like any filter.
	q.Filter.Current = !q.IncludeSuperseded && q.AsOf == nil
	r := &run{s: s, q: q, start: time.Now(), queryRead: 1, resp: &memory.Response{
		QID: q.QID, Query: q.Query, Stages: []string{}, Degraded: []memory.Degraded{},
		TimingsMS: map[string]float64{}, Results: []memory.Result{},
	}}
	if err := r.reduce(ctx); err != nil {
		return nil, err
	}
	r.readDates()
	wantBM25 := q.Mode != memory.ModeVector
	qvec, err := r.queryVector(ctx)
	if err != nil {
		return nil, err
	}
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
	var hy backend.Hybrider
	if r.q.Fusion == FusionNative {
		hy = r.native()
	}

	var cands []*candidate
	if hy != nil {
		cands, err = r.hybrid(ctx, hy, qvec)
	} else {
		cands, err = r.legs(ctx, qvec, wantBM25)
	}
	if err != nil {
		return nil, err
	}
	cands = r.rerank(ctx, cands)
	cands = r.mmr(cands)
	r.finish(cands)
	r.resp.TimingsMS["total"] = float64(time.Since(r.start).Microseconds()) / 1000
	return r.resp, nil
}

// queryVector embeds the query (or its HyDE rewrite) when the mode needs it.
// It returns nil, with the reason in degraded, when the vector leg cannot run;
// an error only when the backend cannot say what vectors it holds.
func (r *run) queryVector(ctx context.Context) ([]float32, error) {
	s, q := r.s, r.q
	if q.Mode == memory.ModeBM25 {
		return nil, nil
	}
	if s.Embedder == nil {
		r.degrade("vector", embed.ErrNoEmbedder)
		return nil, nil
	}
	model := s.Embedder.Model()
	if script := embed.Unread(s.Embedder, r.window); script != "" {
		// Its vector would say nothing about the query's meaning, and clear
		// the bar for unrelated memories in the same script.
		r.degrade("vector", fmt.Errorf("model %s does not read this query's script (%s): the vector leg was skipped", model, script))
		return nil, nil
	}
	r.queryRead = embed.Share(s.Embedder, r.window)
	models, err := s.Backend.Models(ctx)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(models))
	for other, info := range models {
		if other != model && info.Count > 0 {
			names = append(names, other)
		}
	}
	sort.Strings(names) // a stable response
	for _, other := range names {
		r.degrade("vector", fmt.Errorf("%d memories embedded with model %s were not compared with the query's model %s", models[other].Count, other, model))
	}
	stored := models[model]
	if stored.Count == 0 {
		r.degrade("vector", fmt.Errorf("no memory has a vector from model %s yet", model))
		return nil, nil
	}
	text := r.window
	if q.HyDE {
		text = r.hyde(ctx)
	}
	t0 := time.Now()
	ectx, cancel := context.WithTimeout(ctx, durOr(s.EmbedTimeout, DefaultEmbedTimeout))
	defer cancel()
	var vecs [][]float32
	if q.HyDE { // a hypothetical memory: embedded as memories are
		vecs, err = s.Embedder.Embed(ectx, []string{text})
	} else {
		vecs, err = embed.EmbedQuery(ectx, s.Embedder, []string{text})
	}
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
		return nil, nil
	}
	if vecs[0] == nil {
		r.degrade("vector", fmt.Errorf("embedder %s has no vector for this query (no known word)", model))
		return nil, nil
	}
	if len(vecs[0]) != stored.Dim {
		r.degrade("vector", fmt.Errorf("embedder %s returned %d dimensions, stored vectors have %d", model, len(vecs[0]), stored.Dim))
		return nil, nil
	}
	return vecs[0], nil
}

// hyde rewrites the query for the vector leg; on any failure it keeps the query.
func (r *run) hyde(ctx context.Context) string {
	if r.s.LLM == nil {
		r.degrade("hyde", ErrNoLLM)
		return r.window
	}
	t0 := time.Now()
	hctx, cancel := context.WithTimeout(ctx, durOr(r.s.StageTimeout, DefaultStageTimeout))
	defer cancel()
	text, err := llm.HyDE(hctx, r.s.LLM, r.window)
	r.timed("hyde", t0)
	if err != nil {
		r.degrade("hyde", fmt.Errorf("kept the raw query: %w", err))
		return r.window
	}
	r.resp.Stages = append(r.resp.Stages, "hyde")
	return text
}

// legs asks the backend for both legs (or the one the strategy runs), fuses
// them, applies the boosts and keeps what rerank and MMR may look at.
func (r *run) legs(ctx context.Context, qvec []float32, wantBM25 bool) ([]*candidate, error) {
	s := r.s
	lq := r.legQuery(qvec)
	if wantBM25 {
		r.keywords(&lq)
		r.resp.Stages = append(r.resp.Stages, "bm25")
	}
	if qvec != nil {
		r.resp.Stages = append(r.resp.Stages, "vector")
	}
	res, err := s.Backend.Legs(ctx, lq)
	if err != nil {
		return nil, err
	}
	r.resp.TimingsMS["filter"] = ms(res.FilterTook)
	if wantBM25 {
		r.resp.TimingsMS["bm25"] = ms(res.BM25Took)
	}
	if qvec != nil {
		r.resp.TimingsMS["vector"] = ms(res.VectorTook)
	}
	t0 := time.Now()
	cands := r.fuse(res, lq.K)
	r.timed("fusion", t0)
	return r.boosted(ctx, cands)
}

// keywords sets the BM25 leg's query: the query's text, or a long query's
// kept terms (and, for a backend that reads only text, them joined).
func (r *run) keywords(lq *backend.LegQuery) {
	if r.terms == nil {
		lq.Text = r.q.Query
		return
	}
	lq.Terms, lq.Text = r.terms, strings.Join(r.terms, " ")
}

// legQuery is the backend query both the legs and a native hybrid get.
func (r *run) legQuery(qvec []float32) backend.LegQuery {
	s, q := r.s, r.q
	lq := backend.LegQuery{Filter: q.Filter, K: q.Candidates, Vector: qvec, Windows: r.resp.Time}
	if lq.K == 0 {
		lq.K = Candidates(q.Limit)
	}
	if s.Embedder != nil {
		lq.Model = s.Embedder.Model()
		lq.WithVectors = q.MMR
	}
	return lq
}

// boosted applies the boosts and keeps what rerank and MMR may look at; a
// backend.Completer completes the memories kept.
func (r *run) boosted(ctx context.Context, cands []*candidate) ([]*candidate, error) {
	t0 := time.Now()
	r.boost(cands)
	r.timed("boosts", t0)
	keep := max(r.q.Limit, r.s.RerankDepth, DefaultRerankDepth)
	if len(cands) > keep {
		cands = cands[:keep]
	}
	co, ok := r.s.Backend.(backend.Completer)
	if !ok || len(cands) == 0 {
		return cands, nil
	}
	t0 = time.Now()
	partial := make([]*memory.Memory, len(cands))
	for i, c := range cands {
		partial[i] = c.m
	}
	full, err := co.Complete(ctx, partial)
	r.timed("complete", t0)
	if err != nil {
		return nil, err
	}
	if len(full) != len(cands) {
		return nil, fmt.Errorf("backend completed %d memories of %d", len(full), len(cands))
	}
	out := cands[:0]
	for i, c := range cands {
		if full[i] != nil { // nil: deleted since the legs ran
			c.m = full[i]
			out = append(out, c)
		}
	}
	return out, nil
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
		return compareKeys(cs[i].m, cs[j].m) < 0
	})
}
