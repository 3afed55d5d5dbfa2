package engram_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/engram-memory/engram/memory"
)

// BenchmarkSearchScoped is BenchmarkSearch inside one tenant's scope (one of
// the synthetic corpus's 50 users, about 2% of the store), where BM25 scores
// against the scope's own statistics (document count, lengths, document
// frequencies) rather than the store's.
func BenchmarkSearchScoped(b *testing.B) {
	for _, size := range benchSizes {
		b.Run(size.name, func(b *testing.B) {
			f := benchStore(b, size.n)
			for _, mode := range []string{memory.ModeBM25, memory.ModeHybrid} {
				b.Run(mode, func(b *testing.B) {
					leg := mode
					if mode == memory.ModeHybrid {
						leg = "total"
					}
					ctx := context.Background()
					var legMS []float64
					b.ReportAllocs()
					b.ResetTimer()
					for i := 0; b.Loop(); i++ {
						q := memory.Query{Query: f.queries[i%len(f.queries)], Mode: mode, Limit: 10, NoRecord: true}
						q.Scope = map[string]string{"user": fmt.Sprintf("u%02d", i%50)}
						resp, err := f.db.Search(ctx, q)
						if err != nil {
							b.Fatal(err)
						}
						legMS = append(legMS, resp.TimingsMS[leg])
					}
					b.ReportMetric(median(legMS), "leg-ms")
				})
			}
		})
	}
}
