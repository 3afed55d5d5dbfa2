package bm25

import "unsafe"

// Bytes estimates the index's memory on the heap: term names and the
// dictionary, inverted lists, per-document term lists and lengths (slice
// capacities; map entries at their share of the table). Arrays mapped from a
// snapshot are MappedBytes.
func (ix *Index) Bytes() int64 {
	heap, _ := ix.footprint()
	return heap
}

// MappedBytes is the part of the lists and term lists that is mapped from a
// snapshot: file pages, resident as far as touched.
func (ix *Index) MappedBytes() int64 {
	_, mapped := ix.footprint()
	return mapped
}

func (ix *Index) footprint() (n, mapped int64) {
	// arr counts an array of size bytes at p as heap or mapped.
	arr := func(p unsafe.Pointer, size int64) int64 {
		if size > 0 && ix.maps.Has(p) {
			mapped += size
			return 0
		}
		return size
	}
	n = 8 * int64(cap(ix.terms.slots))
	for _, s := range ix.names {
		n += 16 + int64(len(s))
	}
	n += 16 * int64(cap(ix.names)-len(ix.names))
	for i := range ix.lists {
		l := &ix.lists[i]
		n += int64(unsafe.Sizeof(*l)) + arr(unsafe.Pointer(unsafe.SliceData(l.docs)), 4*int64(cap(l.docs))) + arr(unsafe.Pointer(unsafe.SliceData(l.codes)), int64(cap(l.codes)))
		if bl := l.long; bl != nil {
			n += int64(unsafe.Sizeof(*bl)) + int64(unsafe.Sizeof(block{}))*int64(cap(bl.blks)) + 4*int64(cap(bl.lasts))
			for _, b := range bl.blks {
				n += arr(unsafe.Pointer(unsafe.SliceData(b.docs)), 4*int64(cap(b.docs))) + arr(unsafe.Pointer(unsafe.SliceData(b.codes)), int64(cap(b.codes)))
			}
		}
	}
	n += int64(unsafe.Sizeof(postings{})) * int64(cap(ix.lists)-len(ix.lists))
	for _, dts := range ix.docTerms {
		n += 24 + arr(unsafe.Pointer(unsafe.SliceData(dts)), 4*int64(cap(dts)))
	}
	n += 48 * int64(len(ix.tfCode)+len(ix.bigTF))
	n += 4*int64(cap(ix.docLen)+cap(ix.free)) + int64(cap(ix.present))
	return n, mapped
}
