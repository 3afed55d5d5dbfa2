package engram_test

import (
	"context"
	"testing"

	"github.com/engram-memory/engram/memory"
)

// BenchmarkSearchRecord times a hybrid search (limit 10) that records a use of
// every delivered result, as Search does by default: the search, the write
// that counts the uses, and bringing the index up to date with that write.
// Compare with BenchmarkSearch/…/hybrid, which records nothing:
//
//	go test -run '^$' -bench 'SearchRecord|ScopedTouch' -count 6 .
func BenchmarkSearchRecord(b *testing.B) {
	for _, size := range benchSizes[:1] {
		b.Run(size.name, func(b *testing.B) {
			f := benchStore(b, size.n)
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				resp, err := f.db.Search(ctx, memory.Query{Query: f.queries[i%len(f.queries)], Mode: memory.ModeHybrid, Limit: 10})
				if err != nil {
					b.Fatal(err)
				}
				if len(resp.Degraded) > 0 {
					b.Fatalf("degraded: %v", resp.Degraded)
				}
			}
		})
	}
}

// BenchmarkScopedTouch times a tenant's Touch of 10 of its memories.
func BenchmarkScopedTouch(b *testing.B) {
	f := benchStore(b, benchSizes[0].n)
	ctx := context.Background()
	scope := map[string]string{"user": "u07"}
	view, err := f.db.WithScope(scope)
	if err != nil {
		b.Fatal(err)
	}
	resp, err := view.Search(ctx, memory.Query{Query: f.queries[0], Mode: memory.ModeHybrid, Limit: 10, NoRecord: true})
	if err != nil {
		b.Fatal(err)
	}
	ids := make([]string, len(resp.Results))
	for i, r := range resp.Results {
		ids[i] = r.ID
	}
	if len(ids) != 10 {
		b.Fatalf("%d memories in the scope matched, want 10", len(ids))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := view.Touch(ctx, ids...); err != nil {
			b.Fatal(err)
		}
	}
}
