package index

import (
	"fmt"
	"testing"

	"github.com/engram-memory/engram/internal/synth"
	"github.com/engram-memory/engram/memory"
)

// BenchmarkReadSnapshot times reading a snapshot of synthetic memories
// (the bench corpus: text, scope, tags, a 128-d vector each; no graph) from
// memory: decoding, checksums and checks, the lookups built. Run with
// -cpu 1,2 to see what the parallel read gains:
//
//	go test -run '^$' -bench ReadSnapshot -count 6 ./internal/index
func BenchmarkReadSnapshot(b *testing.B) { benchReadSnapshot(b, false) }

// benchReadSnapshot reads a snapshot of 20k synthetic memories, over and
// over, and with search, runs one BM25 and one vector search of each read.
func benchReadSnapshot(b *testing.B, search bool) {
	for _, n := range []int{20000} {
		b.Run(fmt.Sprintf("memories=%d", n), func(b *testing.B) {
			ix, corpus := benchSnapshotIndex(n)
			data := snapshotOf(b, ix)
			q, _ := corpus.Query(0, n)
			qv := corpus.Vector(q)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				got, err := loadFrom(data, ix.tok.Options(), true)
				if err != nil {
					b.Fatal(err)
				}
				if got.Len() != n {
					b.Fatalf("%d memories, want %d", got.Len(), n)
				}
				if !search {
					continue
				}
				if hits, _ := got.BM25(q, nil, nil, 10); len(hits) == 0 {
					b.Fatal("no BM25 hits")
				}
				if hits, _ := got.VectorSearch(corpus.ModelID(), qv, nil, 10); len(hits) != 10 {
					b.Fatalf("%d vector hits, want 10", len(hits))
				}
			}
		})
	}
}

// benchSnapshotIndex is an index of n synthetic memories as
// BenchmarkReadSnapshot reads them, and its corpus.
func benchSnapshotIndex(n int) (*Index, *synth.Corpus) {
	corpus := synth.New(synth.Config{Seed: 1, Dim: 128})
	ix := newIndex()
	ix.SetANN(ANNOptions{GraphMin: -1})
	for i := range n {
		m := corpus.Memory(i)
		m.Embedding = &memory.Embedding{Model: corpus.ModelID(), Dim: 128, Vector: corpus.Vector(m.Text)}
		ix.Put(m)
	}
	return ix, corpus
}

// BenchmarkReadSnapshotSearch times what an open costs until its first
// search has answered: reading the snapshot (as BenchmarkReadSnapshot), then
// one BM25 and one vector search of the read index, with whatever the
// collector does after the read landing in them:
//
//	go test -run '^$' -bench ReadSnapshotSearch -count 6 ./internal/index
func BenchmarkReadSnapshotSearch(b *testing.B) { benchReadSnapshot(b, true) }

// BenchmarkDecodePending times decoding one memory left pending by a
// snapshot read (lazy.go), as a search's results are on a fresh open:
//
//	go test -run '^$' -bench DecodePending ./internal/index
func BenchmarkDecodePending(b *testing.B) {
	ix, _ := benchSnapshotIndex(20000)
	got, err := loadFrom(snapshotOf(b, ix), ix.tok.Options(), true)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	d := uint32(0)
	for b.Loop() {
		d = (d + 7919) % uint32(len(got.docs))
		got.docs[d] = nil // pending again: its record is still there
		if got.doc(d) == nil {
			b.Fatal("no memory")
		}
	}
}
