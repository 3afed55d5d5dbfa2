package weaviate_test

import (
	"context"
	"testing"

	"github.com/engram-memory/engram/backend"
	"github.com/engram-memory/engram/backend/backendtest"
	"github.com/engram-memory/engram/backend/weaviate"
	"github.com/engram-memory/engram/internal/weaviatetest"
)

// TestBackend runs the shared backend suite on a fresh class of a real
// server, with the scope key "team" as Weaviate's tenant key (the key API
// keys are bound to, so that tenants keep their own BM25 statistics).
func TestBackend(t *testing.T) {
	base := weaviatetest.URL(t)
	backendtest.Run(t, func(tb testing.TB) backend.Backend {
		b, err := weaviate.OpenBackend(context.Background(), weaviate.Config{Endpoint: base, GRPCPort: weaviatetest.GRPCPort(tb, base), Class: weaviatetest.Class(tb, base), TenantKey: "team"})
		if err != nil {
			tb.Fatal(err)
		}
		return b
	})
}

// TestBackendNoTenants runs the suite on a class without multi-tenancy:
// every scope key a filter, one set of statistics (LegsScopeStats says so).
func TestBackendNoTenants(t *testing.T) {
	base := weaviatetest.URL(t)
	backendtest.Run(t, func(tb testing.TB) backend.Backend {
		b, err := weaviate.OpenBackend(context.Background(), weaviate.Config{Endpoint: base, GRPCPort: weaviatetest.GRPCPort(tb, base), Class: weaviatetest.Class(tb, base)})
		if err != nil {
			tb.Fatal(err)
		}
		return b
	})
}
