package bm25

import "unsafe"

// Bytes estimates the index's memory: term names and the dictionary,
// inverted lists, per-document term lists and lengths (slice capacities; map
// entries at their share of the table).
func (ix *Index) Bytes() int64 {
	n := 8 * int64(cap(ix.terms.slots))
	for _, s := range ix.names {
		n += 16 + int64(len(s))
	}
	n += 16 * int64(cap(ix.names)-len(ix.names))
	for i := range ix.lists {
		l := &ix.lists[i]
		n += int64(unsafe.Sizeof(*l)) + 4*int64(cap(l.docs)) + int64(cap(l.codes))
		if bl := l.long; bl != nil {
			n += int64(unsafe.Sizeof(*bl)) + int64(unsafe.Sizeof(block{}))*int64(cap(bl.blks)) + 4*int64(cap(bl.lasts))
			for _, b := range bl.blks {
				n += 4*int64(cap(b.docs)) + int64(cap(b.codes))
			}
		}
	}
	n += int64(unsafe.Sizeof(postings{})) * int64(cap(ix.lists)-len(ix.lists))
	for _, dts := range ix.docTerms {
		n += 24 + 4*int64(cap(dts))
	}
	n += 48 * int64(len(ix.tfCode)+len(ix.bigTF))
	n += 4*int64(cap(ix.docLen)+cap(ix.free)) + int64(cap(ix.present))
	return n
}
