package index

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math/rand"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/binenc"
	"github.com/engram-memory/engram/internal/tokenize"
	"github.com/engram-memory/engram/memory"
)

// decodedCount is the number of slots whose memory is decoded.
func decodedCount(ix *Index) int {
	n := 0
	for d := range ix.docs {
		if ix.decoded(uint32(d)) != nil {
			n++
		}
	}
	return n
}

// TestSnapshotLazy: a read index decodes a memory when it is used, not
// before: searching, filtering and the lookups decode none; Doc, Get and
// Neighbours decode what they return; a snapshot written from it is byte
// for byte the one it was read from (pending memories are copied as they
// were read), and after the same writes it holds what the index it was
// read from holds.
func TestSnapshotLazy(t *testing.T) {
	for _, mapped := range []bool{false, true} {
		t.Run(fmt.Sprintf("mapped=%t", mapped), func(t *testing.T) {
			orig := churned(t)
			data := snapshotOf(t, orig)
			got, err := loadFrom(bytes.Clone(data), tokenize.DefaultOptions(), mapped)
			if err != nil {
				t.Fatal(err)
			}
			// Decoded at the load: the memories with a vector of their own,
			// those superseded (their derived field is set on a copy) and
			// those superseding them.
			want := map[int]bool{}
			for d, m := range orig.docs {
				if m != nil && m.Embedding != nil && m.Embedding.Vector != nil {
					want[d] = true
				}
			}
			for tk, l := range orig.supersOf {
				if d, ok := orig.byKey[tk]; ok {
					want[int(d)] = true
					for _, c := range l {
						want[int(c)] = true
					}
				}
			}
			atLoad := decodedCount(got)
			if atLoad != len(want) || len(want) > len(got.byKey)/3 {
				t.Fatalf("%d of %d memories decoded by the load, want %d", atLoad, len(got.byKey), len(want))
			}
			if !bytes.Equal(snapshotOf(t, got), data) {
				t.Fatal("the snapshot of the read index differs from the one it was read from")
			}
			r := rand.New(rand.NewSource(4))
			for range 50 {
				f := randomFilter(r)
				allow := got.Allowed(&f)
				got.BM25("alpha gamma", got.Domain(f.Scope), allow, 20)
				got.Vectors("m").Search([]float32{0.3, 0.5, 0.2}, allow, 20)
				got.OccurredIn([]memory.TimeWindow{{Since: time.Unix(0, 0), Until: time.Unix(500, 0)}}, allow)
			}
			keysOf := func(ix *Index, id string) []string { return slices.Sorted(slices.Values(ix.KeysOf(id))) }
			want42 := keysOf(orig, "m0042")
			if len(want42) == 0 || !slices.Equal(keysOf(got, "m0042"), want42) {
				t.Fatalf("KeysOf(m0042) of the pending memories: %q, want %q", keysOf(got, "m0042"), want42)
			}
			got.Models()
			if n := decodedCount(got); n != atLoad {
				t.Fatalf("searches and filters decoded %d memories", n-atLoad)
			}
			// What the episode lists are built from, read off the records
			// of pending memories as their decoded memories would give it;
			// a free slot has none.
			for d, m := range orig.docs {
				seq, at, id := got.orderAt(uint32(d))
				if seq != m.Seq || !at.Equal(m.OccurredAt) || id != m.ID {
					t.Fatalf("slot %d: order %d %v %q, want %d %v %q", d, seq, at, id, m.Seq, m.OccurredAt, m.ID)
				}
				if ek := got.episodeKeyAt(uint32(d), m.Episode); m.Episode != "" && ek != m.EpisodeKey() {
					t.Fatalf("slot %d: episode key %q, want %q", d, ek, m.EpisodeKey())
				}
			}
			if n := decodedCount(got); n != atLoad {
				t.Fatalf("reading orders and episode keys decoded %d memories", n-atLoad)
			}
			// A slot freed by a delete (of a copy) has no order and no key.
			spare, err := loadFrom(bytes.Clone(data), tokenize.DefaultOptions(), mapped)
			if err != nil {
				t.Fatal(err)
			}
			for k, d := range spare.byKey {
				if spare.decoded(d) == nil && orig.docs[d].Episode != "" {
					spare.Delete(k)
					seq, at, id := spare.orderAt(d)
					if ek := spare.episodeKeyAt(d, orig.docs[d].Episode); seq != 0 || !at.IsZero() || id != "" || ek != "" {
						t.Fatalf("freed slot %d: order %d %v %q, episode key %q", d, seq, at, id, ek)
					}
					break
				}
			}
			var key string
			for k, d := range got.byKey {
				if got.decoded(d) == nil && orig.docs[d].Episode != "" {
					key = k
					break
				}
			}
			d := got.byKey[key]
			if m := got.Get(key); !reflect.DeepEqual(m, orig.docs[d]) || got.decoded(d) != m || got.Get(key) != m {
				t.Fatalf("Get(%q): %+v, want %+v, decoded once", key, m, orig.docs[d])
			}
			pendingNear := 0
			b, a := orig.around(d, orig.docs[d], 2)
			for _, n := range append(slices.Clone(b), a...) {
				if got.decoded(n) == nil {
					pendingNear++
				}
			}
			before, after := got.Neighbours(key, 2)
			wantB, wantA := orig.Neighbours(key, 2)
			if !reflect.DeepEqual(before, wantB) || !reflect.DeepEqual(after, wantA) {
				t.Fatalf("neighbours of %q differ", key)
			}
			if n := decodedCount(got); n != atLoad+1+pendingNear {
				t.Fatalf("%d memories decoded after one Get and its neighbours, want %d", n, atLoad+1+pendingNear)
			}
			// The same writes to both: deletes of a decoded and a pending
			// memory, usage, a replacement, a new memory in a freed slot.
			var others []string
			for k, d := range got.byKey {
				if got.decoded(d) == nil && k != key {
					others = append(others, k)
				}
			}
			slices.Sort(others)
			replaced := *orig.Get(others[2])
			replaced.Text = "epsilon zeta"
			ops := []func(ix *Index){
				func(ix *Index) { ix.Delete(key) },
				func(ix *Index) { ix.Delete(others[0]) },
				func(ix *Index) { ix.SetUsageKey(others[1], 99, 2.5, nil) },
				func(ix *Index) { m := replaced; ix.Put(&m) },
				func(ix *Index) {
					ix.Put(&memory.Memory{ID: "new", Text: "eta theta", CreatedAt: time.Unix(9, 0).UTC(), Scope: map[string]string{}})
				},
			}
			for _, op := range ops {
				op(orig)
				op(got)
			}
			// Not byte for byte: a new term's number depends on the order a
			// map gives. The memories, what BM25 holds of each, and a read
			// of the snapshot written.
			for d := range orig.docs {
				a, al := orig.bm.Doc(uint32(d))
				b, bl := got.bm.Doc(uint32(d))
				if al != bl || !maps.Equal(a, b) {
					t.Fatalf("after the same writes, BM25 holds %v (length %d) of document %d, want %v (length %d)", b, bl, d, a, al)
				}
			}
			again, err := loadFrom(snapshotOf(t, got), tokenize.DefaultOptions(), mapped)
			if err != nil || !reflect.DeepEqual(docsOf(again), orig.docs) {
				t.Fatalf("the snapshot written after the writes reads back as other memories (%v)", err)
			}
			if err := got.Verify(); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(docsOf(got), orig.docs) {
				t.Fatal("after the same writes, the memories differ")
			}
			if err := got.Corrupt(); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(keysOf(got, "m0042"), keysOf(orig, "m0042")) { // now decoded
				t.Fatalf("KeysOf(m0042) of the decoded memories: %q, want %q", keysOf(got, "m0042"), keysOf(orig, "m0042"))
			}
		})
	}
}

// unused is m without its use statistics, which the test's writer changes.
func unused(m *memory.Memory) memory.Memory {
	c := *m
	c.Uses, c.Demand, c.DemandAt = 0, 0, nil
	return c
}

// TestSnapshotLazyConcurrent decodes the memories of a read index from many
// readers at once while a writer changes it, as a mirror does (readers under
// a read lock, the writer under the write lock), many rounds, for -race:
// every reader sees each memory as the index written has it, and the
// memories decoded concurrently are one per slot.
func TestSnapshotLazyConcurrent(t *testing.T) {
	orig := churned(t)
	data := snapshotOf(t, orig)
	keys := make([]string, 0, len(orig.byKey))
	for k := range orig.byKey {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for round := range 8 {
		got, err := loadFrom(data, tokenize.DefaultOptions(), round%2 == 1)
		if err != nil {
			t.Fatal(err)
		}
		var mu sync.RWMutex
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for g := range 6 {
			wg.Go(func() {
				r := rand.New(rand.NewSource(int64(round*10 + g)))
				for range 400 {
					k := keys[r.Intn(len(keys))]
					mu.RLock()
					var m *memory.Memory
					switch r.Intn(3) {
					case 0:
						m = got.Get(k)
					case 1:
						if d, ok := got.DocOf(k); ok {
							m = got.Doc(d)
						}
					default:
						got.Neighbours(k, 2)
						m = got.Get(k)
					}
					if m != nil && !reflect.DeepEqual(unused(m), unused(orig.Get(k))) {
						errs <- fmt.Errorf("memory %q: %+v, want %+v", k, m, orig.Get(k))
					}
					if m != nil && got.Get(k) != m {
						errs <- fmt.Errorf("memory %q decoded twice", k)
					}
					mu.RUnlock()
				}
			})
		}
		wg.Go(func() {
			for i := range 40 {
				mu.Lock()
				if i%2 == 0 {
					got.SetUsageKey(keys[i*7%len(keys)], 5, 1, nil)
				} else {
					got.Delete(keys[i*11%len(keys)])
				}
				mu.Unlock()
			}
		})
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if err := got.Verify(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSnapshotLazyChanged: should a pending memory's bytes change after the
// load (what mmap.Lease rules out), decoding it neither panics nor returns
// nil: the index reports itself corrupt, for its owner to rebuild it.
func TestSnapshotLazyChanged(t *testing.T) {
	orig := churned(t)
	data := snapshotOf(t, orig)
	got, err := loadFrom(data, tokenize.DefaultOptions(), true) // the pending records alias data
	if err != nil {
		t.Fatal(err)
	}
	var d uint32
	for d = range uint32(len(got.docs)) {
		if got.pendingAt(d) && got.decoded(d) == nil {
			break
		}
	}
	rc := got.pend.rec[d]
	clear(got.pend.data[int(d)/got.pend.chunk][rc.off : rc.off+12]) // its flags and counts
	if err := got.Corrupt(); err != nil {
		t.Fatalf("corrupt before anything was decoded: %v", err)
	}
	m := got.Doc(d)
	if m == nil || m.Key() != orig.docs[d].Key() {
		t.Fatalf("the changed memory reads as %+v, want its key %q", m, orig.docs[d].Key())
	}
	if err := got.Corrupt(); !errors.Is(err, binenc.ErrCorrupt) {
		t.Fatalf("Corrupt() = %v, want ErrCorrupt", err)
	}
}
