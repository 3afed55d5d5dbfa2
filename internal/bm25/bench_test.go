package bm25

import (
	"fmt"
	"math/rand"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/docset"
)

// Synthetic benchmark corpus: ~30 tokens a document over name (3),
// description (7) and text (20), words drawn from a Zipf-like distribution
// (s = 1.1) over a 50k-term vocabulary; queries of 2–5 terms drawn the same
// way, so they often include very common terms (a pessimistic case).
const (
	benchVocab   = 50_000
	benchZipfS   = 1.1
	benchQueries = 1024
)

type benchCorpus struct {
	docs    [][][]string
	queries [][]string
	ix      *Index
}

var (
	benchMu      sync.Mutex
	benchCorpora = map[int]*benchCorpus{}
)

func zipfWord(z *rand.Zipf) string { return "t" + strconv.FormatUint(z.Uint64(), 36) }

// genBenchDocs makes n synthetic documents.
func genBenchDocs(r *rand.Rand, n int) [][][]string {
	z := rand.NewZipf(r, benchZipfS, 1, benchVocab-1)
	docs := make([][][]string, n)
	for i := range docs {
		fields := make([][]string, 3)
		for f, size := range []int{3, 7, 20} {
			fields[f] = make([]string, size)
			for j := range fields[f] {
				fields[f][j] = zipfWord(z)
			}
		}
		docs[i] = fields
	}
	return docs
}

// corpus returns the cached n-document corpus with its built index.
func corpus(b *testing.B, n int) *benchCorpus {
	b.Helper()
	benchMu.Lock()
	defer benchMu.Unlock()
	if c, ok := benchCorpora[n]; ok {
		return c
	}
	r := rand.New(rand.NewSource(int64(n)))
	c := &benchCorpus{docs: genBenchDocs(r, n), ix: New(DefaultParams(3))}
	z := rand.NewZipf(r, benchZipfS, 1, benchVocab-1)
	for range benchQueries {
		q := make([]string, 2+r.Intn(4))
		for i := range q {
			q[i] = zipfWord(z)
		}
		c.queries = append(c.queries, q)
	}
	for d, fields := range c.docs {
		c.ix.Add(uint32(d), fields)
	}
	benchCorpora[n] = c
	return c
}

var benchSizes = []int{10_000, 100_000}

func sizeName(n int) string { return fmt.Sprintf("n=%dk", n/1000) }

// BenchmarkSearch measures a top-10 search over the whole index and reports
// the median query latency next to the mean.
func BenchmarkSearch(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(sizeName(n), func(b *testing.B) {
			c := corpus(b, n)
			lat := make([]time.Duration, 0, b.N)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				t0 := time.Now()
				c.ix.Search(c.queries[i%benchQueries], nil, 10)
				lat = append(lat, time.Since(t0))
			}
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "median-ns")
		})
	}
}

// BenchmarkSearchFiltered measures a top-10 search restricted to a scope of
// 1% of the documents.
func BenchmarkSearchFiltered(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(sizeName(n), func(b *testing.B) {
			c := corpus(b, n)
			allow := docset.New(n)
			for d := 0; d < n; d += 100 {
				allow.Add(uint32(d))
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				c.ix.Search(c.queries[i%benchQueries], allow, 10)
			}
		})
	}
}

// BenchmarkAdd measures indexing one ~30-token document into an index that
// holds n documents; once full, each Add replaces a document (Remove + Add).
func BenchmarkAdd(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(sizeName(n), func(b *testing.B) {
			c := corpus(b, n)
			ix := New(DefaultParams(3))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				ix.Add(uint32(i%n), c.docs[i%n])
			}
		})
	}
}

// BenchmarkSearchLongQuery measures a top-10 search for a query of 700
// Zipf-drawn terms (about the 4 KB the engine runs whole before reducing a
// query), repeats included.
func BenchmarkSearchLongQuery(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(sizeName(n), func(b *testing.B) {
			c := corpus(b, n)
			r := rand.New(rand.NewSource(7))
			z := rand.NewZipf(r, benchZipfS, 1, benchVocab-1)
			q := make([]string, 700)
			for i := range q {
				q[i] = zipfWord(z)
			}
			b.ReportAllocs()
			for b.Loop() {
				c.ix.Search(q, nil, 10)
			}
		})
	}
}
