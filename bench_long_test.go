package engram_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/memory"
)

// longPrompt is a deterministic prompt of n bytes: pseudo-random words (a
// pasted blob: many distinct terms, most absent from any store) with a
// sentence about a cluster upgrade repeated through it.
func longPrompt(n int) string {
	r := rand.New(rand.NewPCG(25, 2))
	var b strings.Builder
	b.Grow(n + 64)
	for i := 0; b.Len() < n; i++ {
		if i%50 == 0 {
			b.WriteString("the kubernetes cluster upgrade failed on the staging nodes. ")
			continue
		}
		w := make([]byte, 3+r.IntN(8))
		for j := range w {
			w[j] = byte('a' + r.IntN(26))
		}
		b.Write(w)
		b.WriteByte(' ')
	}
	return b.String()[:n]
}

// longQueryDB is a real store of a few memories, one about the upgrade.
func longQueryDB(t testing.TB, opts engram.Options) *engram.DB {
	db := openTest(t, opts)
	mems := []*engram.Memory{{Text: "The kubernetes cluster upgrade to 1.30 needs the staging nodes drained first"}}
	r := rand.New(rand.NewPCG(25, 3))
	topics := []string{"lunch", "garden", "invoices", "release", "nodes", "backup", "keyboard", "travel", "budget", "review"}
	for i := range 2000 {
		mems = append(mems, &engram.Memory{Text: fmt.Sprintf("Note %d about the %s and the %s, filed %s", i,
			topics[r.IntN(len(topics))], topics[r.IntN(len(topics))], topics[r.IntN(len(topics))])})
	}
	add(t, db, mems...)
	return db
}

// BenchmarkSearchLongQuery times one search with a pasted prompt of 1 MB and
// 5 MB on a store of 2,000 memories, keyword-only and hybrid (a vector leg
// whose embedding costs nothing, so the figure is the engine's own work):
//
//	go test -run '^$' -bench BenchmarkSearchLongQuery -benchtime 5x .
func BenchmarkSearchLongQuery(b *testing.B) {
	for _, mode := range []struct {
		name string
		opts engram.Options
		mode string
	}{
		{"bm25", engram.Options{NoEmbedder: true}, memory.ModeBM25},
		{"hybrid", engram.Options{Embedder: noiseEmbedder}, memory.ModeHybrid},
	} {
		b.Run(mode.name, func(b *testing.B) {
			db := longQueryDB(b, mode.opts)
			for _, size := range []struct {
				name string
				n    int
			}{{"1MB", 1 << 20}, {"5MB", 5 << 20}} {
				b.Run(size.name, func(b *testing.B) {
					prompt := longPrompt(size.n)
					ctx := context.Background()
					for b.Loop() {
						if _, err := db.Search(ctx, engram.Query{Query: prompt, Mode: mode.mode, NoRecord: true}); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		})
	}
}
