package bm25

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/binenc"
	"github.com/engram-memory/engram/internal/synth"
	"github.com/engram-memory/engram/internal/tokenize"
)

// The synthetic-store measurements: the memories internal/synth generates
// (the ones engram bench stores), tokenized as internal/index tokenizes them
// (name, description, text; default tokenizer and parameters). Sizes come
// from ENGRAM_BM25_SYNTH (comma-separated counts, default 100000), since a
// 1M-memory build takes a while.

type synthStore struct {
	ix        *Index
	snap      []byte
	postings  int     // (document, term) pairs with a posting
	heapBuilt float64 // live heap the built index holds, bytes a memory
}

var (
	synthMu     sync.Mutex
	synthStores = map[int]*synthStore{}
)

func synthSizes() []int {
	spec := os.Getenv("ENGRAM_BM25_SYNTH")
	if spec == "" {
		spec = "100000"
	}
	var out []int
	for _, s := range strings.Split(spec, ",") {
		if n, err := strconv.Atoi(strings.TrimSpace(s)); err == nil && n > 0 {
			out = append(out, n)
		}
	}
	return out
}

// liveHeap returns the live heap after a full collection.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// synthIndex builds (once per size) the BM25 index of n synthetic memories and
// its snapshot, measuring the heap the index holds.
func synthIndex(b *testing.B, n int) *synthStore {
	b.Helper()
	synthMu.Lock()
	defer synthMu.Unlock()
	if s, ok := synthStores[n]; ok {
		return s
	}
	corpus := synth.New(synth.Config{Seed: synth.DefaultSeed, Dim: 512})
	tok := tokenize.New(tokenize.DefaultOptions())
	s := &synthStore{}
	before := liveHeap()
	ix := New(DefaultParams(3))
	seen := map[string]bool{}
	for i := range n {
		m := corpus.Memory(i)
		fields := [][]string{tok.Tokens(m.Name), tok.Tokens(m.Description), tok.Tokens(m.Text)}
		clear(seen)
		for _, f := range fields {
			for _, t := range f {
				if t != "" && !seen[t] {
					seen[t] = true
					s.postings++
				}
			}
		}
		ix.Add(uint32(i), fields)
	}
	s.heapBuilt = float64(liveHeap()-before) / float64(n)
	var buf bytes.Buffer
	w := binenc.NewWriter(&buf)
	ix.WriteSnapshot(w)
	if err := w.Finish(); err != nil {
		b.Fatal(err)
	}
	s.ix, s.snap = ix, buf.Bytes()
	runtime.KeepAlive(corpus)
	synthStores[n] = s
	return s
}

// BenchmarkSynthSnapshot measures ReadSnapshot of the synthetic store's BM25
// index (ns/op) and reports the live heap of the built and of the loaded
// index per memory, the postings per memory and the snapshot's bytes per
// memory.
func BenchmarkSynthSnapshot(b *testing.B) {
	for _, n := range synthSizes() {
		b.Run(fmt.Sprintf("n=%dk", n/1000), func(b *testing.B) {
			s := synthIndex(b, n)
			load := func() *Index {
				ix := New(DefaultParams(3))
				r := binenc.NewReader(bytes.NewReader(s.snap), int64(len(s.snap)))
				if err := ix.ReadSnapshot(r); err != nil {
					b.Fatal(err)
				}
				if err := r.Verify(); err != nil {
					b.Fatal(err)
				}
				return ix
			}
			before := liveHeap()
			loaded := load()
			heapLoaded := float64(liveHeap()-before) / float64(n)
			runtime.KeepAlive(loaded)
			loaded = nil
			b.ResetTimer()
			for b.Loop() {
				load()
			}
			b.StopTimer()
			b.ReportMetric(s.heapBuilt, "heap-B/mem-built")
			b.ReportMetric(heapLoaded, "heap-B/mem-loaded")
			b.ReportMetric(float64(s.postings)/float64(n), "postings/mem")
			b.ReportMetric(float64(len(s.snap))/float64(n), "snap-B/mem")
			b.ReportMetric(float64(len(s.ix.names)-len(s.ix.free))/float64(n), "terms/mem")
		})
	}
}

// BenchmarkSynthSearch measures a top-10 search of the synthetic store with
// the words of synth's queries, reporting the median next to the mean.
func BenchmarkSynthSearch(b *testing.B) {
	for _, n := range synthSizes() {
		b.Run(fmt.Sprintf("n=%dk", n/1000), func(b *testing.B) {
			s := synthIndex(b, n)
			corpus := synth.New(synth.Config{Seed: synth.DefaultSeed, Dim: 512})
			tok := tokenize.New(tokenize.DefaultOptions())
			qs := make([][]string, 256)
			for i := range qs {
				text, _ := corpus.Query(i, n)
				qs[i] = tok.Tokens(text)
			}
			benchQueriesMedian(b, s.ix, qs)
		})
	}
}

// BenchmarkSynthReplace measures replacing a synthetic memory by another's
// text (Add over an indexed document: its old postings go, the new ones come)
// in the synthetic store, then deleting and re-adding it.
func BenchmarkSynthReplace(b *testing.B) {
	for _, n := range synthSizes() {
		b.Run(fmt.Sprintf("n=%dk", n/1000), func(b *testing.B) {
			s := synthIndex(b, n)
			corpus := synth.New(synth.Config{Seed: synth.DefaultSeed, Dim: 512})
			tok := tokenize.New(tokenize.DefaultOptions())
			docs := make([][][]string, 256)
			for i := range docs {
				m := corpus.Memory(n + i)
				docs[i] = [][]string{tok.Tokens(m.Name), tok.Tokens(m.Description), tok.Tokens(m.Text)}
			}
			// Work on a copy so the cached index stays the synthetic store.
			ix := New(DefaultParams(3))
			r := binenc.NewReader(bytes.NewReader(s.snap), int64(len(s.snap)))
			if err := ix.ReadSnapshot(r); err != nil {
				b.Fatal(err)
			}
			b.Run("replace", func(b *testing.B) {
				for i := 0; b.Loop(); i++ {
					ix.Add(uint32((i*7919)%n), docs[i%len(docs)])
				}
			})
			b.Run("remove+add", func(b *testing.B) {
				for i := 0; b.Loop(); i++ {
					d := uint32((i * 104729) % n)
					ix.Remove(d)
					ix.Add(d, docs[i%len(docs)])
				}
			})
		})
	}
}

// benchQueriesMedian runs the queries round robin as top-10 searches and
// reports the median latency next to the mean.
func benchQueriesMedian(b *testing.B, ix *Index, qs [][]string) {
	lat := make([]time.Duration, 0, 1024)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		t0 := time.Now()
		ix.Search(qs[i%len(qs)], nil, 10)
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "median-ns")
}
