package weaviate_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/engram-memory/engram/backend/weaviate"
	"github.com/engram-memory/engram/internal/weaviatetest"
	"github.com/engram-memory/engram/memory"
)

// TestReadModifyWritesInOneProcess: many goroutines recording uses of and
// updating the same memories at once lose nothing (the backend's lock
// serialises its read-modify-writes), and readers see either state, never a
// mix. Run with -race.
func TestReadModifyWritesInOneProcess(t *testing.T) {
	base := weaviatetest.URL(t)
	ctx := context.Background()
	b, err := weaviate.OpenBackend(ctx, weaviate.Config{Endpoint: base, GRPCPort: weaviatetest.GRPCPort(t, base), Class: weaviatetest.Class(t, base), TenantKey: "team"})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	scope := map[string]string{"team": "a"}
	var mems []*memory.Memory
	for _, id := range []string{"m1", "m2"} {
		m := &memory.Memory{ID: id, Text: "start", Type: "note", Scope: scope, CreatedAt: at, UpdatedAt: at}
		m.ContentHash = m.ComputeHash()
		mems = append(mems, m)
	}
	if err := b.Put(ctx, nil, mems); err != nil {
		t.Fatal(err)
	}
	const workers, rounds = 6, 8
	var wg sync.WaitGroup
	errs := make(chan error, workers*rounds*3)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				if _, err := b.RecordUse(ctx, scope, []string{"m1"}, at.Add(time.Duration(r)*time.Second), true); err != nil {
					errs <- err
				}
				tag := fmt.Sprintf("w%dr%d", w, r)
				_, err := b.Update(ctx, scope, "m2", func(m *memory.Memory) (*memory.Memory, error) {
					m.Tags = append(m.Tags, tag)
					return m, nil
				})
				if err != nil {
					errs <- err
				}
				got, err := b.Get(ctx, scope, []string{"m2"})
				if err != nil || got["m2"] == nil {
					errs <- fmt.Errorf("get m2: %v", err)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	got, err := b.Get(ctx, nil, []string{"m1", "m2"})
	if err != nil {
		t.Fatal(err)
	}
	if got["m1"].Uses != workers*rounds {
		t.Fatalf("m1 has %d uses, want %d (a use was lost)", got["m1"].Uses, workers*rounds)
	}
	if n := len(got["m2"].Tags); n != workers*rounds {
		t.Fatalf("m2 has %d tags, want %d (an update was lost): %s", n, workers*rounds, strings.Join(got["m2"].Tags, ","))
	}
}
