package recall

import (
	"encoding/json"
	"testing"

	"github.com/engram-memory/engram/internal/golden"
	"github.com/engram-memory/engram/memory"
)

// TestExplainGolden: whole responses (strategy, fusion, stages, degraded,
// windows, bars and every result's explanation) for fixed queries over the
// fixture, timings left out, as checked-in JSON: any change to ranking,
// scores or explanations shows up as a diff (go test -update rewrites it).
func TestExplainGolden(t *testing.T) {
	queries := []struct {
		name string
		q    memory.Query
	}{
		{"hybrid rrf", memory.Query{Query: "when do deploys go out after the canary", Limit: 4}},
		{"bm25", memory.Query{Query: "staging database reset", Mode: memory.ModeBM25, Limit: 3}},
		{"vector", memory.Query{Query: "wifi password", Mode: memory.ModeVector, Limit: 3}},
		{"rsf", memory.Query{Query: "ana platform team deploys", Fusion: FusionRSF, Limit: 3}},
		{"dbsf", memory.Query{Query: "ana platform team deploys", Fusion: FusionDBSF, Limit: 3}},
		{"a date", memory.Query{Query: "what changed about deploys on 9 February 2023", Limit: 3}},
		{"every version", memory.Query{Query: "where does the user live", Mode: memory.ModeBM25, IncludeSuperseded: true}},
		{"a bar", memory.Query{Query: "coffee floor", MinRelevance: 0.3}},
		{"mmr", memory.Query{Query: "wifi password fridge deploys", MMR: true, Limit: 3}},
	}
	s := searcher(t)
	s.RelevanceBar, s.KeywordBar = 0.2, 0.3
	type entry struct {
		Name     string           `json:"name"`
		Response *memory.Response `json:"response"`
	}
	var out []entry
	for _, c := range queries {
		resp := searchOK(t, s, c.q)
		resp.TimingsMS = nil // the only part that varies from run to run
		out = append(out, entry{c.name, resp})
	}
	got, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/explain.golden.json", append(got, '\n'))
}
