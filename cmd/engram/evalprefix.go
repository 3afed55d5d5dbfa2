package main

import (
	"context"

	"github.com/engram-memory/engram/embed"
)

// queryPrefixed is an embedder that prefixes every text it embeds for a
// search (a context marked by asQuery) and embeds memories as they are: how
// eval --query-prefix measures a model's query instruction (bge-small's
// "Represent this sentence for searching relevant passages: ") without a
// second model id, since the memories' vectors are the same either way.
type queryPrefixed struct {
	embed.Embedder
	prefix string
}

type queryKey struct{}

// asQuery marks ctx as a search's: the vector leg's embedding of the query.
func asQuery(ctx context.Context) context.Context { return context.WithValue(ctx, queryKey{}, true) }

func (q *queryPrefixed) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if ctx.Value(queryKey{}) == nil {
		return q.Embedder.Embed(ctx, texts)
	}
	prefixed := make([]string, len(texts))
	for i, t := range texts {
		prefixed[i] = q.prefix + t
	}
	return q.Embedder.Embed(ctx, prefixed)
}

// InProcess, Scripts and Warm are the wrapped embedder's.
func (q *queryPrefixed) InProcess() bool        { return embed.IsInProcess(q.Embedder) }
func (q *queryPrefixed) Scripts() embed.Scripts { return embed.ScriptsOf(q.Embedder) }
func (q *queryPrefixed) Warm(ctx context.Context) error {
	if w, ok := q.Embedder.(embed.Warmer); ok {
		return w.Warm(ctx)
	}
	return nil
}
