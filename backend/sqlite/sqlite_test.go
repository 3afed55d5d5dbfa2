package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/engram-memory/engram/backend"
	"github.com/engram-memory/engram/backend/backendtest"
	"github.com/engram-memory/engram/backend/sqlite"
)

// TestBackend runs the shared backend suite on a fresh SQLite file.
func TestBackend(t *testing.T) {
	backendtest.Run(t, func(tb testing.TB) backend.Backend {
		b, err := sqlite.Open(context.Background(), filepath.Join(tb.TempDir(), "b.db"), sqlite.Options{NoSnapshot: true})
		if err != nil {
			tb.Fatal(err)
		}
		return b
	})
}
