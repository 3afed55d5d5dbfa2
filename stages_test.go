package engram_test

// End-to-end tests of the optional recall stages through the library: a real
// SQLite store in a temp dir and real HTTP servers on 127.0.0.1 speaking the
// rerank (/rerank) and OpenAI chat completions protocols. Every stage must show
// in stages, timings_ms and explain, and degrade to a no-op with a degraded
// entry (slow, failing, malformed, absent provider) while the search succeeds.

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/embed"
	"github.com/engram-memory/engram/internal/golden"
	"github.com/engram-memory/engram/llm"
	"github.com/engram-memory/engram/rerank"
)

// topicWords give the test embedder's dimensions: a text's vector counts the
// words starting with each dimension's prefixes, L2-normalised, so every
// cosine below can be worked by hand.
var topicWords = [][]string{{"deploy", "key", "rotat"}, {"vault", "approval", "access"}, {"espresso", "sugar", "coffee"}}

func topicVector(text string) []float32 {
	v := make([]float32, len(topicWords))
	var n float64
	for _, w := range strings.Fields(strings.ToLower(text)) {
		for d, prefixes := range topicWords {
			for _, p := range prefixes {
				if strings.HasPrefix(w, p) {
					v[d]++
					n++
				}
			}
		}
	}
	if n == 0 {
		return nil // no known word: the embedder has no vector, as GloVe does
	}
	norm := float32(0)
	for _, x := range v {
		norm += x * x
	}
	norm = float32(math.Sqrt(float64(norm)))
	for i := range v {
		v[i] /= norm
	}
	return v
}

var topicEmbedder = embed.Func{ModelID: "test:topics", F: func(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = topicVector(t)
	}
	return out, nil
}}

// stageMemories is the small fixed store of the hand-worked examples. a and c
// have the same vector (1,0,0): near-duplicates for MMR.
var stageMemories = []*engram.Memory{
	{ID: "a", Text: "Rotate the deploy key every ninety days."},
	{ID: "b", Text: "The deploy key lives in the vault."},
	{ID: "c", Text: "Deploy key rotation: rotate the deploy key yearly."},
	{ID: "d", Text: "Vault access needs two approvals."},
	{ID: "e", Text: "Espresso without sugar."},
}

func stageDB(t *testing.T, opts engram.Options) *engram.DB {
	t.Helper()
	if opts.Embedder == nil && !opts.NoEmbedder {
		opts.Embedder = topicEmbedder
	}
	w := 1.0
	if opts.VectorWeight == nil {
		opts.VectorWeight = &w
	}
	db := openTest(t, opts)
	add(t, db, stageMemories...)
	return db
}

// hasDegraded reports whether the response has a degraded entry for stage
// whose reason contains want.
func hasDegraded(resp *engram.Response, stage, want string) bool {
	for _, d := range resp.Degraded {
		if d.Stage == stage && strings.Contains(d.Reason, want) {
			return true
		}
	}
	return false
}

// server modes shared by both protocols.
const (
	modeOK        = "ok"
	modeSlow      = "slow"
	modeFailing   = "failing"
	modeMalformed = "malformed"
)

// rerankServer speaks POST /rerank ({query, documents, top_n} in,
// {results: [{index, relevance_score}]} out). In modeOK it scores the
// documents in reverse order of arrival, so the fused order is turned over.
func rerankServer(t *testing.T, mode string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/rerank" || r.Method != http.MethodPost {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		var req struct {
			Query     string   `json:"query"`
			Documents []string `json:"documents"`
			TopN      int      `json:"top_n"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Query == "" || len(req.Documents) == 0 {
			http.Error(w, `{"error":"bad request"}`, http.StatusBadRequest)
			return
		}
		switch mode {
		case modeSlow:
			<-r.Context().Done()
			return
		case modeFailing:
			http.Error(w, `{"error":"model crashed"}`, http.StatusInternalServerError)
			return
		case modeMalformed:
			fmt.Fprint(w, `{"results": [{"index": 0, "relevance_score": `)
			return
		}
		type item struct {
			Index int     `json:"index"`
			Score float64 `json:"relevance_score"`
		}
		var out struct {
			Results []item `json:"results"`
		}
		for i := len(req.Documents) - 1; i >= 0; i-- {
			out.Results = append(out.Results, item{Index: i, Score: float64(i+1) / float64(len(req.Documents))})
		}
		json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// chatServer speaks POST /chat/completions. In modeOK it answers with content.
func chatServer(t *testing.T, mode, content string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/chat/completions" || r.Method != http.MethodPost {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		var req struct {
			Model    string `json:"model"`
			Messages []struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"messages"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) == 0 {
			http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
			return
		}
		switch mode {
		case modeSlow:
			<-r.Context().Done()
			return
		case modeFailing:
			http.Error(w, `{"error":{"message":"overloaded"}}`, http.StatusInternalServerError)
			return
		case modeMalformed:
			fmt.Fprint(w, `<html>gateway</html>`)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{
			"id": "x", "object": "chat.completion", "model": req.Model,
			"choices": []map[string]any{{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": content}}},
		})
	}))
	t.Cleanup(srv.Close)
	return srv
}

func httpReranker(t *testing.T, url string) rerank.Reranker {
	t.Helper()
	r, err := rerank.NewHTTP(rerank.HTTPConfig{BaseURL: url, Model: "test-ce", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func chatClient(t *testing.T, url string) *llm.Client {
	t.Helper()
	c, err := llm.New(llm.Config{BaseURL: url, Model: "test-llm", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// stageTimeout bounds each provider call in the degrade tests; a slow server
// never answers, so its length only sets how long the test waits.
const stageTimeout = 300 * time.Millisecond

func TestRerankStage(t *testing.T) {
	db := stageDB(t, engram.Options{Reranker: httpReranker(t, rerankServer(t, modeOK).URL)})
	plain := search(t, db, engram.Query{Query: "deploy key", NoRecord: true})
	resp := search(t, db, engram.Query{Query: "deploy key", Rerank: true, NoRecord: true})
	if !slices.Contains(resp.Stages, "rerank") || len(resp.Degraded) != 0 {
		t.Fatalf("stages %v, degraded %+v", resp.Stages, resp.Degraded)
	}
	if _, ok := resp.TimingsMS["rerank"]; !ok {
		t.Errorf("timings_ms has no rerank: %v", resp.TimingsMS)
	}
	checkOrdered(t, resp)
	// The server turns the fused order over: the last fused is now first.
	n := len(plain.Results)
	if len(resp.Results) != n {
		t.Fatalf("%d results after rerank, %d before", len(resp.Results), n)
	}
	for i, r := range resp.Results {
		want := plain.Results[n-1-i].ID
		rr := r.Explain.Rerank
		if r.ID != want || rr == nil || rr.PreRank != n-i || rr.Score != r.Score {
			t.Errorf("result %d: id %s rerank %+v score %v, want id %s pre_rank %d", i, r.ID, rr, r.Score, want, n-i)
		}
	}
}

func TestLLMRerankStage(t *testing.T) {
	// The judge scores document 1 highest and leaves the rest unscored.
	srv := chatServer(t, modeOK, "```json\n[{\"index\": 1, \"score\": 9}, {\"index\": 0, \"score\": 2}]\n```")
	db := stageDB(t, engram.Options{Reranker: rerank.NewLLM(chatClient(t, srv.URL))})
	plain := search(t, db, engram.Query{Query: "deploy key", NoRecord: true})
	resp := search(t, db, engram.Query{Query: "deploy key", Rerank: true, NoRecord: true})
	if !slices.Contains(resp.Stages, "rerank") || len(resp.Degraded) != 0 {
		t.Fatalf("stages %v, degraded %+v", resp.Stages, resp.Degraded)
	}
	if _, ok := resp.TimingsMS["rerank"]; !ok {
		t.Errorf("timings_ms has no rerank: %v", resp.TimingsMS)
	}
	first, second := resp.Results[0], resp.Results[1]
	if first.ID != plain.Results[1].ID || first.Explain.Rerank.PreRank != 2 || first.Explain.Rerank.Score != 9 {
		t.Errorf("first: %s %+v, want %s pre_rank 2 score 9", first.ID, first.Explain.Rerank, plain.Results[1].ID)
	}
	if second.ID != plain.Results[0].ID || second.Explain.Rerank.PreRank != 1 {
		t.Errorf("second: %s %+v, want %s pre_rank 1", second.ID, second.Explain.Rerank, plain.Results[0].ID)
	}
}

func TestHyDEStage(t *testing.T) {
	// No known word: the raw query has no vector and no keyword match.
	const q = "how often should credentials change?"
	srv := chatServer(t, modeOK, "<think>they want a rotation policy</think>Rotate the deploy key every ninety days.")
	db := stageDB(t, engram.Options{LLM: chatClient(t, srv.URL)})
	plain := search(t, db, engram.Query{Query: q, NoRecord: true})
	if len(plain.Results) != 0 || !hasDegraded(plain, "vector", "no vector for this query") {
		t.Fatalf("without HyDE: %d results, degraded %+v", len(plain.Results), plain.Degraded)
	}
	resp := search(t, db, engram.Query{Query: q, HyDE: true, NoRecord: true})
	if !slices.Contains(resp.Stages, "hyde") || !slices.Contains(resp.Stages, "vector") || len(resp.Degraded) != 0 {
		t.Fatalf("stages %v, degraded %+v", resp.Stages, resp.Degraded)
	}
	if _, ok := resp.TimingsMS["hyde"]; !ok {
		t.Errorf("timings_ms has no hyde: %v", resp.TimingsMS)
	}
	// The hypothetical memory's vector is (1,0,0): a and c at cosine 1.
	if len(resp.Results) == 0 || resp.Results[0].Explain.Vector == nil || resp.Results[0].Explain.Vector.Cosine != 1 {
		t.Fatalf("results %+v", resp.Results)
	}
	if resp.Results[0].Explain.BM25 != nil {
		t.Error("BM25 must keep the raw query, which matches nothing")
	}
}

func TestMMRStage(t *testing.T) {
	db := stageDB(t, engram.Options{})
	lambda := 0.3
	plain := search(t, db, engram.Query{Query: "deploy key rotation", Mode: "vector", NoRecord: true})
	resp := search(t, db, engram.Query{Query: "deploy key rotation", Mode: "vector", MMR: true, Lambda: &lambda, NoRecord: true})
	if !slices.Contains(resp.Stages, "mmr") {
		t.Fatalf("stages %v", resp.Stages)
	}
	if _, ok := resp.TimingsMS["mmr"]; !ok {
		t.Errorf("timings_ms has no mmr: %v", resp.TimingsMS)
	}
	checkOrdered(t, resp)
	// Worked by hand: relevance is the fused score min-max normalised over the
	// candidates, 1/(60+rank) for ranks 1..5 → a 1, c .738, b .484, d .238, e 0.
	// After a, with λ = .3: c .3·.738 − .7·1 = −.479 (a duplicate of a),
	// b .3·.484 − .7·.894 = −.481, d .3·.238 − .7·0 = +.071: d is next.
	if got := ids(plain); got[0] != "a" || got[1] != "c" || got[2] != "b" || got[3] != "d" {
		t.Fatalf("plain vector ranking %v, want a c b d ...", got)
	}
	got := resp.Results
	if got[0].ID != "a" || got[1].ID != "d" || got[1].Explain.MMR.PreRank != 4 || got[1].Explain.MMR.Redundancy != 0 {
		t.Errorf("after MMR: %v, second %+v; want a then d from pre_rank 4", ids(resp), got[1].Explain.MMR)
	}
	for i, r := range got {
		if r.Explain.MMR == nil || r.Explain.MMR.PreRank < 1 {
			t.Fatalf("result %d has no mmr explain", i)
		}
		if r.ID == "c" && r.Explain.MMR.Redundancy != 1 {
			t.Errorf("c is a's duplicate: redundancy %v, want 1", r.Explain.MMR.Redundancy)
		}
	}
	if slices.Index(ids(resp), "c") < 2 {
		t.Errorf("the duplicate c still crowds the top: %v", ids(resp))
	}
}

func TestStagesDegrade(t *testing.T) {
	type setup func(t *testing.T) (engram.Options, engram.Query)
	rr := func(mode string) setup {
		return func(t *testing.T) (engram.Options, engram.Query) {
			return engram.Options{Reranker: httpReranker(t, rerankServer(t, mode).URL)}, engram.Query{Rerank: true}
		}
	}
	llmRR := func(mode string) setup {
		return func(t *testing.T) (engram.Options, engram.Query) {
			return engram.Options{Reranker: rerank.NewLLM(chatClient(t, chatServer(t, mode, "no JSON here").URL))}, engram.Query{Rerank: true}
		}
	}
	hyde := func(mode string) setup {
		return func(t *testing.T) (engram.Options, engram.Query) {
			return engram.Options{LLM: chatClient(t, chatServer(t, mode, "   ").URL)}, engram.Query{HyDE: true}
		}
	}
	cases := []struct {
		name, stage, want string
		setup             setup
	}{
		{"rerank slow", "rerank", "kept the fused order", rr(modeSlow)},
		{"rerank failing", "rerank", "500", rr(modeFailing)},
		{"rerank malformed", "rerank", "malformed JSON", rr(modeMalformed)},
		{"rerank absent", "rerank", "no reranker configured", func(*testing.T) (engram.Options, engram.Query) {
			return engram.Options{}, engram.Query{Rerank: true}
		}},
		{"llm rerank slow", "rerank", "kept the fused order", llmRR(modeSlow)},
		{"llm rerank failing", "rerank", "500", llmRR(modeFailing)},
		{"llm rerank no JSON", "rerank", "llm:test-llm", llmRR(modeOK)},
		{"hyde slow", "hyde", "kept the raw query", hyde(modeSlow)},
		{"hyde failing", "hyde", "500", hyde(modeFailing)},
		{"hyde malformed", "hyde", "not a chat completion", hyde(modeMalformed)},
		{"hyde empty answer", "hyde", "empty completion", hyde(modeOK)},
		{"hyde absent", "hyde", "no LLM configured", func(*testing.T) (engram.Options, engram.Query) {
			return engram.Options{}, engram.Query{HyDE: true}
		}},
		{"mmr without vectors", "mmr", "no candidate has a stored vector", func(*testing.T) (engram.Options, engram.Query) {
			return engram.Options{NoEmbedder: true}, engram.Query{MMR: true}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			opts, q := c.setup(t)
			opts.StageTimeout = stageTimeout
			db := stageDB(t, opts)
			q.Query, q.NoRecord = "deploy key", true
			want := search(t, db, engram.Query{Query: q.Query, NoRecord: true})
			resp, err := db.Search(context.Background(), q)
			if err != nil {
				t.Fatalf("search failed: %v", err)
			}
			{
				if !hasDegraded(resp, c.stage, c.want) {
					t.Fatalf("degraded %+v, want stage %s with %q", resp.Degraded, c.stage, c.want)
				}
				if slices.Contains(resp.Stages, c.stage) {
					t.Errorf("stages %v must not list the failed %s", resp.Stages, c.stage)
				}
			}
			// A no-op: the same ranking as without the stage.
			if !slices.Equal(ids(resp), ids(want)) {
				t.Errorf("ranking %v, want the plain %v", ids(resp), ids(want))
			}
		})
	}
}

// TestFusionGolden runs each fusion and MMR over the fixed store and compares
// the explained ranking with testdata/stages/*.golden (go test -run
// TestFusionGolden -update rewrites them), after checking every fused score
// against the fusion's formula worked from the explained legs.
func TestFusionGolden(t *testing.T) {
	half := 0.5
	cases := []struct {
		name string
		q    engram.Query
	}{
		{"rrf", engram.Query{Fusion: "rrf"}},
		{"rrf-weighted", engram.Query{Fusion: "rrf", VectorWeight: &half}},
		{"rrf-k10", engram.Query{Fusion: "rrf", RRFK: 10}},
		{"rsf", engram.Query{Fusion: "rsf"}},
		{"dbsf", engram.Query{Fusion: "dbsf"}},
		// Worked by hand (λ .5): fused b .032522 c .032266 a .032002 d .031250
		// e .015385 → relevance b 1 c .985 a .970 d .926 e 0. b first (.5);
		// then d .463−.5·.447 = .239 beats c .493−.5·.894 = .045; then c; then
		// e 0 beats a, now a duplicate of c (.485−.5·1 = −.015).
		{"mmr", engram.Query{Fusion: "rrf", MMR: true, Lambda: &half}},
	}
	db := stageDB(t, engram.Options{})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q := c.q
			q.Query, q.NoRecord = "deploy key rotation vault", true
			resp := search(t, db, q)
			if resp.Fusion == nil || resp.Fusion.Method != q.Fusion {
				t.Fatalf("fusion %+v, want %s", resp.Fusion, q.Fusion)
			}
			if c.name != "mmr" {
				checkFusion(t, resp)
			}
			checkOrdered(t, resp)
			checkGolden(t, filepath.Join("testdata", "stages", c.name+".golden"), explained(resp))
		})
	}
}

// checkOrdered checks the contract that score is what results are ordered by.
func checkOrdered(t *testing.T, resp *engram.Response) {
	t.Helper()
	for i := 1; i < len(resp.Results); i++ {
		if resp.Results[i].Score > resp.Results[i-1].Score {
			t.Errorf("result %d scores %v above result %d's %v", i+1, resp.Results[i].Score, i, resp.Results[i-1].Score)
		}
	}
}

// checkFusion recomputes each result's fused score from its explained legs.
func checkFusion(t *testing.T, resp *engram.Response) {
	t.Helper()
	wb, wv := resp.Fusion.Weights["bm25"], resp.Fusion.Weights["vector"]
	// Per-leg ranges and moments over the results (the store is smaller than
	// the pool, so every candidate is a result).
	var bs, vs []float64
	for _, r := range resp.Results {
		if r.Explain.BM25 != nil {
			bs = append(bs, r.Explain.BM25.Score)
		}
		if r.Explain.Vector != nil {
			vs = append(vs, r.Explain.Vector.Cosine)
		}
	}
	for _, r := range resp.Results {
		want := 0.0
		if b := r.Explain.BM25; b != nil {
			want += wb * norm(resp.Fusion, b.Rank, b.Score, bs)
		}
		if v := r.Explain.Vector; v != nil {
			want += wv * norm(resp.Fusion, v.Rank, v.Cosine, vs)
		}
		if math.Abs(r.Explain.RRF-want) > 1e-5 {
			t.Errorf("%s: fused %v, worked by hand %v", r.ID, r.Explain.RRF, want)
		}
	}
}

// norm is one leg's contribution before its weight: 1/(k+rank) for RRF,
// min-max for RSF, (s−(μ−3σ))/6σ clipped for DBSF.
func norm(f *engram.FusionInfo, rank int, s float64, all []float64) float64 {
	method := f.Method
	lo, hi, mean := slices.Min(all), slices.Max(all), 0.0
	for _, x := range all {
		mean += x
	}
	mean /= float64(len(all))
	sd := 0.0
	for _, x := range all {
		sd += (x - mean) * (x - mean)
	}
	sd = math.Sqrt(sd / float64(len(all)))
	switch method {
	case "rsf":
		if hi == lo {
			return 1
		}
		return (s - lo) / (hi - lo)
	case "dbsf":
		if sd == 0 {
			return 0.5
		}
		return math.Max(0, math.Min(1, (s-(mean-3*sd))/(6*sd)))
	}
	return 1 / (f.K + float64(rank))
}

// explained is a response's ranking as stable text, one result a line.
func explained(resp *engram.Response) string {
	var b strings.Builder
	fmt.Fprintf(&b, "query %q strategy %s fusion %s weights bm25=%g vector=%g\n", resp.Query, resp.Strategy,
		resp.Fusion.Method, resp.Fusion.Weights["bm25"], resp.Fusion.Weights["vector"])
	for i, r := range resp.Results {
		ex := r.Explain
		fmt.Fprintf(&b, "%d %s score=%.6f fused=%.6f relevance=%.4f", i+1, r.ID, r.Score, ex.RRF, ex.Relevance)
		if ex.BM25 != nil {
			fmt.Fprintf(&b, " bm25=#%d:%.4f", ex.BM25.Rank, ex.BM25.Score)
		}
		if ex.Vector != nil {
			fmt.Fprintf(&b, " vector=#%d:%.4f", ex.Vector.Rank, ex.Vector.Cosine)
		}
		if ex.MMR != nil {
			fmt.Fprintf(&b, " mmr=pre#%d:redundancy=%.4f:score=%.4f", ex.MMR.PreRank, ex.MMR.Redundancy, ex.MMR.Score)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// checkGolden compares got with the file at path (go test -update rewrites it).
func checkGolden(t *testing.T, path, got string) {
	t.Helper()
	golden.Check(t, path, []byte(got))
}

// TestRelevanceBar: the keyword part of explain.relevance counts the query's
// words the store lacks, so a question about an absent topic that shares one
// common word with the store clears no bar, while a full match does.
func TestRelevanceBar(t *testing.T) {
	db := stageDB(t, engram.Options{})
	full := search(t, db, engram.Query{Query: "rotate deploy key", Mode: "bm25", NoRecord: true})
	partial := search(t, db, engram.Query{Query: "deploy zebra giraffe elephant pangolin", Mode: "bm25", NoRecord: true})
	if len(full.Results) == 0 || len(partial.Results) == 0 {
		t.Fatalf("no keyword results: %d, %d", len(full.Results), len(partial.Results))
	}
	top := func(r *engram.Response) float64 { return r.Results[0].Explain.Relevance }
	// Worked by hand: 5 memories, read as bm25.RelevanceMinDocs = 256 for the
	// signal; "deploy" in 3 (idf ln(1+253.5/3.5) = 4.296), four absent words
	// at idf ln(1+256.5/.5) = 6.242 each: the bound is 2.2·(4.296+4·6.242) =
	// 64.38, and no memory scores 4.296·2.2 = 9.45 on "deploy" alone, so
	// relevance stays under 9.45/64.38 = .147.
	if got := top(partial); got <= 0 || got >= 0.147 {
		t.Errorf("one common word of five: relevance %v, want in (0, .147)", got)
	}
	if top(full) < 0.3 {
		t.Errorf("full match: relevance %v, want ≥ .3", top(full))
	}
	for _, r := range append(full.Results, partial.Results...) {
		if rel := r.Explain.Relevance; rel < 0 || rel > 1 {
			t.Errorf("%s: relevance %v outside [0,1]", r.ID, rel)
		}
	}
	barred := search(t, db, engram.Query{Query: partial.Query, Mode: "bm25", MinRelevance: engram.DefaultInjectRelevance, NoRecord: true})
	if len(barred.Results) != 0 {
		t.Errorf("the default inject bar let %d results of an absent topic through", len(barred.Results))
	}
	kept := search(t, db, engram.Query{Query: full.Query, Mode: "bm25", MinRelevance: engram.DefaultInjectRelevance, NoRecord: true})
	if len(kept.Results) == 0 || kept.Results[0].ID != full.Results[0].ID {
		t.Errorf("the default inject bar dropped the full match: %v", ids(kept))
	}
	// Hybrid: the mean of both parts, so a memory the vector leg alone finds
	// (no keyword) is at most half relevant.
	hy := search(t, db, engram.Query{Query: "rotation of credentials", NoRecord: true})
	for _, r := range hy.Results {
		if r.Explain.BM25 == nil && r.Explain.Relevance > 0.5 {
			t.Errorf("%s: vector-only relevance %v above .5", r.ID, r.Explain.Relevance)
		}
	}
}
