package sqlite_test

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/engram-memory/engram/backend"
	"github.com/engram-memory/engram/backend/sqlite"
	"github.com/engram-memory/engram/memory"
)

func lazyMemory(id, text string) *memory.Memory {
	now := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	m := &memory.Memory{ID: id, Text: text, Type: "note", Scope: map[string]string{"team": "a"}, CreatedAt: now, UpdatedAt: now,
		Embedding: &memory.Embedding{Model: "m", Dim: 2, Vector: []float32{1, float32(len(text))}}}
	m.ContentHash = m.ComputeHash()
	return m
}

// TestIndexBuiltOnFirstNeed: writes, reads by id, counts, exports and
// descriptions go to the file alone; the first search loads the index, which
// then holds everything written before.
func TestIndexBuiltOnFirstNeed(t *testing.T) {
	ctx := context.Background()
	b, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "l.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var mems []*memory.Memory
	for i := range 30 {
		mems = append(mems, lazyMemory(fmt.Sprintf("m%02d", i), fmt.Sprintf("kafka note %d", i)))
	}
	scope := map[string]string{"team": "a"}
	steps := []struct {
		name string
		do   func() error
	}{
		{"put", func() error { return b.Put(ctx, nil, mems) }},
		{"get", func() error { _, err := b.Get(ctx, scope, []string{"m01", "m02"}); return err }},
		{"delete", func() error { _, err := b.Delete(ctx, scope, []string{"m03"}); return err }},
		{"record use", func() error { _, err := b.RecordUse(ctx, scope, []string{"m04"}, time.Now(), true); return err }},
		{"set embeddings", func() error {
			_, err := b.SetEmbeddings(ctx, nil, []backend.EmbeddingUpdate{{ID: "m05", Hash: mems[5].ContentHash,
				Embedding: &memory.Embedding{Model: "m", Dim: 2, Vector: []float32{2, 1}}}})
			return err
		}},
		{"tally", func() error { _, err := b.Tally(ctx, scope); return err }},
		{"describe", func() error { _, err := b.Describe(ctx); return err }},
		{"export", func() error {
			var buf bytes.Buffer
			return b.List(ctx, backend.ListQuery{Vectors: true}, func(m *memory.Memory) error { buf.WriteString(m.ID); return nil })
		}},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if b.IndexLoaded() {
			t.Fatalf("%s loaded the index", s.name)
		}
	}
	d, _ := b.Describe(ctx)
	if d.Memories != 29 {
		t.Fatalf("describe counts %d memories, want 29", d.Memories)
	}
	res, err := b.Legs(ctx, backend.LegQuery{Text: "kafka", K: 100})
	if err != nil {
		t.Fatal(err)
	}
	if !b.IndexLoaded() {
		t.Fatal("a search did not load the index")
	}
	if len(res.BM25) != 29 {
		t.Fatalf("the first search finds %d memories, want 29", len(res.BM25))
	}
	var uses int64
	for _, h := range res.BM25 {
		if h.Memory.ID == "m04" {
			uses = h.Memory.Uses
		}
	}
	if uses != 1 {
		t.Fatalf("m04 has %d uses in the index, want 1", uses)
	}
}

// TestFirstLoadRacesOwnWrites: a handle's first load runs while the same
// handle writes; every write it acknowledged is in its index afterwards,
// without a catch-up (a write skipped while loading is read by the load).
// Many rounds, with -race.
func TestFirstLoadRacesOwnWrites(t *testing.T) {
	ctx := context.Background()
	for round := range 25 {
		path := filepath.Join(t.TempDir(), fmt.Sprintf("r%d.db", round))
		b, err := sqlite.Open(ctx, path, sqlite.Options{NoSnapshot: true})
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make(chan error, 4)
		for w := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 20 {
					id := fmt.Sprintf("w%d-%d", w, i)
					if err := b.Put(ctx, nil, []*memory.Memory{lazyMemory(id, "vault "+id)}); err != nil {
						errs <- err
						return
					}
					if i%5 == 4 {
						if _, err := b.Delete(ctx, nil, []string{fmt.Sprintf("w%d-%d", w, i-1)}); err != nil {
							errs <- err
							return
						}
					}
				}
			}()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(time.Duration(round%5) * time.Millisecond)
			if err := b.Warm(ctx); err != nil {
				errs <- err
			}
		}()
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		got := listAll(t, b) // no Sync: what the handle's own writes left in its index
		fresh, err := sqlite.Open(ctx, path, sqlite.Options{NoSnapshot: true})
		if err != nil {
			t.Fatal(err)
		}
		want := listAll(t, fresh)
		fresh.Close()
		b.Close()
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d: the index after a racing first load differs from the file:\n got %v\nwant %v", round, got, want)
		}
	}
}
