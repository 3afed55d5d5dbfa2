package engram_test

import (
	"cmp"
	"context"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/backend"
	"github.com/engram-memory/engram/backend/backendtest"
	"github.com/engram-memory/engram/backend/sqlite"
	"github.com/engram-memory/engram/internal/fusion"
	"github.com/engram-memory/engram/memory"
)

// nativeBackend is the SQLite backend with a native hybrid: its own two legs,
// ranked as the engine ranks them and fused by RRF (k=60) inside the backend,
// as a server such as Weaviate fuses in one call. It stands in for such a
// server to test the engine's side of strategy "native".
type nativeBackend struct {
	*sqlite.Backend
	calls atomic.Int32
}

func (n *nativeBackend) Hybrid(ctx context.Context, q backend.HybridQuery) (*backend.HybridResult, error) {
	n.calls.Add(1)
	res, err := n.Legs(ctx, q.LegQuery)
	if err != nil {
		return nil, err
	}
	byID := map[string]backend.Hit{}
	leg := func(name string, w float64, hits []backend.Hit) fusion.Leg {
		hits = slices.Clone(hits)
		slices.SortStableFunc(hits, func(a, b backend.Hit) int {
			if c := cmp.Compare(b.Score, a.Score); c != 0 {
				return c
			}
			return strings.Compare(a.Memory.ID, b.Memory.ID)
		})
		l := fusion.Leg{Name: name, Weight: w}
		for _, h := range hits {
			l.Hits = append(l.Hits, fusion.Hit{ID: h.Memory.ID, Score: h.Score})
			if _, ok := byID[h.Memory.ID]; !ok {
				byID[h.Memory.ID] = h
			}
		}
		return l
	}
	legs := []fusion.Leg{leg("bm25", q.BM25Weight, res.BM25), leg("vector", q.VectorWeight, res.Vector)}
	out := &backend.HybridResult{Bound: res.Bound, Took: res.BM25Took + res.VectorTook}
	for _, f := range fusion.RRF(legs, fusion.DefaultK) {
		h := byID[f.ID]
		h.Score = f.Score
		out.Hits = append(out.Hits, backend.HybridHit{Hit: h,
			BM25Leg:   backend.LegPlace{Rank: f.Legs[0].Rank, Score: f.Legs[0].Score},
			VectorLeg: backend.LegPlace{Rank: f.Legs[1].Rank, Score: f.Legs[1].Score}})
	}
	return out, nil
}

func openNative(t testing.TB) *nativeBackend {
	t.Helper()
	b, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "n.db"), sqlite.Options{NoSnapshot: true})
	if err != nil {
		t.Fatal(err)
	}
	return &nativeBackend{Backend: b}
}

// TestNativeBackendSuite: the stand-in passes the shared suite, native
// hybrid included.
func TestNativeBackendSuite(t *testing.T) {
	backendtest.Run(t, func(tb testing.TB) backend.Backend { return openNative(tb) })
}

// TestNativeHybrid: a query with fusion "native" on a backend that fuses runs
// as its one call (strategy native), and everything after fusion works on top
// unchanged: with the backend fusing as the engine does, the results, scores,
// explanations, boosts and relevance are the engine's own RRF's, and MMR
// diversifies them.
func TestNativeHybrid(t *testing.T) {
	ctx := context.Background()
	nb := openNative(t)
	w := 1.0
	db, err := engram.OpenBackend(ctx, nb, engram.Options{Embedder: topicEmbedder, VectorWeight: &w})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	add(t, db, stageMemories...)
	if _, err := db.Update(ctx, "b", engram.Patch{Favorite: ptr(true)}); err != nil {
		t.Fatal(err)
	}
	native := search(t, db, engram.Query{Query: "deploy key vault", Fusion: "native", NoRecord: true})
	own := search(t, db, engram.Query{Query: "deploy key vault", Fusion: "rrf", NoRecord: true})
	if native.Strategy != memory.StrategyNative || nb.calls.Load() != 1 || !slices.Contains(native.Stages, "native") {
		t.Fatalf("strategy %s, stages %v, %d hybrid calls", native.Strategy, native.Stages, nb.calls.Load())
	}
	if f := native.Fusion; f == nil || f.Method != "native" || f.Weights["vector"] != 1 || f.WeightSource != "option" {
		t.Fatalf("fusion %+v", native.Fusion)
	}
	if len(native.Results) == 0 || len(native.Results) != len(own.Results) {
		t.Fatalf("native %v, engine %v", ids(native), ids(own))
	}
	for i, r := range native.Results {
		o := own.Results[i]
		if r.ID != o.ID || r.Score != o.Score || !sameExplain(r.Explain, o.Explain) {
			t.Fatalf("result %d: native %s %v %+v, engine %s %v %+v", i+1, r.ID, r.Score, *r.Explain, o.ID, o.Score, *o.Explain)
		}
	}
	if b := native.Results[0]; b.ID != "b" || b.Explain.Boosts.Favorite != 1.15 {
		t.Fatalf("the favorite's boost did not apply on the native score: %+v", b)
	}
	mmr := search(t, db, engram.Query{Query: "deploy key", Fusion: "native", MMR: true, NoRecord: true})
	if mmr.Strategy != memory.StrategyNative || !slices.Contains(mmr.Stages, "mmr") || len(mmr.Results) == 0 || mmr.Results[0].Explain.MMR == nil {
		t.Fatalf("MMR on native: strategy %s, stages %v, degraded %v", mmr.Strategy, mmr.Stages, mmr.Degraded)
	}
	// One leg only: nothing to fuse, so no native call and no complaint.
	bm := search(t, db, engram.Query{Query: "deploy key", Mode: "bm25", Fusion: "native", NoRecord: true})
	if bm.Strategy != memory.StrategyBM25 || len(bm.Degraded) != 0 || nb.calls.Load() != 2 {
		t.Fatalf("bm25 with fusion native: strategy %s, degraded %v, %d calls", bm.Strategy, bm.Degraded, nb.calls.Load())
	}
	// A keyword gate the query asks for cannot apply to the backend's own
	// fusion: the response says so.
	gated := search(t, db, engram.Query{Query: "deploy key vault", Fusion: "native", KeywordGate: ptr(1.0), NoRecord: true})
	if gated.Strategy != memory.StrategyNative || gated.Fusion.Gated != nil || !hasDegraded(gated, "fusion", "keyword_gate 1 not applied") {
		t.Fatalf("keyword gate with fusion native: strategy %s, fusion %+v, degraded %v", gated.Strategy, gated.Fusion, gated.Degraded)
	}
}

// TestNativeUnsupported: the SQLite backend has no native hybrid, so a query
// that asks for one is fused by the engine, and says so.
func TestNativeUnsupported(t *testing.T) {
	db := stageDB(t, engram.Options{})
	resp := search(t, db, engram.Query{Query: "deploy key vault", Fusion: "native", NoRecord: true})
	if resp.Strategy != memory.StrategyHybrid || !hasDegraded(resp, "fusion", "no native hybrid") || resp.Fusion.Method != "rrf" || len(resp.Results) == 0 {
		t.Fatalf("strategy %s, fusion %+v, degraded %v", resp.Strategy, resp.Fusion, resp.Degraded)
	}
}

func sameExplain(a, b *engram.Explain) bool {
	x, y := *a, *b
	return x.RRF == y.RRF && x.Relevance == y.Relevance && x.Boosts == y.Boosts &&
		(x.BM25 == nil) == (y.BM25 == nil) && (x.BM25 == nil || *x.BM25 == *y.BM25) &&
		(x.Vector == nil) == (y.Vector == nil) && (x.Vector == nil || *x.Vector == *y.Vector)
}
