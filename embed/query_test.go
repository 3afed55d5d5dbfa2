package embed

import (
	"context"
	"testing"
)

// querier embeds a memory as [1] and a query as [2].
type querier struct{ Func }

func (querier) EmbedQuery(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i := range out {
		out[i] = []float32{2}
	}
	return out, nil
}

// TestEmbedQuery: a query goes to EmbedQuery where the embedder has it, also
// through the cache (which it passes by), and to Embed where it has not.
func TestEmbedQuery(t *testing.T) {
	ctx := context.Background()
	one := Func{ModelID: "m", F: func(_ context.Context, texts []string) ([][]float32, error) {
		out := make([][]float32, len(texts))
		for i := range out {
			out[i] = []float32{1}
		}
		return out, nil
	}}
	q := querier{one}
	for _, c := range []struct {
		name       string
		e          Embedder
		query, mem float32
	}{
		{"plain", one, 1, 1},
		{"querier", q, 2, 1},
		{"cached plain", Cached(one, NewLRU(8)), 1, 1},
		{"cached querier", Cached(q, NewLRU(8)), 2, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			for range 2 { // the second time from the cache, where there is one
				qv, err := EmbedQuery(ctx, c.e, []string{"x"})
				if err != nil || qv[0][0] != c.query {
					t.Errorf("query: %v %v, want %v", qv, err, c.query)
				}
				mv, err := c.e.Embed(ctx, []string{"x"})
				if err != nil || mv[0][0] != c.mem {
					t.Errorf("memory: %v %v, want %v", mv, err, c.mem)
				}
			}
		})
	}
}
