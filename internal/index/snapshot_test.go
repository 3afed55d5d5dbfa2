package index

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/binenc"
	"github.com/engram-memory/engram/internal/bm25"
	"github.com/engram-memory/engram/internal/tokenize"
	"github.com/engram-memory/engram/memory"
)

// snapshotBytes is a snapshot as written to a file.
type snapshotBytes []byte

// spans lists the snapshot's sections.
func (b snapshotBytes) spans() [][2]int64 {
	s, err := binenc.Spans(b)
	if err != nil {
		panic(err)
	}
	return s
}

func snapshotOf(tb testing.TB, ix *Index) snapshotBytes {
	tb.Helper()
	var buf bytes.Buffer
	w := binenc.NewWriter(&buf)
	ix.WriteSnapshot(w)
	if err := w.FinishSections(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

func load(b []byte, tok tokenize.Options) (*Index, error) { return loadFrom(b, tok, false) }

// loadFrom reads the snapshot b; mapped reads it as a mirror does from a
// file it holds a lease on, from a view of it, the memories' chunks mapped
// (by a stand-in Mapper that hands out slices of b), instead of streamed
// and copied.
func loadFrom(b []byte, tok tokenize.Options, mapped bool) (*Index, error) {
	secs, err := binenc.OpenSections(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return nil, err
	}
	if mapped {
		secs.SetView(b)
		secs.SetMapper(func(off int64, length, capacity int) ([]byte, io.Closer, error) {
			if off < 0 || off+int64(length) > int64(len(b)) {
				return nil, nil, errors.New("mapping past the end")
			}
			return b[off : off+int64(length) : off+int64(length)], io.NopCloser(nil), nil
		})
	}
	ix, err := ReadSnapshot(secs, tokenize.New(tok), bm25.DefaultParams(NumFields), DefaultContext, ANNOptions{})
	if err != nil {
		return nil, err
	}
	return ix, secs.Done()
}

// reseal recomputes the checksum of every section of data, so that a
// change inside a section reaches the decoders behind the checksum.
func reseal(data []byte, spans [][2]int64) {
	for _, sp := range spans {
		end := sp[0] + sp[1] - binenc.TrailerSize
		binary.LittleEndian.PutUint32(data[end:], crc32c(data[sp[0]:end]))
	}
}

// churned builds an index through puts, deletes and usage updates, with
// every optional memory field used and a vector the index cannot use.
func churned(tb testing.TB) *Index {
	tb.Helper()
	r := rand.New(rand.NewSource(9))
	ix := newIndex()
	at := time.Unix(50, 7).UTC()
	for i := range 3000 {
		m := randomMemory(r, r.Intn(400))
		switch r.Intn(8) {
		case 0:
			ix.Delete(m.Key())
			continue
		case 1:
			m.Metadata = json.RawMessage(`{"k":1}`)
			m.Favorite, m.Uses, m.Demand, m.DemandAt = true, 3, 1.5, &at
		case 2:
			m.Embedding = &memory.Embedding{Model: "zero", Dim: 2, Vector: []float32{0, 0}} // left out of the vector leg
		case 3:
			m.Embedding = &memory.Embedding{Model: "other", Dim: 2, Vector: []float32{1, float32(i)}}
		}
		ix.Put(m)
		if i%7 == 0 {
			u := *m
			u.Uses++
			ix.SetUsage(&u)
		}
	}
	if err := ix.Verify(); err != nil {
		tb.Fatalf("after the churn: %v", err)
	}
	return ix
}

// docsOf is every slot's memory, decoded where it is pending (lazy.go).
func docsOf(ix *Index) []*memory.Memory {
	out := make([]*memory.Memory, len(ix.docs))
	for d := range out {
		out[d] = ix.doc(uint32(d))
	}
	return out
}

func TestSnapshotRoundTrip(t *testing.T) {
	for _, mapped := range []bool{false, true} {
		t.Run(fmt.Sprintf("mapped=%t", mapped), func(t *testing.T) { testSnapshotRoundTrip(t, mapped) })
	}
}

func testSnapshotRoundTrip(t *testing.T, mapped bool) {
	orig := churned(t)
	got, err := loadFrom(snapshotOf(t, orig), tokenize.DefaultOptions(), mapped)
	if err != nil {
		t.Fatal(err)
	}
	for d, m := range orig.docs {
		if m != nil && got.created[d] != orig.created[d] {
			t.Fatalf("doc %d: created %d, want %d", d, got.created[d], orig.created[d])
		}
	}
	// Searched before anything is decoded below, as an open's first search.
	for _, q := range []string{"alpha", "beta gamma"} {
		ha, ua := got.BM25(q, nil, nil, 20)
		hb, ub := orig.BM25(q, nil, nil, 20)
		if !slices.Equal(ha, hb) || ua != ub {
			t.Fatalf("query %q: bm25 %v, want %v", q, ha, hb)
		}
	}
	if gotDocs := docsOf(got); !reflect.DeepEqual(gotDocs, orig.docs) ||
		!slices.Equal(got.free, orig.free) || !reflect.DeepEqual(got.byKey, orig.byKey) {
		for d := range orig.docs {
			if !reflect.DeepEqual(gotDocs[d], orig.docs[d]) {
				t.Fatalf("doc %d: %+v, want %+v", d, gotDocs[d], orig.docs[d])
			}
		}
		t.Fatal("memories differ after the round trip")
	}
	if !reflect.DeepEqual(got.Models(), orig.Models()) {
		t.Fatalf("models %v, want %v", got.Models(), orig.Models())
	}
	if err := got.Verify(); err != nil {
		t.Fatalf("the read index: %v", err)
	}
	if !reflect.DeepEqual(got.episodes, orig.episodes) || !slices.Equal(got.superAt, orig.superAt) || !slices.Equal(got.occurred, orig.occurred) {
		t.Fatal("episodes or supersession differ after the round trip")
	}
	since := time.Unix(300, 0)
	asOf := time.Unix(200, 0)
	filters := []*memory.Filter{
		nil,
		{Type: "fact"},
		{Scope: map[string]string{"team": "t1"}, Tags: []string{"x"}},
		{Scene: "work", Source: "cli"},
		{Since: &since},
		{Episode: "chat 2", Current: true},
		{AsOf: &asOf, Scope: map[string]string{"team": "t2"}},
		{Current: true},
	}
	for _, f := range filters {
		a, b := got.Allowed(f), orig.Allowed(f)
		if (a == nil) != (b == nil) || (a != nil && a.Len() != b.Len()) {
			t.Fatalf("filter %+v: allowed sets differ", f)
		}
		for _, q := range []string{"alpha", "beta gamma", "delta", "nothing"} {
			var scope map[string]string
			if f != nil {
				scope = f.Scope
			}
			ha, ua := got.BM25(q, got.Domain(scope), a, 20)
			hb, ub := orig.BM25(q, orig.Domain(scope), b, 20)
			if !slices.Equal(ha, hb) || ua != ub {
				t.Fatalf("filter %+v query %q: bm25 %v, want %v", f, q, ha, hb)
			}
		}
		for _, model := range []string{"m", "other"} {
			q := []float32{0.3, 0.5, 0.2}[:orig.Vectors(model).Dim()]
			if a, b := got.Vectors(model).Search(q, a, 20), orig.Vectors(model).Search(q, b, 20); !slices.Equal(a, b) {
				t.Fatalf("filter %+v model %s: vector %v, want %v", f, model, a, b)
			}
		}
	}
}

func TestSnapshotRejects(t *testing.T) {
	good := snapshotOf(t, churned(t))
	flipped := slices.Clone(good)
	flipped[len(flipped)/3] ^= 1
	noStem := tokenize.DefaultOptions()
	noStem.Stem = false
	for _, c := range []struct {
		name string
		in   []byte
		tok  tokenize.Options
	}{
		{"truncated", good[:len(good)-100], tokenize.DefaultOptions()},
		{"flipped byte", flipped, tokenize.DefaultOptions()},
		{"other tokenizer", good, noStem},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := load(c.in, c.tok); !errors.Is(err, binenc.ErrCorrupt) {
				t.Fatalf("got %v, want ErrCorrupt", err)
			}
		})
	}
}

// sectionedChurn is the churned index with graphs, written in chunks of 64
// slots, so that its snapshot has many sections of every kind.
func sectionedChurn(tb testing.TB) (*Index, snapshotBytes) {
	tb.Helper()
	ix := churned(tb)
	ix.SetANN(ANNOptions{GraphMin: 8})
	ix.BuildGraphs()
	defer func(n int) { snapshotChunk = n }(snapshotChunk)
	snapshotChunk = 64
	return ix, snapshotOf(tb, ix)
}

// TestSnapshotSectionsReject flips a byte at the start, the middle, the end
// and in the trailer of every section, and cuts the snapshot at many points:
// every one is refused with ErrCorrupt.
func TestSnapshotSectionsReject(t *testing.T) {
	ix, good := sectionedChurn(t)
	spans := good.spans()
	if want := 1 + (len(ix.docs)+63)/64 + 1 + 2*3; len(spans) != want {
		t.Fatalf("%d sections, want %d (head, chunks, BM25, 2 models with float32 rows, the rest and graphs)", len(spans), want)
	}
	if _, err := load(good, tokenize.DefaultOptions()); err != nil {
		t.Fatal(err)
	}
	for i, sp := range spans {
		for _, at := range []int64{sp[0], sp[0] + sp[1]/2, sp[0] + sp[1] - binenc.TrailerSize - 1, sp[0] + sp[1] - 1} {
			bad := slices.Clone(good)
			bad[at] ^= 0x08
			if _, err := load(bad, tokenize.DefaultOptions()); !errors.Is(err, binenc.ErrCorrupt) {
				t.Fatalf("section %d, byte %d flipped: %v, want ErrCorrupt", i, at, err)
			}
		}
	}
	for cut := 0; cut < len(good); cut += 1 + len(good)/300 {
		if _, err := load(good[:cut], tokenize.DefaultOptions()); !errors.Is(err, binenc.ErrCorrupt) {
			t.Fatalf("cut at %d of %d: %v, want ErrCorrupt", cut, len(good), err)
		}
	}
	for _, cut := range []int{len(good) - 1, len(good) - 8, len(good) - 9} {
		if _, err := load(good[:cut], tokenize.DefaultOptions()); !errors.Is(err, binenc.ErrCorrupt) {
			t.Fatalf("cut at %d of %d: %v, want ErrCorrupt", cut, len(good), err)
		}
	}
}

// TestSnapshotParallelLoads loads one snapshot of many chunks on several
// goroutines at once, many rounds (for -race): every load equals the index
// written, memories, lookups and graphs.
func TestSnapshotParallelLoads(t *testing.T) {
	ix, good := sectionedChurn(t)
	var wg sync.WaitGroup
	errs := make(chan error, 4*10)
	for range 4 {
		wg.Go(func() {
			for range 10 {
				got, err := load(good, tokenize.DefaultOptions())
				if err != nil {
					errs <- err
					return
				}
				if !reflect.DeepEqual(docsOf(got), ix.docs) || !reflect.DeepEqual(got.byKey, ix.byKey) ||
					!reflect.DeepEqual(got.created, ix.created) || !reflect.DeepEqual(got.tags, ix.tags) ||
					!reflect.DeepEqual(got.scope, ix.scope) || !reflect.DeepEqual(got.types, ix.types) {
					errs <- errors.New("a load differs from the index written")
					return
				}
				if got.Graph("m") == nil || got.Graph("other") == nil {
					errs <- errors.New("graphs not loaded")
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}
