package weaviate

import (
	"context"
	"testing"
	"time"

	"github.com/engram-memory/engram/memory"
)

// TestModelsCountedInBackground: a count past its TTL is still answered
// while a new one runs in the background, which then brings in another
// process's write; a write of this process is in its own next answer, and a
// background count begun before that write is not kept.
func TestModelsCountedInBackground(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, nil)
	other, err := Open(ctx, s.cfg) // another process on the same class
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	// Every count is past its TTL at once, and stays answerable for an hour.
	b := &Backend{s: s, ttl: time.Nanosecond, maxStale: time.Hour}
	t.Cleanup(func() { b.bg.Wait() })
	vec := func(id string) *memory.Memory {
		return mem(id, "text "+id, func(m *memory.Memory) {
			m.Embedding = &memory.Embedding{Model: "m", Dim: 2, Vector: []float32{1, 0.5}}
		})
	}
	count := func() int {
		t.Helper()
		models, err := b.Models(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return models["m"].Count
	}
	put(t, s, vec("a"))
	if n := count(); n != 1 { // nothing known yet: counted now
		t.Fatalf("first count: %d, want 1", n)
	}
	put(t, other, vec("b"))
	// Each call answers what is known and starts a count if none runs: the
	// other process's write arrives through one of them.
	deadline := time.Now().Add(time.Minute)
	for n := count(); n != 2; n = count() {
		if n != 1 {
			t.Fatalf("count %d, want 1 and then 2", n)
		}
		if time.Now().After(deadline) {
			t.Fatal("the background count never brought in the other process's write")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// A write of this process while a background count that read before it
	// waits to be kept: the write is in the next answer, and the count is
	// not kept.
	b.bg.Wait() // the count the loop may have left running
	counted, release := make(chan struct{}), make(chan struct{})
	b.recounted = func() { counted <- struct{}{}; <-release }
	count() // starts a background count
	<-counted
	if err := b.Put(ctx, nil, []*memory.Memory{vec("c")}); err != nil {
		t.Fatal(err)
	}
	b.recounted = nil // the counts of the next calls are kept as they come
	if n := count(); n != 3 {
		t.Fatalf("count after this process's write: %d, want 3", n)
	}
	close(release)
	b.bg.Wait()
	b.modelsMu.Lock()
	kept := b.models
	b.modelsMu.Unlock()
	if kept == nil || kept["m"].Count != 3 {
		t.Fatalf("kept after the background count from before the write: %v, want 3 memories of m", kept)
	}
}
