package index

import (
	"bytes"
	"encoding/binary"
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
	valid := snapshotOf(f, ix)
	vecStart := vectorSectionStart(f, ix)
	if vecStart <= 0 || vecStart >= len(valid) {
		f.Fatalf("vector section at %d of %d bytes", vecStart, len(valid))
	}
	if ix.Graph("m") == nil {
		f.Fatal("the seed index has no graph")
	}
	f.Add(uint32(0), []byte{})
	f.Add(uint32(8), []byte{0xff, 0xff, 0xff, 0xff})
	f.Add(uint32(100), []byte{0, 0, 0, 0, 0, 0, 0, 0})
	f.Add(uint32(len(valid)/2), []byte{1})
	f.Add(uint32(len(valid)-40), []byte{0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	f.Add(uint32(vecStart+40), []byte{0x7f, 0xff, 0xff, 0xff})
	f.Add(uint32(len(valid)-200), []byte{0x01, 0, 0, 0})
	f.Fuzz(func(t *testing.T, at uint32, patch []byte) {
		body := bytes.Clone(valid[:len(valid)-binenc.TrailerSize])
		off := int(at % uint32(len(body)))
		for i, b := range patch {
			if off+i < len(body) {
				body[off+i] ^= b
			}
		}
		data := binary.LittleEndian.AppendUint32(body, crc32c(body))
		got, err := load(data, tokenize.DefaultOptions())
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
		if _, err := load(snapshotOf(t, got), tokenize.DefaultOptions()); err != nil {
			t.Fatalf("an accepted snapshot does not round-trip: %v", err)
		}
	})
}

// crc32c is the codec's checksum (CRC-32C) of b.
func crc32c(b []byte) uint32 { return crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)) }

// vectorSectionStart is the offset where ix's snapshot reaches its vector
// indexes (WriteSnapshot's layout up to the model count).
func vectorSectionStart(tb testing.TB, ix *Index) int {
	var buf bytes.Buffer
	w := binenc.NewWriter(&buf)
	w.Uint32(snapshotVersion)
	o := ix.tok.Options()
	w.Bool(o.Stem)
	w.Bool(o.Stopwords)
	w.Uint64(uint64(len(ix.docs)))
	w.Uint32s(ix.free)
	var c memoryCodec
	for _, m := range ix.docs {
		w.Bool(m != nil)
		if m != nil {
			c.write(w, m)
		}
	}
	ix.bm.WriteSnapshot(w)
	if err := w.Finish(); err != nil {
		tb.Fatal(err)
	}
	n := buf.Len() - binenc.TrailerSize
	if !bytes.Equal(buf.Bytes()[:n], snapshotOf(tb, ix)[:n]) {
		tb.Fatal("vectorSectionStart does not follow WriteSnapshot's layout")
	}
	return n
}
