package docset

import (
	"math/rand"
	"testing"
)

// TestSetMatchesMap checks the bitset against a map, its brute-force twin.
func TestSetMatchesMap(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	s, o := New(10), New(0)
	ref, oref := map[uint32]bool{}, map[uint32]bool{}
	for i := 0; i < 5000; i++ {
		d := uint32(r.Intn(700))
		switch r.Intn(3) {
		case 0, 1:
			s.Add(d)
			ref[d] = true
		case 2:
			s.Remove(d)
			delete(ref, d)
		}
		if r.Intn(2) == 0 {
			o.Add(d)
			oref[d] = true
		}
	}
	if s.Len() != len(ref) {
		t.Fatalf("Len = %d, want %d", s.Len(), len(ref))
	}
	for d := uint32(0); d < 800; d++ {
		if s.Has(d) != ref[d] {
			t.Fatalf("Has(%d) = %v, want %v", d, s.Has(d), ref[d])
		}
	}
	and := s.Clone()
	and.And(o)
	var prev int64 = -1
	n := 0
	and.ForEach(func(d uint32) bool {
		if int64(d) <= prev || !ref[d] || !oref[d] {
			t.Fatalf("ForEach gave %d (prev %d) not in both sets", d, prev)
		}
		prev = int64(d)
		n++
		return true
	})
	want := 0
	for d := range ref {
		if oref[d] {
			want++
		}
	}
	if n != want {
		t.Fatalf("intersection has %d, want %d", n, want)
	}
	diff := s.Clone()
	diff.AndNot(o)
	for d := uint32(0); d < 800; d++ {
		if want := ref[d] && !oref[d]; diff.Has(d) != want {
			t.Fatalf("AndNot: Has(%d) = %v, want %v", d, diff.Has(d), want)
		}
	}
	var nilSet *Set
	if !nilSet.Has(12345) {
		t.Fatal("nil set must contain everything")
	}
}
