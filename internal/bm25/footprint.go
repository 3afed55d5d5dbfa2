package bm25

import "unsafe"

// Bytes estimates the index's memory: term names and ids, inverted lists,
// per-document term lists and lengths (slice capacities; map entries at their
// share of the table).
func (ix *Index) Bytes() int64 {
	var n int64
	for _, s := range ix.names {
		n += 16 + int64(len(s)) + 40 // the name, and its entry in terms
	}
	n += 16 * int64(cap(ix.names)-len(ix.names))
	for i := range ix.lists {
		l := &ix.lists[i]
		n += int64(unsafe.Sizeof(*l)) + 4*int64(cap(l.docs)) + int64(unsafe.Sizeof(l.tfs[:1][0]))*int64(cap(l.tfs))
	}
	for _, dts := range ix.docTerms {
		n += 24 + int64(unsafe.Sizeof(docTerm{}))*int64(cap(dts))
	}
	n += 4*int64(cap(ix.docLen)+cap(ix.free)) + int64(cap(ix.present))
	return n
}
