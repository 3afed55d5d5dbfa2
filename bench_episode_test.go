package engram_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/backend/sqlite"
	"github.com/engram-memory/engram/internal/synth"
	"github.com/engram-memory/engram/memory"
)

// BenchmarkImportTurns times adding 10k synthetic memories to a new store
// whose index is loaded (as a server's is), in batches of 5000, as plain
// memories and as the turns of 250 episodes of 40 (speaker, seq,
// occurred_at), with the default context and with one neighbour each side:
// what episodes cost the write path, context re-indexing included. rebuild
// is the first open of the store written that way (NoSnapshot), which
// indexes every context from the rows. write also reports the BM25 index's
// memory a memory (bm25-B/memory): the context's cost.
//
//	go test -run '^$' -bench ImportTurns -benchtime 3x .
func BenchmarkImportTurns(b *testing.B) {
	const n, turns = 10_000, 40
	corpus := synth.New(synth.Config{})
	mems := func(episodes bool) []*memory.Memory {
		out := make([]*memory.Memory, n)
		for i := range out {
			m := corpus.Memory(i)
			if episodes {
				m.Episode = fmt.Sprintf("chat-%d", i/turns)
				m.Seq = int64(i%turns + 1)
				m.Speaker = []string{"user", "assistant"}[i%2]
				m.OccurredAt = m.CreatedAt.Add(-24 * time.Hour)
			}
			out[i] = m
		}
		return out
	}
	for _, c := range []struct {
		name       string
		episodes   bool
		neighbours int // Options.ContextNeighbours
	}{{"plain", false, 0}, {"episodes", true, 0}, {"episodes-1", true, 1}} {
		write := func(b *testing.B, path string) (bm25Bytes int64) {
			ctx := context.Background()
			db, err := engram.Open(ctx, path, engram.Options{Embedder: corpus.Embedder(), SQLite: sqlite.Options{SnapshotMinMemories: -1, ContextNeighbours: c.neighbours}})
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			if err := db.Warm(ctx); err != nil {
				b.Fatal(err)
			}
			all := mems(c.episodes)
			for lo := 0; lo < n; lo += 5000 {
				if _, err := db.Add(ctx, all[lo:lo+5000]...); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer() // the estimate reads every memory: not part of the write
			defer b.StartTimer()
			f := db.Backend().(*sqlite.Backend).Footprint()
			return f.BM25 + f.BM25Mapped
		}
		b.Run(c.name+"/write", func(b *testing.B) {
			var bm int64
			for i := range b.N {
				bm = write(b, filepath.Join(b.TempDir(), fmt.Sprintf("w%d.db", i)))
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*n), "µs/memory")
			b.ReportMetric(float64(bm)/n, "bm25-B/memory")
		})
		b.Run(c.name+"/rebuild", func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "r.db")
			write(b, path)
			b.ResetTimer()
			for range b.N {
				db, err := engram.Open(context.Background(), path, engram.Options{Embedder: corpus.Embedder(), SQLite: sqlite.Options{NoSnapshot: true, ContextNeighbours: c.neighbours}})
				if err != nil {
					b.Fatal(err)
				}
				if err := db.Warm(context.Background()); err != nil {
					b.Fatal(err)
				}
				db.Close()
			}
		})
	}
}
