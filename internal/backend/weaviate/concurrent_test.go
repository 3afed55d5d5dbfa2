package weaviate

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"testing"

	"github.com/engram-memory/engram/memory"
)

// TestConcurrentUse: two Stores on one class (two processes) write, read
// and search from many goroutines at once, each introducing embedding
// models the class has never seen. Every write is read back intact, and no
// model's named vector is lost to a concurrent schema update.
func TestConcurrentUse(t *testing.T) {
	first := openTest(t, func(c *Config) { c.TenantKey = "team" })
	second, err := Open(context.Background(), first.Config())
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	ctx := ctxT(t)
	const workers, rounds, models = 6, 8, 5
	var wg sync.WaitGroup
	errs := make(chan error, workers*rounds)
	for w := range workers {
		s := []*Store{first, second}[w%2]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				model := fmt.Sprintf("model-%d", (w+r)%models)
				m := mem(fmt.Sprintf("w%d-r%d", w, r), fmt.Sprintf("worker %d round %d writes concurrently", w, r), func(m *memory.Memory) {
					m.Scope = map[string]string{"team": []string{"a", "b"}[r%2]}
					m.Embedding = &memory.Embedding{Model: model, Dim: 3, Vector: []float32{float32(w), float32(r), 1}}
				})
				if err := s.Put(ctx, []*memory.Memory{m}); err != nil {
					errs <- err
					return
				}
				got, err := s.Get(ctx, m.Scope, m.ID)
				if err != nil {
					errs <- err
					return
				}
				if !reflect.DeepEqual(got, m) {
					errs <- fmt.Errorf("read back %#v, want %#v", got, m)
					return
				}
				hits, err := s.NearVector(ctx, LegQuery{Vector: []float32{float32(w), float32(r), 1}, Model: model,
					Filter: memory.Filter{Scope: m.Scope}, K: 50})
				if err != nil {
					errs <- err
					return
				}
				found := false
				for _, h := range hits {
					found = found || h.Memory.ID == m.ID
				}
				if !found {
					errs <- fmt.Errorf("%s not found by its own vector", m.ID)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	info, err := first.getClass(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i := range models {
		name := VectorName(fmt.Sprintf("model-%d", i), 3)
		if _, ok := info.VectorConfig[name]; !ok {
			t.Errorf("named vector %s was lost", name)
		}
	}
	if n, err := first.Count(ctx, memory.Filter{}); err != nil || n != workers*rounds {
		t.Errorf("count = %d, %v; want %d", n, err, workers*rounds)
	}
}
