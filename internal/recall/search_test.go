package recall

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram/backend"
	"github.com/engram-memory/engram/embed"
	"github.com/engram-memory/engram/memory"
	"github.com/engram-memory/engram/rerank"
)

func ptr[T any](v T) *T { return &v }

func TestValidate(t *testing.T) {
	cases := []struct {
		name  string
		q     memory.Query
		error string // "" for valid: a substring of the error otherwise
	}{
		{"defaults", memory.Query{Query: "  deploys  "}, ""},
		{"empty", memory.Query{Query: " \t"}, "query text is empty"},
		{"negative limit", memory.Query{Query: "x", Limit: -1}, "limit -1"},
		{"limit above the maximum", memory.Query{Query: "x", Limit: MaxLimit + 1}, "above the maximum"},
		{"unknown mode", memory.Query{Query: "x", Mode: "fuzzy"}, `mode "fuzzy"`},
		{"unknown fusion", memory.Query{Query: "x", Fusion: "borda"}, `fusion "borda"`},
		{"candidates out of range", memory.Query{Query: "x", Candidates: 10*MaxLimit + 1}, "candidates"},
		{"negative weight", memory.Query{Query: "x", BM25Weight: ptr(-1.0)}, "bm25_weight"},
		{"NaN weight", memory.Query{Query: "x", VectorWeight: ptr(math.NaN())}, "vector_weight"},
		{"weight above the maximum", memory.Query{Query: "x", VectorWeight: ptr(MaxWeight * 2)}, "vector_weight"},
		{"lambda above 1", memory.Query{Query: "x", Lambda: ptr(1.5)}, "mmr_lambda"},
		{"NaN rrf_k", memory.Query{Query: "x", RRFK: math.NaN()}, "rrf_k"},
		{"rrf_k above the maximum", memory.Query{Query: "x", RRFK: MaxRRFK * 2}, "rrf_k"},
		{"keyword gate above 1", memory.Query{Query: "x", KeywordGate: ptr(1.5)}, "keyword_gate"},
		{"negative keyword gate", memory.Query{Query: "x", KeywordGate: ptr(-0.1)}, "keyword_gate"},
		{"NaN keyword gate", memory.Query{Query: "x", KeywordGate: ptr(math.NaN())}, "keyword_gate"},
		{"min_relevance above 1", memory.Query{Query: "x", MinRelevance: 1.5}, "min_relevance"},
		{"neighbours out of range", memory.Query{Query: "x", Neighbours: memory.MaxNeighbours + 1}, "neighbours"},
		{"since not before until", memory.Query{Query: "x", Filter: memory.Filter{Since: &clock, Until: &clock}}, "not before until"},
		{"time out of range", memory.Query{Query: "x", Now: ptr(time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC))}, "now"},
		{"bad scope", memory.Query{Query: "x", Filter: memory.Filter{Scope: map[string]string{"": "a"}}}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q := c.q
			err := Validate(&q)
			if c.name == "bad scope" { // the scope rule's words are memory's: only its wrapping is recall's
				if !errors.Is(err, ErrInvalidQuery) {
					t.Fatalf("Validate = %v, want ErrInvalidQuery", err)
				}
				return
			}
			if c.error == "" {
				if err != nil {
					t.Fatalf("Validate = %v", err)
				}
				if q.Query != "deploys" || q.Limit != DefaultLimit || q.Mode != memory.ModeHybrid || q.Fusion != FusionRRF {
					t.Fatalf("defaults not filled: %+v", q)
				}
				return
			}
			if !errors.Is(err, ErrInvalidQuery) || !strings.Contains(err.Error(), c.error) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("Validate = %v, want one line wrapping ErrInvalidQuery and naming %q", err, c.error)
			}
		})
	}
}

func TestCandidates(t *testing.T) {
	for _, c := range []struct{ limit, want int }{{1, MinCandidates}, {10, MinCandidates}, {11, 55}, {MaxLimit, 5 * MaxLimit}} {
		if got := Candidates(c.limit); got != c.want {
			t.Errorf("Candidates(%d) = %d, want %d", c.limit, got, c.want)
		}
	}
}

func TestDemandBoost(t *testing.T) {
	for _, c := range []struct {
		d, want float64
	}{{0, 1}, {-3, 1}, {math.NaN(), 1}, {demandHalf, 1 + MaxDemandBoost/2}, {1, 1.02}, {1e300, 1 + MaxDemandBoost}} {
		got := DemandBoost(c.d)
		if math.Abs(got-c.want) > 1e-12 || got > 1+MaxDemandBoost || got < 1 {
			t.Errorf("DemandBoost(%v) = %v, want %v within [1, %v]", c.d, got, c.want, 1+MaxDemandBoost)
		}
	}
}

// TestFusionRRF: every hybrid result's fused score is Σ w/(k+rank) over the
// legs that returned it, with the ranks and scores the backend's legs give,
// and its score that times its boosts; results best first.
func TestFusionRRF(t *testing.T) {
	cases := []struct {
		name   string
		cfg    func(*Config)
		q      memory.Query
		wb, wv float64
		k      float64
		source string
	}{
		{"defaults", nil, memory.Query{}, 1, 1, 60, "model"},
		{"model weight and k", func(c *Config) { c.VectorWeight, c.RRFK = 0.5, 10 }, memory.Query{}, 1, 0.5, 10, "model"},
		{"bm25 weight of the store", func(c *Config) { c.BM25Weight, c.WeightSource = 2, "store" }, memory.Query{}, 2, 1, 60, "store"},
		{"query weights and k", nil, memory.Query{BM25Weight: ptr(0.25), VectorWeight: ptr(3.0), RRFK: 1}, 0.25, 3, 1, "query"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := searcher(t)
			if c.cfg != nil {
				c.cfg(&s.Config)
			}
			q := c.q
			q.Query, q.NoDates = "when do deploys go out after the canary", true
			resp := searchOK(t, s, q)
			f := resp.Fusion
			if resp.Strategy != memory.StrategyHybrid || f.Method != FusionRRF || f.K != c.k || f.Weights["bm25"] != c.wb ||
				f.Weights["vector"] != c.wv || f.WeightSource != c.source || f.Candidates != MinCandidates {
				t.Fatalf("strategy %s, fusion %+v", resp.Strategy, f)
			}
			bm, vec := legRanks(t, s.Backend, backend.LegQuery{Filter: memory.Filter{Current: true}, K: MinCandidates, Text: q.Query,
				Vector: conceptVector(q.Query), Model: testModel})
			if len(resp.Results) == 0 || resp.Results[0].ID != "01" {
				t.Fatalf("results %v, want 01 first", resultIDs(resp))
			}
			for i, r := range resp.Results {
				ex := r.Explain
				var want float64
				if p, ok := bm[r.ID]; ok {
					want += c.wb / (c.k + float64(p.Rank))
					if ex.BM25 == nil || ex.BM25.Rank != p.Rank || ex.BM25.Score != round(p.Score, 6) {
						t.Fatalf("%s: bm25 explain %+v, leg place %+v", r.ID, ex.BM25, p)
					}
				} else if ex.BM25 != nil {
					t.Fatalf("%s: bm25 explain %+v for a memory the leg did not return", r.ID, ex.BM25)
				}
				if p, ok := vec[r.ID]; ok {
					want += c.wv / (c.k + float64(p.Rank))
					if ex.Vector == nil || ex.Vector.Rank != p.Rank || ex.Vector.Cosine != round(p.Score, 6) {
						t.Fatalf("%s: vector explain %+v, leg place %+v", r.ID, ex.Vector, p)
					}
				} else if ex.Vector != nil {
					t.Fatalf("%s: vector explain %+v for a memory the leg did not return", r.ID, ex.Vector)
				}
				if math.Abs(ex.Fused-want) > 1e-8 || ex.RRF != ex.Fused {
					t.Fatalf("%s: fused %v (rrf %v), want Σ w/(k+rank) = %v", r.ID, ex.Fused, ex.RRF, want)
				}
				boosted := want * ex.Boosts.Favorite * ex.Boosts.Demand
				if math.Abs(r.Score-boosted) > 1e-8+1e-6*boosted { // scores are rounded to 8 digits, the demand boost to 6
					t.Fatalf("%s: score %v, want fused × boosts = %v", r.ID, r.Score, boosted)
				}
				if i > 0 && r.Score > resp.Results[i-1].Score {
					t.Fatalf("results not best first: %v", resultIDs(resp))
				}
				if ex.Relevance < 0 || ex.Relevance > 1 {
					t.Fatalf("%s: relevance %v outside [0,1]", r.ID, ex.Relevance)
				}
			}
		})
	}
}

// TestFusionMethods: each fusion names itself, keeps every leg's explain,
// and ranks the clear match first; native falls back to rrf on a backend
// without a native hybrid, saying so.
func TestFusionMethods(t *testing.T) {
	for _, c := range []struct {
		fusion, method string
		degraded       []string
	}{
		{FusionRRF, FusionRRF, []string{}},
		{FusionRSF, FusionRSF, []string{}},
		{FusionDBSF, FusionDBSF, []string{}},
		{FusionNative, FusionRRF, []string{"fusion"}},
	} {
		t.Run(c.fusion, func(t *testing.T) {
			resp := searchOK(t, searcher(t), memory.Query{Query: "staging database reset", Fusion: c.fusion})
			if resp.Fusion.Method != c.method || resp.Strategy != memory.StrategyHybrid || !slices.Equal(stages(resp), c.degraded) {
				t.Fatalf("fusion %+v, strategy %s, degraded %+v", resp.Fusion, resp.Strategy, resp.Degraded)
			}
			if len(resp.Results) == 0 || resp.Results[0].ID != "02" || resp.Results[0].Explain.BM25 == nil || resp.Results[0].Explain.Vector == nil {
				t.Fatalf("results %v, want 02 first with both legs", resultIDs(resp))
			}
		})
	}
}

// TestBoosts: the favorite, demand and time multipliers, each bounded, each
// in the explanation, and what they reorder.
func TestBoosts(t *testing.T) {
	s := searcher(t)
	resp := searchOK(t, s, memory.Query{Query: "wifi password fridge", Limit: 2})
	if got := resultIDs(resp); !slices.Equal(got, []string{"06B", "06A"}) {
		t.Fatalf("twins %v: the favorite (×%v) should beat the used one (≤ ×%v)", got, FavoriteBoost, 1+MaxDemandBoost)
	}
	fav, used := resp.Results[0].Explain.Boosts, resp.Results[1].Explain.Boosts
	if fav.Favorite != FavoriteBoost || fav.Demand != 1 || fav.Time != 0 {
		t.Fatalf("favorite twin's boosts %+v", fav)
	}
	if used.Favorite != 1 || used.Demand != round(DemandBoost(8), 6) || used.Demand <= 1 {
		t.Fatalf("used twin's boosts %+v, want demand %v", used, DemandBoost(8))
	}
	// A date phrase: the memory of that day is boosted, and the window named.
	for _, c := range []struct {
		name     string
		cfg      Config
		q        memory.Query
		windows  int
		boost    float64
		boosted  bool
		firstIDs string
	}{
		{"read", Config{}, memory.Query{Query: "what changed about deploys on 9 February 2023"}, 1, DefaultTimeBoost, true, "07"},
		{"capped", Config{TimeBoost: 10}, memory.Query{Query: "deploys on 9 February 2023"}, 1, MaxTimeBoost, true, "07"},
		{"no dates", Config{}, memory.Query{Query: "deploys on 9 February 2023", NoDates: true}, 0, 0, false, ""},
		{"boost 1 reads none", Config{TimeBoost: 1}, memory.Query{Query: "deploys on 9 February 2023"}, 0, 0, false, ""},
		{"another day", Config{}, memory.Query{Query: "deploys on 10 February 2023"}, 1, DefaultTimeBoost, false, ""},
	} {
		t.Run("time "+c.name, func(t *testing.T) {
			s := searcher(t)
			s.TimeBoost = c.cfg.TimeBoost
			resp := searchOK(t, s, c.q)
			if len(resp.Time) != c.windows || (c.windows > 0 && resp.Time[0].Boost != c.boost) {
				t.Fatalf("windows %+v, want %d of boost %v", resp.Time, c.windows, c.boost)
			}
			for _, r := range resp.Results {
				if got := r.Explain.Boosts.Time != 0; got != (c.boosted && r.ID == "07") {
					t.Fatalf("%s: time boost %v", r.ID, r.Explain.Boosts.Time)
				}
				if r.ID == "07" && c.boosted && r.Explain.Boosts.Time != c.boost {
					t.Fatalf("07: time boost %v, want %v", r.Explain.Boosts.Time, c.boost)
				}
			}
			if c.firstIDs != "" && resultIDs(resp)[0] != c.firstIDs {
				t.Fatalf("results %v, want %s first", resultIDs(resp), c.firstIDs)
			}
		})
	}
}

// TestBounds: the limit, the candidate pool and the relevance bars.
func TestBounds(t *testing.T) {
	var many []*memory.Memory
	for i := range 30 {
		many = append(many, note(string(rune('A'+i/26))+string(rune('a'+i%26)), "the canary for deploys number "+strings.Repeat("x", i+1)))
	}
	s := &Searcher{Backend: store(t, many...), Config: Config{Embedder: embedder, VectorWeight: 1, RelevanceBar: 0.5, KeywordBar: 0.9,
		Now: func() time.Time { return clock }}}
	for _, c := range []struct {
		name       string
		q          memory.Query
		results    int
		candidates int
		minRel     float64
	}{
		{"default limit", memory.Query{}, DefaultLimit, MinCandidates, 0},
		{"limit 3", memory.Query{Limit: 3}, 3, MinCandidates, 0},
		{"limit 20", memory.Query{Limit: 20}, 20, 100, 0},
		{"more than there are", memory.Query{Limit: 100}, 30, 500, 0},
		{"candidates given", memory.Query{Limit: 3, Candidates: 7}, 3, 7, 0},
		{"min relevance 1 keeps none", memory.Query{MinRelevance: 1}, 0, MinCandidates, 1},
		{"the model bar", memory.Query{ModelBar: true}, -1, MinCandidates, 0.5},
		{"the keyword bar", memory.Query{ModelBar: true, Mode: memory.ModeBM25}, -1, MinCandidates, 0.9},
	} {
		t.Run(c.name, func(t *testing.T) {
			q := c.q
			q.Query = "canary deploys"
			resp := searchOK(t, s, q)
			if c.results >= 0 && len(resp.Results) != c.results {
				t.Fatalf("%d results, want %d", len(resp.Results), c.results)
			}
			if resp.Fusion.Candidates != c.candidates || resp.MinRelevance != c.minRel {
				t.Fatalf("candidates %d, min relevance %v; want %d, %v", resp.Fusion.Candidates, resp.MinRelevance, c.candidates, c.minRel)
			}
			for _, r := range resp.Results {
				if r.Explain.Relevance < c.minRel {
					t.Fatalf("%s: relevance %v below the bar %v", r.ID, r.Explain.Relevance, c.minRel)
				}
			}
			if c.minRel > 0 {
				// The candidates passed over until the limit was reached.
				below, kept := 0, 0
				all := searchOK(t, s, memory.Query{Query: q.Query, Mode: q.Mode, Limit: MaxLimit})
				for _, r := range all.Results {
					if kept == DefaultLimit {
						break
					}
					if r.Explain.Relevance < c.minRel {
						below++
					} else {
						kept++
					}
				}
				if resp.BelowBar != below {
					t.Fatalf("below bar %d, want %d", resp.BelowBar, below)
				}
			}
		})
	}
}

// slowEmbedder answers only when its context ends.
type slowEmbedder struct{}

func (slowEmbedder) Model() string { return testModel }
func (slowEmbedder) Embed(ctx context.Context, _ []string) ([][]float32, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestDegraded: what the pipeline does without a stage it was asked for, or
// when a stage fails: the strategy that ran and the degraded entries.
func TestDegraded(t *testing.T) {
	other := note("90", "deploys of another model")
	other.Embedding = &memory.Embedding{Model: "other:model", Dim: 2, Vector: []float32{1, 0}}
	for _, c := range []struct {
		name     string
		embedder embed.Embedder
		extra    []*memory.Memory
		cfg      Config
		q        memory.Query
		strategy string
		degraded []string
		reason   string // a substring of the first entry's reason
	}{
		{"no embedder", nil, nil, Config{}, memory.Query{}, memory.StrategyBM25, []string{"vector", "relevance"}, "no embedder"},
		{"bm25 mode", embedder, nil, Config{}, memory.Query{Mode: memory.ModeBM25}, memory.StrategyBM25, []string{}, ""},
		{"vector mode", embedder, nil, Config{}, memory.Query{Mode: memory.ModeVector}, memory.StrategyVector, []string{}, ""},
		{"embedder fails", embed.Func{ModelID: testModel, F: func(context.Context, []string) ([][]float32, error) {
			return nil, errors.New("out of memory")
		}}, nil, Config{}, memory.Query{}, memory.StrategyBM25, []string{"vector", "relevance"}, "out of memory"},
		{"embedder too slow", slowEmbedder{}, nil, Config{EmbedTimeout: time.Millisecond}, memory.Query{}, memory.StrategyBM25,
			[]string{"vector", "relevance"}, "no answer within 1ms"},
		{"no vector for the query", embedder, nil, Config{}, memory.Query{Query: "zebra xylophone"}, memory.StrategyBM25,
			[]string{"vector", "relevance"}, "no vector for this query"},
		{"wrong dimension", embed.Func{ModelID: testModel, F: func(_ context.Context, t []string) ([][]float32, error) {
			return [][]float32{{1, 0}}, nil
		}}, nil, Config{}, memory.Query{}, memory.StrategyBM25, []string{"vector", "relevance"}, "2 dimensions, stored vectors have 12"},
		{"no vector of the model stored", embed.Func{ModelID: "third:model", F: embedder.F}, nil, Config{}, memory.Query{},
			memory.StrategyBM25, []string{"vector", "vector", "relevance"}, "embedded with model"},
		{"another model's vectors", embedder, []*memory.Memory{other}, Config{}, memory.Query{}, memory.StrategyHybrid,
			[]string{"vector"}, "1 memories embedded with model other:model"},
		{"native without a native hybrid", embedder, nil, Config{}, memory.Query{Fusion: FusionNative}, memory.StrategyHybrid,
			[]string{"fusion"}, "no native hybrid"},
		{"vector weight 0", embedder, nil, Config{}, memory.Query{VectorWeight: ptr(0.0)}, memory.StrategyHybrid,
			[]string{"vector"}, "vector weight 0"},
		{"rerank without a reranker", embedder, nil, Config{}, memory.Query{Rerank: true}, memory.StrategyHybrid,
			[]string{"rerank"}, "no reranker"},
		{"hyde without an LLM", embedder, nil, Config{}, memory.Query{HyDE: true}, memory.StrategyHybrid, []string{"hyde"}, "no LLM"},
		{"mmr without vectors", nil, nil, Config{}, memory.Query{MMR: true, Mode: memory.ModeBM25}, memory.StrategyBM25,
			[]string{"mmr"}, "no candidate has a stored vector"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := &Searcher{Backend: store(t, append(fixture(), c.extra...)...), Config: c.cfg}
			s.Embedder, s.VectorWeight, s.Now = c.embedder, 1, func() time.Time { return clock }
			q := c.q
			if q.Query == "" {
				q.Query = "deploys canary"
			}
			resp := searchOK(t, s, q)
			if resp.Strategy != c.strategy || !slices.Equal(stages(resp), c.degraded) {
				t.Fatalf("strategy %s, degraded %+v; want %s, %v", resp.Strategy, resp.Degraded, c.strategy, c.degraded)
			}
			if c.reason != "" && !strings.Contains(resp.Degraded[0].Reason, c.reason) {
				t.Fatalf("reason %q, want it to say %q", resp.Degraded[0].Reason, c.reason)
			}
			// The clear match stays the best of each leg that ran (the
			// boosts may put a favorite above it in the results).
			i := slices.Index(resultIDs(resp), "01")
			if c.name != "no vector for the query" && (i < 0 || !(resp.Results[i].Explain.BM25 != nil && resp.Results[i].Explain.BM25.Rank == 1 ||
				resp.Results[i].Explain.Vector != nil && resp.Results[i].Explain.Vector.Rank == 1)) {
				t.Fatalf("results %v: a degraded search still ranks 01 first in a leg", resultIDs(resp))
			}
		})
	}
}

// reranker is a hand-written reranker: it scores documents by a function
// of their text, or fails.
type reranker struct {
	score func(doc string) float64
	err   error
	drop  int // leave out this many of the last documents
}

func (reranker) Name() string { return "test:reranker" }
func (r reranker) Rerank(_ context.Context, _ string, docs []string, _ int) ([]rerank.Score, error) {
	if r.err != nil {
		return nil, r.err
	}
	var out []rerank.Score
	for i, d := range docs[:max(0, len(docs)-r.drop)] {
		out = append(out, rerank.Score{Index: i, Score: r.score(d)})
	}
	slices.SortStableFunc(out, func(a, b rerank.Score) int { return -cmpFloat(a.Score, b.Score) })
	return out, nil
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func TestRerank(t *testing.T) {
	byLength := func(d string) float64 { return float64(len(d)) }
	for _, c := range []struct {
		name     string
		r        reranker
		degraded []string
		reranked bool
	}{
		{"reorders", reranker{score: byLength}, []string{}, true},
		{"keeps what it left out after", reranker{score: byLength, drop: 2}, []string{}, true},
		{"fails", reranker{err: errors.New("502 from the provider")}, []string{"rerank"}, false},
		{"scores nothing", reranker{score: byLength, drop: 1000}, []string{"rerank"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := searcher(t)
			s.Reranker = c.r
			fused := searchOK(t, s, memory.Query{Query: "deploys canary team", Limit: 5})
			resp := searchOK(t, s, memory.Query{Query: "deploys canary team", Limit: 5, Rerank: true})
			if !slices.Equal(stages(resp), c.degraded) || slices.Contains(resp.Stages, "rerank") != c.reranked {
				t.Fatalf("degraded %+v, stages %v", resp.Degraded, resp.Stages)
			}
			if !c.reranked {
				if !slices.Equal(resultIDs(resp), resultIDs(fused)) {
					t.Fatalf("a failed rerank changed the order: %v, fused %v", resultIDs(resp), resultIDs(fused))
				}
				return
			}
			pre := map[string]int{}
			for i, r := range fused.Results {
				pre[r.ID] = i + 1
			}
			for i, r := range resp.Results {
				rr := r.Explain.Rerank
				if rr == nil || r.Score != round(rr.Score, 8) || (pre[r.ID] != 0 && rr.PreRank != pre[r.ID]) {
					t.Fatalf("%s: rerank explain %+v, score %v, fused rank %d", r.ID, rr, r.Score, pre[r.ID])
				}
				if i > 0 && r.Score > resp.Results[i-1].Score {
					t.Fatalf("reranked results not best first: %v", resultIDs(resp))
				}
			}
			if c.r.drop == 0 && byLength(resp.Results[0].Text) < byLength(resp.Results[1].Text) {
				t.Fatalf("not reordered by the reranker's scores: %v", resultIDs(resp))
			}
		})
	}
}

// TestMMR: with a low lambda, a repeat of the top result gives way to a
// different one; every pick is explained.
func TestMMR(t *testing.T) {
	s := &Searcher{Backend: store(t, note("A1", "deploys canary"), note("A2", "deploys canary deploys canary"),
		note("B1", "deploys on tuesdays")), Config: Config{Embedder: embedder, VectorWeight: 1, Now: func() time.Time { return clock }}}
	plain := searchOK(t, s, memory.Query{Query: "deploys canary", Limit: 2, Mode: memory.ModeVector})
	if got := resultIDs(plain); !slices.Equal(got, []string{"A1", "A2"}) {
		t.Fatalf("without MMR %v, want the two repeats", got)
	}
	resp := searchOK(t, s, memory.Query{Query: "deploys canary", Limit: 2, Mode: memory.ModeVector, MMR: true, Lambda: ptr(0.3)})
	if got := resultIDs(resp); !slices.Equal(got, []string{"A1", "B1"}) || !slices.Contains(resp.Stages, "mmr") {
		t.Fatalf("with MMR %v (stages %v), want A1 then B1", got, resp.Stages)
	}
	if m := resp.Results[1].Explain.MMR; m == nil || m.PreRank != 3 || resp.Results[0].Explain.MMR.Redundancy != 0 {
		t.Fatalf("MMR explain %+v, %+v", resp.Results[0].Explain.MMR, m)
	}
}

// TestLongQuery: a query over LongQueryBytes is reduced before the legs,
// with the backend's term counts, and says so.
func TestLongQuery(t *testing.T) {
	s := searcher(t)
	q := "staging database reset " + strings.Repeat("lorem ipsum dolor sit amet ", 300) + "night"
	resp := searchOK(t, s, memory.Query{Query: q})
	red := resp.Reduced
	if red == nil || red.Bytes != len(q) || red.Window > QueryWindowBytes || len(red.Kept) > MaxQueryTerms || !slices.Contains(red.Kept, "stage") {
		t.Fatalf("reduced %+v", red)
	}
	if !slices.Contains(stages(resp), "query") || len(resp.Results) == 0 || resp.Results[0].ID != "02" {
		t.Fatalf("degraded %v, results %v", stages(resp), resultIDs(resp))
	}
	short := searchOK(t, s, memory.Query{Query: "staging database reset night"})
	if short.Reduced != nil || slices.Contains(stages(short), "query") {
		t.Fatalf("a short query was reduced: %+v", short.Reduced)
	}
}

// TestSupersededAndScopes: what is current by default, every version when
// asked, and one id in two scopes as two results.
func TestSupersededAndScopes(t *testing.T) {
	s := searcher(t)
	if got := resultIDs(searchOK(t, s, memory.Query{Query: "where does the user live", Mode: memory.ModeBM25})); !slices.Equal(got, []string{"09"}) {
		t.Fatalf("current: %v, want only 09 (08 is superseded)", got)
	}
	all := searchOK(t, s, memory.Query{Query: "where does the user live", Mode: memory.ModeBM25, IncludeSuperseded: true})
	if got := resultIDs(all); len(got) != 2 || !slices.Contains(got, "08") {
		t.Fatalf("every version: %v", got)
	}
	for _, r := range all.Results {
		if (r.ID == "08") != (r.SupersededBy == "09") {
			t.Fatalf("%s superseded by %q", r.ID, r.SupersededBy)
		}
	}
	a, b := note("X", "the vault key rotates"), note("X", "the vault key rotates")
	a.Scope, b.Scope = map[string]string{"team": "a"}, map[string]string{"team": "b"}
	s.Backend = store(t, a, b)
	resp := searchOK(t, s, memory.Query{Query: "vault key"})
	if len(resp.Results) != 2 || resp.Results[0].Scope["team"] == resp.Results[1].Scope["team"] {
		t.Fatalf("one id in two scopes: %+v", resp.Results)
	}
}

// TestCancelled: a cancelled search fails with the context's error.
func TestCancelled(t *testing.T) {
	c, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := searcher(t).Search(c, memory.Query{Query: "deploys"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Search with a cancelled context: %v", err)
	}
}

// TestKeywordGate: in a hybrid, BM25's weight shrinks to best/gate when the
// keyword relevance of its best match (best) is below the gate, the model's
// or the query's; the response says so and the fusion uses that weight.
// Nothing changes at or above the gate, with the gate off, or with one leg.
func TestKeywordGate(t *testing.T) {
	const text = "when do deploys go out after the canary"
	res, err := searcher(t).Backend.Legs(ctx, backend.LegQuery{Filter: memory.Filter{Current: true}, K: MinCandidates, Text: text,
		Vector: conceptVector(text), Model: testModel})
	if err != nil {
		t.Fatal(err)
	}
	best := 0.0
	for _, h := range res.BM25 {
		best = max(best, relevanceScore(h)/res.Bound)
	}
	if !(best > 0.05 && best < 0.5) {
		t.Fatalf("best keyword relevance %v: the fixture no longer has a partial match", best)
	}
	cases := []struct {
		name  string
		model float64  // Config.KeywordGate
		query *float64 // Query.KeywordGate
		mode  string
		gate  float64 // the gate that scales BM25's weight; 0: none
	}{
		{"off", 0, nil, "", 0},
		{"model gate below the best match", best / 2, nil, "", 0},
		{"model gate at the best match", best, nil, "", 0},
		{"model gate above the best match", 2 * best, nil, "", 2 * best},
		{"query gate above the best match", 0, ptr(1.0), "", 1},
		{"query gate overrides the model's", 1, ptr(2 * best), "", 2 * best},
		{"query turns the model's gate off", 1, ptr(0.0), "", 0},
		{"bm25 alone", 1, nil, memory.ModeBM25, 0},
		{"vector alone", 1, nil, memory.ModeVector, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := searcher(t)
			s.Config.KeywordGate = c.model
			resp := searchOK(t, s, memory.Query{Query: text, Mode: c.mode, Fusion: FusionRSF, KeywordGate: c.query, NoDates: true})
			f := resp.Fusion
			wb := 1.0
			if c.gate == 0 {
				if f.Gated != nil {
					t.Fatalf("gated %+v, want none", f.Gated)
				}
			} else {
				wb = round(best/c.gate, 6)
				if f.Gated == nil || f.Gated.Gate != c.gate || f.Gated.Best != round(best, 6) {
					t.Fatalf("gated %+v, want gate %v best %v", f.Gated, c.gate, round(best, 6))
				}
			}
			if c.mode != "" {
				return
			}
			if math.Abs(f.Weights["bm25"]-wb) > 1e-12 || f.Weights["vector"] != 1 {
				t.Fatalf("weights %v, want bm25 %v, vector 1", f.Weights, wb)
			}
			// Relative score fusion with that weight: Σ w·(s−min)/(max−min)
			// over each leg's hits.
			norm := func(hs []backend.Hit) map[string]float64 {
				lo, hi := math.Inf(1), math.Inf(-1)
				for _, h := range hs {
					lo, hi = min(lo, h.Score), max(hi, h.Score)
				}
				out := map[string]float64{}
				for _, h := range hs {
					out[h.Memory.ID] = 1
					if hi > lo {
						out[h.Memory.ID] = (h.Score - lo) / (hi - lo)
					}
				}
				return out
			}
			nb, nv := norm(res.BM25), norm(res.Vector)
			for _, r := range resp.Results {
				if want := wb*nb[r.ID] + nv[r.ID]; math.Abs(r.Explain.Fused-want) > 1e-8 {
					t.Fatalf("%s: fused %v, want %v·%v + %v = %v", r.ID, r.Explain.Fused, wb, nb[r.ID], nv[r.ID], want)
				}
			}
		})
	}
	// A hybrid whose vector leg finds nothing (no memory the filter lets
	// through has a vector) is ranked by BM25 alone: no gate, BM25's weight
	// as it is.
	t.Run("no vector hit", func(t *testing.T) {
		s := searcher(t)
		bare := note("10", "a note with no known concept at all")
		bare.Type = "fact"
		s.Backend = store(t, bare, note("04", "Coffee is on the third floor"))
		resp := searchOK(t, s, memory.Query{Query: "coffee note", Filter: memory.Filter{Type: "fact"}, Fusion: FusionRSF,
			KeywordGate: ptr(1.0), NoDates: true})
		if resp.Strategy != memory.StrategyHybrid || resp.Fusion.Gated != nil || resp.Fusion.Weights["bm25"] != 1 ||
			len(resp.Results) != 1 || resp.Results[0].Explain.Vector != nil {
			t.Fatalf("strategy %s, fusion %+v, results %v", resp.Strategy, resp.Fusion, resultIDs(resp))
		}
	})
}

// latinReader is the test model as a model of English: it reads the Latin
// script only (embed.Reader).
type latinReader struct{ embed.Func }

func (latinReader) Scripts() embed.Scripts { return embed.Latin }

// TestReadShare: a cosine counts towards relevance in proportion to the
// share of the query's and the memory's letters the model reads, which the
// vector leg's explain shows; a memory it reads less than half of is left
// out of the leg, and two texts it reads whole are weighed as before.
func TestReadShare(t *testing.T) {
	mems := []*memory.Memory{
		note("en", "deploy canary"),
		note("mixed", "deploy the canary 金丝雀发布"), // 15 Latin letters, 5 Han characters of 2
		note("zh", "部署 deploy 金丝雀发布流程"),          // 6 and 7 of 2: not read
	}
	cases := []struct {
		name, query string
		queryRead   float64
		read        map[string]float64 // results of the vector leg, by id
	}{
		{"english query", "how do we deploy the canary", 1, map[string]float64{"en": 1, "mixed": 0.6}},
		{"mixed query", "deploy canary 怎么做", 12.0 / 18, map[string]float64{"en": 12.0 / 18, "mixed": 12.0 / 18 * 0.6}},
	}
	for _, c := range cases {
		for _, mode := range []string{memory.ModeHybrid, memory.ModeVector} {
			t.Run(c.name+"/"+mode, func(t *testing.T) {
				s := &Searcher{Backend: store(t, mems...), Config: Config{Embedder: latinReader{embedder}, VectorWeight: 1,
					WeightSource: "model", VectorFloor: 0.1, Paraphrase: 0.8, Now: func() time.Time { return clock }}}
				resp := searchOK(t, s, memory.Query{Query: c.query, Mode: mode, Fusion: FusionRSF, NoDates: true})
				legs, err := s.Backend.Legs(ctx, backend.LegQuery{Filter: memory.Filter{Current: true}, K: MinCandidates, Text: c.query,
					Vector: conceptVector(c.query), Model: testModel})
				if err != nil {
					t.Fatal(err)
				}
				relB := map[string]float64{}
				if mode == memory.ModeHybrid {
					for _, h := range legs.BM25 {
						relB[h.Memory.ID] = keywordRelevance(relevanceScore(h), legs.Bound)
					}
				}
				if said := fmt.Sprint(resp.Degraded); !strings.Contains(said, "1 candidates written in a script model") {
					t.Errorf("degraded %s, want the Chinese memory left out of the vector leg", said)
				}
				seen := 0
				for _, r := range resp.Results {
					v := r.Explain.Vector
					read, ok := c.read[r.ID]
					if !ok {
						if v != nil {
							t.Errorf("%s: in the vector leg (%+v), want it left out", r.ID, v)
						}
						continue
					}
					if v == nil {
						t.Fatalf("%s: not in the vector leg", r.ID)
					}
					seen++
					want := read
					if read == 1 {
						want = 0 // omitted
					}
					if math.Abs(v.Read-want) > 1e-4 {
						t.Errorf("%s: explain read %v, want %v", r.ID, v.Read, want)
					}
					relV := vectorRelevance(v.Cosine, 0.1) * read
					n := 2
					if mode == memory.ModeVector {
						n = 1
					}
					if got, want := r.Explain.Relevance, round(relevance(relB[r.ID], relV, n, 0.8), 4); math.Abs(got-want) > 2e-4 {
						t.Errorf("%s: relevance %v, want %v (read %v)", r.ID, got, want, read)
					}
				}
				if seen != len(c.read) {
					t.Errorf("%d results from the vector leg, want %d", seen, len(c.read))
				}
			})
		}
	}
}
