package engram

import (
	"context"
	"database/sql"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/engram-memory/engram/embed"
)

// TestEmbeddingCache: with CacheEmbeddings, memory vectors go to the store's
// persistent cache (a re-added text is not embedded again, even by another
// process), while searches neither write the cache nor re-embed a repeated query.
func TestEmbeddingCache(t *testing.T) {
	ctx := context.Background()
	var texts atomic.Int64
	e := embed.Func{ModelID: "test:counting", F: func(_ context.Context, in []string) ([][]float32, error) {
		texts.Add(int64(len(in)))
		out := make([][]float32, len(in))
		for i, s := range in {
			out[i] = []float32{float32(len(s)), 1, 2}
		}
		return out, nil
	}}
	path := filepath.Join(t.TempDir(), "c.db")
	open := func() *DB {
		db, err := Open(ctx, path, Options{Embedder: e, CacheEmbeddings: true})
		if err != nil {
			t.Fatal(err)
		}
		return db
	}
	cached := func(*DB) int { // rows in the cache table, read through a second connection
		raw, err := sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		defer raw.Close()
		var n int
		if err := raw.QueryRowContext(ctx, `SELECT count(*) FROM embed_cache`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	db := open()
	res, err := db.Add(ctx, &Memory{Text: "alpha memory"}, &Memory{Text: "beta memory"}, &Memory{Text: "gamma memory"})
	if err != nil {
		t.Fatal(err)
	}
	if texts.Load() != 3 || cached(db) != 3 {
		t.Fatalf("after add: %d texts embedded, %d cached; want 3 and 3", texts.Load(), cached(db))
	}
	for range 3 {
		if _, err := db.Search(ctx, Query{Query: "alpha", NoRecord: true}); err != nil {
			t.Fatal(err)
		}
	}
	if texts.Load() != 4 || cached(db) != 3 {
		t.Fatalf("after 3 equal searches: %d texts embedded (want 4), %d cached (want 3)", texts.Load(), cached(db))
	}
	if _, err := db.Delete(ctx, res.IDs[0]); err != nil {
		t.Fatal(err)
	}
	db.Close()

	db = open() // another process
	defer db.Close()
	if _, err := db.Add(ctx, &Memory{Text: "alpha memory"}); err != nil {
		t.Fatal(err)
	}
	if texts.Load() != 4 {
		t.Fatalf("a re-added text was embedded again: %d texts embedded, want 4", texts.Load())
	}
}
