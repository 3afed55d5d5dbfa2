package engram_test

import (
	"context"
	"math"
	"testing"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/embed"
)

// prefixModel embeds every memory as (1,0) and every query as (0.6,0.8), as a
// model with query and passage prefixes embeds them differently: the cosine
// of a result says which way its query was embedded.
type prefixModel struct{ embed.Func }

func (prefixModel) EmbedQuery(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i := range out {
		out[i] = []float32{0.6, 0.8}
	}
	return out, nil
}

// TestQueriesEmbeddedAsQueries: a search embeds its query by EmbedQuery; a
// HyDE rewrite, a hypothetical memory, by Embed, as memories are.
func TestQueriesEmbeddedAsQueries(t *testing.T) {
	m := prefixModel{embed.Func{ModelID: "prefix-test-v1", F: func(_ context.Context, texts []string) ([][]float32, error) {
		out := make([][]float32, len(texts))
		for i := range out {
			out[i] = []float32{1, 0}
		}
		return out, nil
	}}}
	srv := chatServer(t, modeOK, "Rotate the deploy key every ninety days.")
	db := openTest(t, engram.Options{Embedder: m, LLM: chatClient(t, srv.URL)})
	add(t, db, &engram.Memory{Text: "The deploy key rotates every ninety days."})
	for _, c := range []struct {
		name string
		q    engram.Query
		cos  float64
	}{
		{"query", engram.Query{Query: "deploy key", Mode: "vector", NoRecord: true}, 0.6},
		{"HyDE", engram.Query{Query: "deploy key", Mode: "vector", HyDE: true, NoRecord: true}, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp := search(t, db, c.q)
			if len(resp.Results) != 1 || resp.Results[0].Explain.Vector == nil {
				t.Fatalf("results %+v, degraded %+v", resp.Results, resp.Degraded)
			}
			if got := resp.Results[0].Explain.Vector.Cosine; math.Abs(got-c.cos) > 1e-6 {
				t.Errorf("cosine %v, want %v", got, c.cos)
			}
		})
	}
}
