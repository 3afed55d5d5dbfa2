package sqlite_test

import (
	"context"
	"fmt"
	"math/rand"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/engram-memory/engram/backend"
	"github.com/engram-memory/engram/backend/sqlite"
	"github.com/engram-memory/engram/memory"
)

// TestConcurrentHandles: two handles on one file write, delete and record
// uses from many goroutines while others search and list; afterwards each
// handle's index equals one rebuilt from the file. Run with -race.
func TestConcurrentHandles(t *testing.T) {
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
	handles := []*sqlite.Backend{open(), open()}
	words := []string{"deploy", "vault", "kafka", "coffee", "release", "schema"}
	scopes := []map[string]string{nil, {"team": "a"}, {"team": "b"}}
	const writers, rounds = 4, 40
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewSource(int64(w)))
			b := handles[w%2]
			for i := range rounds {
				id := fmt.Sprintf("m%d-%d", w, r.Intn(12))
				scope := scopes[1+r.Intn(2)]
				var err error
				switch r.Intn(4) {
				case 0, 1:
					now := time.Now().UTC()
					m := &memory.Memory{ID: id, Text: words[r.Intn(len(words))] + " note " + fmt.Sprint(i), Type: "note",
						Scope: scope, CreatedAt: now, UpdatedAt: now,
						Embedding: &memory.Embedding{Model: "m", Dim: 2, Vector: []float32{r.Float32() + 0.1, r.Float32()}}}
					m.ContentHash = m.ComputeHash()
					err = b.Put(ctx, nil, []*memory.Memory{m})
				case 2:
					_, err = b.Delete(ctx, scope, []string{id})
				default:
					_, err = b.RecordUse(ctx, scope, []string{id, fmt.Sprintf("m%d-%d", w, r.Intn(12))}, time.Now(), false)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for rd := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := handles[rd%2]
			for i := range rounds {
				if _, err := b.Sync(ctx); err != nil {
					errs <- err
					return
				}
				res, err := b.Legs(ctx, backend.LegQuery{Filter: memory.Filter{Scope: scopes[i%3]}, K: 10,
					Text: words[i%len(words)], Vector: []float32{1, 0}, Model: "m", WithVectors: true})
				if err != nil {
					errs <- err
					return
				}
				for _, h := range append(res.BM25, res.Vector...) {
					_ = h.Memory.Text + h.Memory.ID // read what the legs handed out
				}
				if err := b.List(ctx, backend.ListQuery{}, func(*memory.Memory) error { return nil }); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	fresh := open()
	want := listAll(t, fresh)
	for i, b := range handles {
		if _, err := b.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		if got := listAll(t, b); !reflect.DeepEqual(got, want) {
			t.Fatalf("handle %d after the race differs from a rebuild:\n got %v\nwant %v", i, got, want)
		}
	}
}

// listAll is every memory's index view, as comparable strings.
func listAll(t *testing.T, b *sqlite.Backend) []string {
	t.Helper()
	var out []string
	err := b.List(context.Background(), backend.ListQuery{}, func(m *memory.Memory) error {
		at := ""
		if m.DemandAt != nil {
			at = m.DemandAt.Format(time.RFC3339Nano)
		}
		out = append(out, fmt.Sprintf("%s %q %v uses=%d demand=%g at=%s emb=%v", m.ID, m.Text, m.Scope, m.Uses, m.Demand, at, m.Embedding != nil))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
