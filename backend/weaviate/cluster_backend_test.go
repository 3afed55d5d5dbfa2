package weaviate_test

import (
	"context"
	"testing"

	"github.com/engram-memory/engram/backend"
	"github.com/engram-memory/engram/backend/backendtest"
	"github.com/engram-memory/engram/backend/weaviate"
	"github.com/engram-memory/engram/internal/weaviatetest"
)

// TestBackendCluster runs the shared backend suite on the three-node
// cluster (ENGRAM_WEAVIATE_CLUSTER): a tenant class with three replicas,
// read and written at QUORUM, each class through the next node in turn.
func TestBackendCluster(t *testing.T) {
	cl := weaviatetest.ClusterFromEnv(t)
	n := 0
	backendtest.Run(t, func(tb testing.TB) backend.Backend {
		base := cl.URLs[n%len(cl.URLs)]
		n++
		b, err := weaviate.OpenBackend(context.Background(), weaviate.Config{Endpoint: base, GRPCPort: cl.GRPCPort(base), Class: weaviatetest.Class(tb, base),
			TenantKey: "team", Replicas: 3, Consistency: "QUORUM"})
		if err != nil {
			tb.Fatal(err)
		}
		return b
	})
}
