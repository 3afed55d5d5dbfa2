package weaviate

import (
	"context"
	"testing"

	"github.com/engram-memory/engram/backend"
	"github.com/engram-memory/engram/memory"
)

// TestLegDepthAndComplete: legs up to FullLegDepth deep return whole
// memories, deeper ones lean memories; Complete returns a whole memory as
// it is (making no request when all are whole) and reads the lean ones,
// nil for one deleted since.
func TestLegDepthAndComplete(t *testing.T) {
	ctx := ctxT(t)
	s := openTest(t, nil)
	b := &Backend{s: s}
	put(t, s, mem("a", "the kestrel hovers over the field", nil), mem("b", "a kestrel nests in the tower", nil), mem("c", "kestrel sightings in spring", nil))
	for _, tc := range []struct {
		k     int
		whole bool
	}{{10, true}, {FullLegDepth, true}, {FullLegDepth + 1, false}} {
		res, err := b.Legs(ctx, backend.LegQuery{Text: "kestrel", K: tc.k})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.BM25) != 3 {
			t.Fatalf("k %d: %d hits", tc.k, len(res.BM25))
		}
		for _, h := range res.BM25 {
			if got := h.Memory.Text != ""; got != tc.whole {
				t.Errorf("k %d: memory %s read whole %v, want %v", tc.k, h.Memory.ID, got, tc.whole)
			}
		}
	}
	whole, err := b.Legs(ctx, backend.LegQuery{Text: "kestrel", K: 10})
	if err != nil {
		t.Fatal(err)
	}
	lean, err := b.Legs(ctx, backend.LegQuery{Text: "kestrel", K: FullLegDepth + 1})
	if err != nil {
		t.Fatal(err)
	}
	// Whole memories only: no request (a cancelled context would fail one).
	done, cancel := context.WithCancel(ctx)
	cancel()
	all := []*memory.Memory{whole.BM25[0].Memory, whole.BM25[1].Memory}
	got, err := b.Complete(done, all)
	if err != nil || len(got) != 2 || got[0] != all[0] || got[1] != all[1] {
		t.Fatalf("Complete of whole memories: %v, %v", got, err)
	}
	// A mix, one of them deleted meanwhile.
	var gone *memory.Memory
	for _, h := range lean.BM25 {
		if h.Memory.ID == "c" {
			gone = h.Memory
		}
	}
	if _, err := s.Delete(ctx, nil, []string{"c"}); err != nil {
		t.Fatal(err)
	}
	mix := []*memory.Memory{all[0], lean.BM25[0].Memory, gone}
	if mix[1].ID == "c" {
		mix[1] = lean.BM25[1].Memory
	}
	got, err = b.Complete(ctx, mix)
	if err != nil || len(got) != 3 {
		t.Fatalf("Complete: %v, %v", got, err)
	}
	if got[0] != mix[0] {
		t.Error("a whole memory was read again")
	}
	if got[1] == nil || got[1].ID != mix[1].ID || got[1].Text == "" {
		t.Errorf("lean memory %s completed as %+v", mix[1].ID, got[1])
	}
	if got[2] != nil {
		t.Errorf("deleted memory completed as %+v", got[2])
	}
}
