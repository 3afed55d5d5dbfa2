package index

import (
	"fmt"
	"maps"
	"slices"

	"github.com/engram-memory/engram/memory"
)

// Verify checks what the index derives from its memories against a
// computation from scratch: every memory's BM25 terms and length (its own
// fields, its neighbours' text, its date), the episode lists in episode
// order, and every supersession. It is slow, for tests (concurrent writers,
// snapshots, fuzzing); the caller holds at least a read lock.
func (ix *Index) Verify() error {
	if len(ix.dirty) > 0 {
		return fmt.Errorf("%d memories wait for their context outside a batch", len(ix.dirty))
	}
	// Every memory, decoded (lazy.go).
	docs := make([]*memory.Memory, len(ix.docs))
	for doc := range docs {
		docs[doc] = ix.doc(uint32(doc))
	}
	// Episode lists, recomputed.
	want := map[string][]uint32{}
	for doc, m := range docs {
		if m != nil && m.Episode != "" {
			want[m.EpisodeKey()] = append(want[m.EpisodeKey()], uint32(doc))
		}
	}
	for key, l := range want {
		slices.SortFunc(l, func(a, b uint32) int { return memory.EpisodeOrder(docs[a], docs[b]) })
		if !slices.Equal(l, ix.episodes[key]) {
			return fmt.Errorf("episode %q: documents %v, want %v", key, ix.episodes[key], l)
		}
	}
	if len(want) != len(ix.episodes) {
		return fmt.Errorf("%d episodes indexed, want %d", len(ix.episodes), len(want))
	}
	for doc, m := range docs {
		if ix.live.Has(uint32(doc)) != (m != nil) {
			return fmt.Errorf("document %d: live %t, indexed %t", doc, ix.live.Has(uint32(doc)), m != nil)
		}
		if m == nil {
			continue
		}
		ft := ix.tokens(m)
		if ix.needsContext(m) {
			l := want[m.EpisodeKey()]
			i := slices.Index(l, uint32(doc))
			k := ix.ctx.Neighbours
			for _, n := range append(slices.Clone(l[max(0, i-k):i]), l[i+1:min(len(l), i+1+k)]...) {
				ft[FieldContext] = append(ft[FieldContext], ix.tok.Tokens(docs[n].Text)...)
			}
		}
		got, gotLen := ix.bm.Doc(uint32(doc))
		wantTF, wantLen := ix.bm.Expect(ft[:])
		if gotLen != wantLen || !maps.Equal(got, wantTF) {
			return fmt.Errorf("memory %q: BM25 holds %v (length %d), want %v (length %d)", m.ID, got, gotLen, wantTF, wantLen)
		}
		// Supersession, from every memory indexed.
		sup := memory.SupersessionOf(m.ID, m.Scope, docs)
		if !sameSupersession(m.Superseded, sup) || ix.superseded.Has(uint32(doc)) != (sup != nil) {
			return fmt.Errorf("memory %q: superseded %+v (in the set: %t), want %+v", m.ID, m.Superseded, ix.superseded.Has(uint32(doc)), sup)
		}
	}
	return nil
}

// Corrupt returns an error once a model's float32 vectors, mapped from a
// snapshot and checked block by block as they are read (vector.Index.Corrupt),
// have failed their checksum: the index must then be rebuilt from its source,
// and what was read from it since the load not used. Safe under a read lock.
// Every search asks, so the models are sorted (for the same answer each
// time) only once one is found corrupt.
func (ix *Index) Corrupt() error {
	if err := ix.lazyErr.Load(); err != nil {
		return *err
	}
	bad := false
	for _, vi := range ix.vecs {
		bad = bad || vi.Corrupt() != nil
	}
	if !bad {
		return nil
	}
	for _, model := range slices.Sorted(maps.Keys(ix.vecs)) {
		if err := ix.vecs[model].Corrupt(); err != nil {
			return fmt.Errorf("model %q: %w", model, err)
		}
	}
	return nil
}

// Settle checks every snapshot vector block not read yet, and returns Corrupt.
func (ix *Index) Settle() error {
	for _, model := range slices.Sorted(maps.Keys(ix.vecs)) {
		if err := ix.vecs[model].Settle(); err != nil {
			return fmt.Errorf("model %q: %w", model, err)
		}
	}
	return nil
}
