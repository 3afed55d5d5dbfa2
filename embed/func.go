package embed

import (
	"context"
	"fmt"
)

// Func adapts a function to Embedder, for library users with their own model
// and for tests.
type Func struct {
	// ModelID is what Model returns; it should name the provider and model.
	ModelID string
	// F embeds texts, returning one vector per text in order.
	F func(ctx context.Context, texts []string) ([][]float32, error)
}

var _ Embedder = Func{}

// Model returns f.ModelID.
func (f Func) Model() string { return f.ModelID }

// Embed calls f.F and checks it returned one vector per text. A nil F gives
// ErrNoEmbedder.
func (f Func) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if f.F == nil {
		return nil, fmt.Errorf("embed func %q: %w", f.ModelID, ErrNoEmbedder)
	}
	out, err := f.F(ctx, texts)
	if err != nil {
		return nil, fmt.Errorf("embed func %q: %w", f.ModelID, err)
	}
	if len(out) != len(texts) {
		return nil, fmt.Errorf("embed func %q: %w: got %d vectors for %d texts", f.ModelID, ErrBadResponse, len(out), len(texts))
	}
	return out, nil
}
