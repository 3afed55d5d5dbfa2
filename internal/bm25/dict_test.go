package bm25

import (
	"math/rand"
	"strconv"
	"testing"
)

// TestDictMatchesMap drives the dictionary and a Go map with the same random
// inserts and removals, with full hashes and with hashes cut to 0–3 bits (so
// runs collide, wrap around the table and shift back on removal), checking
// every term after every operation.
func TestDictMatchesMap(t *testing.T) {
	for _, weak := range []uint32{0, 1, 3, 0xf0000000} {
		t.Run(strconv.FormatUint(uint64(weak), 16), func(t *testing.T) {
			r := rand.New(rand.NewSource(int64(weak) + 1))
			d := newDict(0)
			if weak != 0 {
				d.weak = weak
			}
			const vocab = 60
			names := make([]string, vocab)
			want := map[string]uint32{}
			for op := range 4000 {
				id := uint32(r.Intn(vocab))
				term := "t" + strconv.Itoa(int(id))
				if _, ok := want[term]; ok && r.Intn(2) == 0 {
					d.remove(term, id)
					delete(want, term)
					names[id] = ""
				} else if !ok {
					names[id] = term
					if op%2 == 0 {
						d.insert(term, id)
					} else if !d.add(names, term, id) {
						t.Fatalf("op %d: add of absent %q refused", op, term)
					}
					want[term] = id
				} else if d.add(names, term, id) {
					t.Fatalf("op %d: add of present %q accepted", op, term)
				}
				if d.n != len(want) {
					t.Fatalf("op %d: %d entries, want %d", op, d.n, len(want))
				}
				for i := range vocab {
					term := "t" + strconv.Itoa(i)
					got, ok := d.find(names, term)
					w, wok := want[term]
					if ok != wok || got != w {
						t.Fatalf("op %d: find(%q) = %d, %v; want %d, %v", op, term, got, ok, w, wok)
					}
				}
			}
		})
	}
}
