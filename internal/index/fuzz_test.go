package index

import (
	"bytes"
	"hash/crc32"
	"math/rand"
	"testing"

	"github.com/engram-memory/engram/internal/ann"
	"github.com/engram-memory/engram/internal/binenc"
	"github.com/engram-memory/engram/internal/tokenize"
	"github.com/engram-memory/engram/memory"
)

// FuzzReadSnapshot feeds the snapshot readers of the index and of BM25 input
// that gets past the codec: a real snapshot with bytes changed and the
// checksum recomputed, so every structure check behind the CRC is exercised.
// Reading never panics, and a snapshot it accepts answers searches (the
// exact scan and the ANN graph, which the seed index has), lists and a second
// snapshot round trip without panicking. Changes reach every section, the
// vector indexes and graphs included (the vector reader bounds document
// numbers by the index's slot count, so a corrupt one allocates nothing).
func FuzzReadSnapshot(f *testing.F) {
	r := rand.New(rand.NewSource(3))
	ix := newIndex()
	ix.SetANN(ANNOptions{GraphMin: 8})
	for i := range 40 {
		m := randomMemory(r, i)
		if i%5 == 0 {
			m.Embedding = &memory.Embedding{Model: "other", Dim: 2, Vector: []float32{1, float32(i)}}
		}
		ix.Put(m)
	}
	ix.BuildGraphs()
	ix.Delete(ix.docs[3].Key())
	defer func(n int) { snapshotChunk = n }(snapshotChunk)
	snapshotChunk = 16
	valid := snapshotOf(f, ix)
	spans := valid.spans()
	// head, 40 slots in 3 chunks of memories, BM25, then models "m" and
	// "other" (8 vectors: GraphMin), each its float32 rows, the rest of its
	// vectors and its graph
	if len(spans) != 1+3+1+2*3 {
		f.Fatalf("%d sections", len(spans))
	}
	if ix.Graph("m") == nil {
		f.Fatal("the seed index has no graph")
	}
	last := spans[len(spans)-1]
	sectionsEnd := uint32(last[0] + last[1])
	f.Add(uint32(0), []byte{})
	for _, sp := range spans { // every section, its start and its middle
		f.Add(uint32(sp[0]), []byte{0xff, 0xff, 0xff, 0xff})
		f.Add(uint32(sp[0]+8), []byte{0, 0, 0, 0, 0, 0, 0, 0x40})
		f.Add(uint32(sp[0]+sp[1]/2), []byte{1})
		f.Add(uint32(sp[0]+sp[1]-binenc.TrailerSize-8), []byte{0x7f, 0xff, 0xff, 0xff})
	}
	f.Fuzz(func(t *testing.T, at uint32, patch []byte) {
		data := bytes.Clone(valid)
		off := int(at % sectionsEnd)
		for i, b := range patch {
			if off+i < int(sectionsEnd) {
				data[off+i] ^= b
			}
		}
		reseal(data, spans)
		got, err := loadFrom(data, tokenize.DefaultOptions(), at%2 == 1)
		if err != nil {
			return
		}
		f := &memory.Filter{Scope: map[string]string{"team": "t1"}, Tags: []string{"x"}}
		got.BM25("alpha beta", got.Domain(f.Scope), got.Allowed(f), 10)
		got.BM25("gamma", nil, nil, 10)
		for model := range got.Models() {
			vi := got.Vectors(model)
			q := make([]float32, vi.Dim())
			for i := range q {
				q[i] = 1
			}
			vi.Search(q, nil, 5)
			got.VectorSearch(model, q, nil, 5)
			got.VectorSearch(model, q, got.Allowed(f), 5)
			if g := got.Graph(model); g != nil {
				ann.SearchVectors(g, vi, q, nil, 5, ann.Policy{ExactBelow: -1})
				ann.SearchVectors(g, vi, q, got.Allowed(f), 5, ann.Policy{ExactBelow: -1})
			}
		}
		got.Each(nil, func(m *memory.Memory) bool { _ = m.Key(); return true })
		if err := got.Corrupt(); err != nil {
			t.Fatalf("a memory of an accepted snapshot does not decode: %v", err)
		}
		if _, err := load(snapshotOf(t, got), tokenize.DefaultOptions()); err != nil {
			t.Fatalf("an accepted snapshot does not round-trip: %v", err)
		}
	})
}

// crc32c is the codec's checksum (CRC-32C) of b.
func crc32c(b []byte) uint32 { return crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)) }
