package weaviate

import (
	"context"

	"github.com/engram-memory/engram/backend"
)

// init registers the backend for weaviate:// locations (ParseURL documents
// them), so that a program importing this package, even as _, opens them
// with engram.Open.
func init() {
	backend.Register("weaviate", func(ctx context.Context, location string) (backend.Backend, error) {
		b, err := OpenURL(ctx, location)
		if err != nil {
			return nil, err
		}
		return b, nil
	})
}
