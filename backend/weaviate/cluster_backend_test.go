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
// each class through the next node in turn. The suite searches what it has
// just written, and a search reads one copy (the local one) while a write at
// QUORUM returns once two copies have committed it, so at QUORUM the suite
// sometimes read a copy the write had not reached yet (CI, the vector leg
// of testLegsWindows). It reads and writes at ALL: every copy commits before
// a write returns (docs/weaviate.md, "A cluster").
func TestBackendCluster(t *testing.T) {
	cl := weaviatetest.ClusterFromEnv(t)
	n := 0
	backendtest.Run(t, func(tb testing.TB) backend.Backend {
		base := cl.URLs[n%len(cl.URLs)]
		n++
		b, err := weaviate.OpenBackend(context.Background(), weaviate.Config{Endpoint: base, GRPCPort: cl.GRPCPort(base), Class: weaviatetest.Class(tb, base),
			TenantKey: "team", Replicas: 3, Consistency: "ALL"})
		if err != nil {
			tb.Fatal(err)
		}
		return b
	})
}
