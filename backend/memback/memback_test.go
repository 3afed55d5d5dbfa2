package memback_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/engram-memory/engram/backend"
	"github.com/engram-memory/engram/backend/backendtest"
	"github.com/engram-memory/engram/backend/memback"
	"github.com/engram-memory/engram/memory"
)

// TestBackend runs the shared backend suite on the reference backend.
func TestBackend(t *testing.T) {
	backendtest.Run(t, func(testing.TB) backend.Backend { return memback.New() })
}

// TestConcurrent writes, updates, counts uses and searches from several
// goroutines at once: under -race it checks the one lock guards every
// access, and at the end that no write was lost.
func TestConcurrent(t *testing.T) {
	ctx := context.Background()
	b := memback.New()
	const writers, each = 4, 25
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(2)
		go func() {
			defer wg.Done()
			scope := map[string]string{"team": fmt.Sprint(w)}
			for i := range each {
				m := &memory.Memory{ID: fmt.Sprintf("m%02d", i), Text: fmt.Sprintf("note %d of writer %d about deploys", i, w), Type: "note",
					Scope: scope, CreatedAt: time.Unix(1700000000, 0).UTC(), UpdatedAt: time.Unix(1700000000, 0).UTC()}
				m.OccurredAt = m.CreatedAt
				m.ContentHash = m.ComputeHash()
				m.Embedding = &memory.Embedding{Model: "m", Dim: 2, Vector: []float32{1, float32(i)}}
				if err := b.Put(ctx, scope, []*memory.Memory{m}); err != nil {
					t.Error(err)
					return
				}
				if _, err := b.RecordUse(ctx, scope, []string{m.ID}, time.Unix(1700000100, 0), true); err != nil {
					t.Error(err)
					return
				}
				if _, err := b.Update(ctx, scope, m.ID, func(m *memory.Memory) (*memory.Memory, error) { m.Favorite = true; return m, nil }); err != nil {
					t.Error(err)
					return
				}
			}
		}()
		go func() {
			defer wg.Done()
			for range each {
				res, err := b.Legs(ctx, backend.LegQuery{K: 5, Text: "deploys", Vector: []float32{1, 0}, Model: "m", WithVectors: true})
				if err != nil {
					t.Error(err)
					return
				}
				for _, h := range append(res.BM25, res.Vector...) {
					_ = h.Memory.Text + h.Memory.Scope["team"] // read what the backend handed out
				}
				if err := b.List(ctx, backend.ListQuery{}, func(*memory.Memory) error { return nil }); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	tally, err := b.Tally(ctx, nil)
	if err != nil || tally.Memories != writers*each || tally.Favorites != writers*each {
		t.Fatalf("after the writers: %+v, %v; want %d memories, all favorites", tally, err, writers*each)
	}
	got, err := b.Get(ctx, map[string]string{"team": "0"}, []string{"m00"})
	if err != nil || got["m00"].Uses != 1 {
		t.Fatalf("m00 of writer 0: %+v, %v; want one use", got["m00"], err)
	}
}
