package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"testing"
)

// rerankServer speaks the /rerank protocol: it scores documents in reverse
// input order, or fails with status when status is not 200.
func rerankServer(t *testing.T, status int) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/rerank" || r.Method != http.MethodPost {
			http.NotFound(w, r)
			return
		}
		var req struct {
			Query     string   `json:"query"`
			Documents []string `json:"documents"`
		}
		body, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(body, &req); err != nil || req.Query == "" {
			http.Error(w, `{"error":"bad request"}`, http.StatusBadRequest)
			return
		}
		if status != http.StatusOK {
			http.Error(w, `{"error":"overloaded"}`, status)
			return
		}
		type result struct {
			Index int     `json:"index"`
			Score float64 `json:"relevance_score"`
		}
		var out struct {
			Results []result `json:"results"`
		}
		for i := range req.Documents {
			out.Results = append(out.Results, result{Index: i, Score: float64(i) / float64(len(req.Documents))})
		}
		slices.Reverse(out.Results)
		json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestSearchStagesFromCLI: --rerank, --mmr and --fusion work from the command
// line, show in stages, timings and explain, and a failing reranker degrades
// the search instead of failing it.
func TestSearchStagesFromCLI(t *testing.T) {
	t.Setenv("ENGRAM_EMBEDDER", "")
	db := filepath.Join(t.TempDir(), "a.db")
	for _, text := range []string{"deploy checklist for the release", "release notes of the deploy", "deploy keys live in the vault"} {
		mustCLI(t, db, "", "add", text)
	}
	type response struct {
		Stages    []string `json:"stages"`
		Degraded  []struct{ Stage string }
		TimingsMS map[string]float64 `json:"timings_ms"`
		Fusion    struct{ Method string }
		Results   []struct {
			Explain struct {
				Rerank *struct {
					PreRank int `json:"pre_rank"`
				}
				MMR *struct {
					PreRank int `json:"pre_rank"`
				}
			}
		}
	}
	search := func(args ...string) response {
		t.Helper()
		var r response
		out := mustCLI(t, db, "", append([]string{"search", "deploy", "--json", "--no-record"}, args...)...)
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		return r
	}

	t.Setenv("ENGRAM_RERANK_MODEL", "test-reranker")
	t.Setenv("ENGRAM_RERANK_URL", rerankServer(t, http.StatusOK).URL)
	r := search("--rerank")
	if !slices.Contains(r.Stages, "rerank") || r.TimingsMS["rerank"] <= 0 || r.Results[0].Explain.Rerank == nil || r.Results[0].Explain.Rerank.PreRank != 3 {
		t.Fatalf("rerank: %+v", r)
	}

	t.Setenv("ENGRAM_RERANK_URL", rerankServer(t, http.StatusInternalServerError).URL)
	r = search("--rerank")
	if slices.Contains(r.Stages, "rerank") || len(r.Degraded) == 0 || r.Degraded[0].Stage != "rerank" || len(r.Results) != 3 {
		t.Fatalf("failing rerank: %+v", r)
	}

	r = search("--mmr", "--lambda", "0.5")
	if !slices.Contains(r.Stages, "mmr") || r.Results[0].Explain.MMR == nil {
		t.Fatalf("mmr: %+v", r)
	}
	for _, fusion := range []string{"rrf", "rsf", "dbsf"} {
		if r := search("--fusion", fusion); r.Fusion.Method != fusion {
			t.Fatalf("--fusion %s ran %q", fusion, r.Fusion.Method)
		}
	}
}
