package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/engram-memory/engram/backend"
	"github.com/engram-memory/engram/backend/sqlite"
	"github.com/engram-memory/engram/memory"
)

// TestReadsCatchUp: each read of the index applies what another handle on
// the file wrote since (its change log), without anyone calling Sync: a
// listing, the legs, the models, the neighbours and the description all see
// it, and a setting is read as the file holds it.
func TestReadsCatchUp(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "c.db")
	open := func() *sqlite.Backend {
		b, err := sqlite.Open(ctx, path, sqlite.Options{NoSnapshot: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		return b
	}
	writer, reader := open(), open()
	if err := reader.Warm(ctx); err != nil { // loaded before the writes: only a catch-up shows them
		t.Fatal(err)
	}
	scope := map[string]string{"team": "a"}
	ids := func() []string {
		t.Helper()
		var out []string
		if err := reader.List(ctx, backend.ListQuery{Filter: memory.Filter{Scope: scope}}, func(m *memory.Memory) error {
			out = append(out, m.ID)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	var mems []*memory.Memory
	for i := range 3 {
		m := lazyMemory(fmt.Sprintf("c%d", i), fmt.Sprintf("zebra crossing %d", i))
		m.Episode, m.Seq = "ep", int64(i+1)
		m.ContentHash = m.ComputeHash()
		mems = append(mems, m)
	}
	if err := writer.Put(ctx, nil, mems); err != nil {
		t.Fatal(err)
	}
	if got := ids(); !slices.Equal(got, []string{"c0", "c1", "c2"}) {
		t.Fatalf("List after another handle's put: %v", got)
	}
	if _, err := writer.Delete(ctx, scope, []string{"c2"}); err != nil {
		t.Fatal(err)
	}
	res, err := reader.Legs(ctx, backend.LegQuery{Filter: memory.Filter{Scope: scope}, K: 10, Text: "zebra"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.BM25) != 2 {
		t.Fatalf("Legs after another handle's delete: %d hits, want 2", len(res.BM25))
	}
	models, err := reader.Models(ctx)
	if err != nil || models["m"].Count != 2 {
		t.Fatalf("Models: %v, %v; want 2 vectors of m", models, err)
	}
	before, _, err := reader.Neighbours(ctx, scope, "c1", 2)
	if err != nil || len(before) != 1 || before[0].ID != "c0" {
		t.Fatalf("Neighbours of c1: %v, %v", before, err)
	}
	if d, err := reader.Describe(ctx); err != nil || d.Memories != 2 {
		t.Fatalf("Describe: %+v, %v; want 2 memories", d, err)
	}
	if err := writer.SetSetting(ctx, "vector_weight/m", "0.25"); err != nil {
		t.Fatal(err)
	}
	if v, ok, err := reader.Setting(ctx, "vector_weight/m"); err != nil || !ok || v != "0.25" {
		t.Fatalf("Setting after another handle's: %q, %v, %v", v, ok, err)
	}
}

// BenchmarkReadOverhead is what a search pays on a store nobody else wrote
// to: the catch-up that finds no change (with the model count: Models) and
// reading the calibrated weight from the file (Setting).
func BenchmarkReadOverhead(b *testing.B) {
	ctx := context.Background()
	be, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "o.db"), sqlite.Options{NoSnapshot: true})
	if err != nil {
		b.Fatal(err)
	}
	defer be.Close()
	var mems []*memory.Memory
	for i := range 1000 {
		mems = append(mems, lazyMemory(fmt.Sprintf("o%04d", i), fmt.Sprintf("note number %d", i)))
	}
	if err := be.Put(ctx, nil, mems); err != nil {
		b.Fatal(err)
	}
	if err := be.SetSetting(ctx, "vector_weight/m", "0.5"); err != nil {
		b.Fatal(err)
	}
	if err := be.Warm(ctx); err != nil {
		b.Fatal(err)
	}
	b.Run("Models", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := be.Models(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Setting", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := be.Setting(ctx, "vector_weight/m"); err != nil {
				b.Fatal(err)
			}
		}
	})
}
