// Package docset is a dense bitset over internal document numbers: the allowed
// set a filter compiles to, which both recall legs consult before scoring.
package docset

import "math/bits"

// Set is a bitset of document numbers. The zero value is empty. A nil *Set
// passed to a leg means "every document".
type Set struct {
	words []uint64
}

// New returns an empty set sized for documents below n.
func New(n int) *Set { return &Set{words: make([]uint64, (n+63)/64)} }

// Add puts doc in the set.
func (s *Set) Add(doc uint32) {
	w := int(doc >> 6)
	if old := len(s.words); w >= old {
		if w < cap(s.words) { // amortised: reuse the spare capacity
			s.words = s.words[:w+1]
			clear(s.words[old:])
		} else {
			grown := make([]uint64, w+1, max(2*cap(s.words), w+1))
			copy(grown, s.words)
			s.words = grown
		}
	}
	s.words[w] |= 1 << (doc & 63)
}

// Remove takes doc out of the set.
func (s *Set) Remove(doc uint32) {
	if w := int(doc >> 6); w < len(s.words) {
		s.words[w] &^= 1 << (doc & 63)
	}
}

// Has reports whether doc is in the set. A nil set has everything.
func (s *Set) Has(doc uint32) bool {
	if s == nil {
		return true
	}
	w := int(doc >> 6)
	return w < len(s.words) && s.words[w]&(1<<(doc&63)) != 0
}

// Len counts the members.
func (s *Set) Len() int {
	n := 0
	for _, w := range s.words {
		n += bits.OnesCount64(w)
	}
	return n
}

// Clone returns an independent copy.
func (s *Set) Clone() *Set { return &Set{words: append([]uint64(nil), s.words...)} }

// And keeps only the members also in o.
func (s *Set) And(o *Set) {
	for i := range s.words {
		if i < len(o.words) {
			s.words[i] &= o.words[i]
		} else {
			s.words[i] = 0
		}
	}
}

// AndNot removes the members of o.
func (s *Set) AndNot(o *Set) {
	for i := range min(len(s.words), len(o.words)) {
		s.words[i] &^= o.words[i]
	}
}

// ForEach calls fn for every member in increasing order until fn returns false.
func (s *Set) ForEach(fn func(doc uint32) bool) {
	for i, w := range s.words {
		for w != 0 {
			t := bits.TrailingZeros64(w)
			if !fn(uint32(i<<6 | t)) {
				return
			}
			w &= w - 1
		}
	}
}

// Bytes is the set's memory: its words' capacity.
func (s *Set) Bytes() int64 { return 24 + 8*int64(cap(s.words)) }
