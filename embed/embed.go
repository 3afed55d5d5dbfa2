// Package embed turns text into vectors. Embedder is the one interface the
// recall pipeline needs; providers (OpenAI-compatible HTTP, Ollama, the
// built-in offline model) and the content-hash cache implement it.
package embed

import (
	"context"
	"errors"
)

// Embedder maps texts to vectors.
type Embedder interface {
	// Model names the model, qualified by provider ("openai:text-embedding-3-small",
	// "glove100-sif-v1"). Vectors from different models are never compared.
	Model() string
	// Embed returns one vector per text, in order. A text the model cannot
	// embed (for example one with no known word) gets a nil vector, not an error.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// InProcess is implemented by embedders that compute in this process (the
// built-in models): they cannot be down or stop answering, only be slow on a
// big batch, so a write waits for them as long as the batch takes instead of
// storing memories without vectors after a timeout.
type InProcess interface {
	InProcess() bool
}

// Warmer is implemented by embedders with state they build on first use (a
// model made ready in memory): Warm builds it now, so that a program can do
// it while it does something else, such as opening its store.
type Warmer interface {
	Warm(ctx context.Context) error
}

// Querier is implemented by embedders whose model embeds a search query
// differently from the texts it is to find (multilingual-e5 prefixes
// "query: " and "passage: "): Embed embeds memories, EmbedQuery queries.
type Querier interface {
	EmbedQuery(ctx context.Context, texts []string) ([][]float32, error)
}

// EmbedQuery embeds texts as search queries: by e's EmbedQuery where it has
// one, by its Embed otherwise.
func EmbedQuery(ctx context.Context, e Embedder, texts []string) ([][]float32, error) {
	if q, ok := e.(Querier); ok {
		return q.EmbedQuery(ctx, texts)
	}
	return e.Embed(ctx, texts)
}

// IsInProcess reports whether e says it computes in this process.
func IsInProcess(e Embedder) bool {
	ip, ok := e.(InProcess)
	return ok && ip.InProcess()
}

// ErrNoEmbedder is returned where an embedding is asked for but none is configured.
var ErrNoEmbedder = errors.New("no embedder configured")
