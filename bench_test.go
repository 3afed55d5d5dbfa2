package engram_test

import (
	"context"
	"fmt"
	"github.com/engram-memory/engram/backend/sqlite"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/embed"
	"github.com/engram-memory/engram/internal/synth"
	"github.com/engram-memory/engram/memory"
)

// The hot-path benchmarks (issue 2): BM25 leg, vector leg and hybrid end to end
// on synthetic stores of 10k and 100k memories with 512-d vectors, and opening a
// file of 1k to 100k memories until its first search answers. The stores are built once
// per process, on first use, so plain `go test` never pays for them:
//
//	go test -run '^$' -bench . -benchtime 200x .

// benchSizes are the store sizes, by sub-benchmark name.
var benchSizes = []struct {
	name string
	n    int
}{{"n=10k", 10_000}, {"n=100k", 100_000}}

// benchQueries is the number of distinct queries cycled through.
const benchQueries = 256

// benchFixture is one built store, open, with its queries.
type benchFixture struct {
	path    string
	db      *engram.DB
	queries []string
}

var bench struct {
	once   sync.Once
	corpus *synth.Corpus
	dir    string
	err    error

	mu       sync.Mutex
	fixtures map[int]*benchFixture
	qvecs    sync.Map // query text → precomputed vector
}

func TestMain(m *testing.M) {
	code := m.Run()
	bench.mu.Lock()
	for _, f := range bench.fixtures {
		f.db.Close()
	}
	bench.mu.Unlock()
	if bench.dir != "" {
		os.RemoveAll(bench.dir)
	}
	os.Exit(code)
}

// benchEmbedder embeds memories with the synthetic model and answers queries
// from precomputed vectors, so searches do not pay for query embedding.
func benchEmbedder(c *synth.Corpus) embed.Embedder {
	inner := c.Embedder()
	return embed.Func{ModelID: inner.ModelID, F: func(ctx context.Context, texts []string) ([][]float32, error) {
		if len(texts) == 1 {
			if v, ok := bench.qvecs.Load(texts[0]); ok {
				return [][]float32{v.([]float32)}, nil
			}
		}
		return inner.F(ctx, texts)
	}}
}

// benchStore returns the open store of n memories, building it on first use.
func benchStore(b *testing.B, n int) *benchFixture {
	b.Helper()
	bench.once.Do(func() {
		bench.corpus = synth.New(synth.Config{})
		bench.dir, bench.err = os.MkdirTemp("", "engram-bench-")
		bench.fixtures = map[int]*benchFixture{}
	})
	if bench.err != nil {
		b.Fatal(bench.err)
	}
	bench.mu.Lock()
	defer bench.mu.Unlock()
	if f, ok := bench.fixtures[n]; ok {
		return f
	}
	ctx := context.Background()
	f := &benchFixture{path: filepath.Join(bench.dir, fmt.Sprintf("bench-%d.db", n))}
	db, err := engram.Open(ctx, f.path, engram.Options{Embedder: benchEmbedder(bench.corpus)})
	if err != nil {
		b.Fatal(err)
	}
	const batch = 5000
	for lo := 0; lo < n; lo += batch {
		mems := make([]*memory.Memory, 0, batch)
		for i := lo; i < min(lo+batch, n); i++ {
			mems = append(mems, bench.corpus.Memory(i))
		}
		if _, err := db.Add(ctx, mems...); err != nil {
			b.Fatalf("build %d: %v", n, err)
		}
	}
	for i := range benchQueries {
		q, _ := bench.corpus.Query(i, n)
		f.queries = append(f.queries, q)
		bench.qvecs.Store(q, bench.corpus.Vector(q))
	}
	f.db = db
	bench.fixtures[n] = f
	return f
}

// BenchmarkSearch times DB.Search (limit 10, no use recorded) per size and mode:
// bm25 is the BM25 leg alone, vector the vector leg alone (query vectors are
// precomputed), hybrid both legs, fusion and boosts. The median of the leg's own
// timing from timings_ms is reported as leg-ms.
func BenchmarkSearch(b *testing.B) {
	for _, size := range benchSizes {
		b.Run(size.name, func(b *testing.B) {
			f := benchStore(b, size.n)
			for _, mode := range []string{memory.ModeBM25, memory.ModeVector, memory.ModeHybrid} {
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
						resp, err := f.db.Search(ctx, memory.Query{Query: f.queries[i%len(f.queries)], Mode: mode, Limit: 10, NoRecord: true})
						if err != nil {
							b.Fatal(err)
						}
						if resp.Strategy != mode {
							b.Fatalf("strategy %s, want %s (degraded %v)", resp.Strategy, mode, resp.Degraded)
						}
						legMS = append(legMS, resp.TimingsMS[leg])
					}
					b.ReportMetric(median(legMS), "leg-ms")
				})
			}
		})
	}
}

// openSizes are the store sizes BenchmarkOpen measures: the store-size table
// of open-and-first-search times.
var openSizes = []struct {
	name string
	n    int
}{{"n=1k", 1_000}, {"n=10k", 10_000}, {"n=100k", 100_000}}

// BenchmarkOpen times what a short-lived process (a CLI call, a hook) pays on
// a store of each size: opening the file and answering its first search
// (hybrid), then closing it — from the index snapshot a previous process left
// (snapshot), and rebuilding the index from the rows (rebuild) — and opening
// it to read one memory by id, which never builds the index (get).
//
//	go test -run '^$' -bench BenchmarkOpen -benchtime 10x -count 5 .
func BenchmarkOpen(b *testing.B) {
	for _, size := range openSizes {
		b.Run(size.name, func(b *testing.B) {
			f := benchStore(b, size.n)
			ctx := context.Background()
			if _, err := f.db.Backend().(*sqlite.Backend).WriteSnapshot(ctx); err != nil { // before b.Loop's timer starts
				b.Fatal(err)
			}
			id := firstID(b, f)
			for _, c := range []struct {
				name       string
				noSnapshot bool
				get        bool
			}{{"snapshot", false, false}, {"rebuild", true, false}, {"get", false, true}} {
				b.Run(c.name, func(b *testing.B) {
					opts := engram.Options{Embedder: benchEmbedder(bench.corpus), SQLite: sqlite.Options{NoSnapshot: c.noSnapshot}}
					b.ReportAllocs()
					for i := 0; b.Loop(); i++ {
						db, err := engram.Open(ctx, f.path, opts)
						if err != nil {
							b.Fatal(err)
						}
						if c.get {
							if _, err := db.Get(ctx, id); err != nil {
								b.Fatal(err)
							}
						} else {
							resp, err := db.Search(ctx, memory.Query{Query: f.queries[i%len(f.queries)], Limit: 10, NoRecord: true})
							if err != nil {
								b.Fatalf("first search: %v", err)
							}
							if len(resp.Results) == 0 {
								b.Fatal("first search found nothing")
							}
						}
						if err := db.Close(); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		})
	}
}

// firstID is the id of some memory of the fixture.
func firstID(b *testing.B, f *benchFixture) string {
	b.Helper()
	resp, err := f.db.Search(context.Background(), memory.Query{Query: f.queries[0], Mode: memory.ModeBM25, Limit: 1, NoRecord: true})
	if err != nil || len(resp.Results) == 0 {
		b.Fatalf("no memory to get (%v)", err)
	}
	return resp.Results[0].ID
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[(len(s)-1)/2]
}
