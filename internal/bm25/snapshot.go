package bm25

// Snapshots: the index written to and read back from a binenc stream, so a
// store opens without re-tokenizing every document. Inverted lists are written
// flat, in term-id order and in their in-memory (unordered) order, so a loaded
// index is the same structure, posting for posting, as the one written; each
// document's term list is rebuilt from the lists rather than trusted.

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/engram-memory/engram/internal/binenc"
)

// snapshotVersion changes whenever the layout below does.
const snapshotVersion = 1

// WriteSnapshot writes the index to w. The caller holds at least a read lock.
func (ix *Index) WriteSnapshot(w *binenc.Writer) {
	w.Uint32(snapshotVersion)
	writeParams(w, ix.p)
	w.Strings(ix.names)
	w.Uint32s(ix.free)
	w.Uint32s(ix.docLen)
	present := make([]uint32, 0, ix.n)
	for doc, ok := range ix.present {
		if ok {
			present = append(present, uint32(doc))
		}
	}
	w.Uint32s(present)
	w.Int64(ix.totalLen)

	// Per term: its document frequency and its posting count, then every
	// list's docs and weighted frequencies end to end, then the documents that
	// hold a term only in zero-weight fields (they count in df, with no posting).
	dfs := make([]uint32, len(ix.lists))
	lens := make([]uint32, len(ix.lists))
	var total int
	for id := range ix.lists {
		dfs[id] = uint32(ix.lists[id].df)
		lens[id] = uint32(len(ix.lists[id].docs))
		total += len(ix.lists[id].docs)
	}
	w.Uint32s(dfs)
	w.Uint32s(lens)
	w.Uint64(uint64(total))
	for id := range ix.lists {
		w.RawUint32s(ix.lists[id].docs)
	}
	w.Uint64(uint64(total))
	for id := range ix.lists {
		w.RawFloat64s(ix.lists[id].tfs)
	}
	var zero []uint32 // pairs: term, doc
	for doc, dts := range ix.docTerms {
		for _, dt := range dts {
			if dt.pos == noPosting {
				zero = append(zero, dt.term, uint32(doc))
			}
		}
	}
	w.Uint32s(zero)
}

// ReadSnapshot replaces the contents of ix, which must be empty, with an index
// read from r. The snapshot must have been written with the same parameters
// as ix has; any inconsistency is an error recorded in r (and returned), after
// which ix must be discarded.
func (ix *Index) ReadSnapshot(r *binenc.Reader) error {
	if ix.n != 0 || len(ix.names) != 0 {
		return fmt.Errorf("bm25: read snapshot into a non-empty index")
	}
	if v := r.Uint32(); r.Err() == nil && v != snapshotVersion {
		r.Corruptf("bm25 snapshot version %d, want %d", v, snapshotVersion)
	}
	if p := readParams(r); r.Err() == nil && !sameParams(p, ix.p) {
		r.Corruptf("bm25 snapshot parameters %+v differ from %+v", p, ix.p)
	}
	names := r.Strings()
	free := r.Uint32s()
	docLen := r.Uint32s()
	presentDocs := r.Uint32s()
	totalLen := r.Int64()
	dfs := r.Uint32s()
	lens := r.Uint32s()
	docs := r.Uint32s()
	tfs := r.Float64s()
	zero := r.Uint32s()
	if r.Err() != nil {
		return r.Err()
	}
	nt, nd := len(names), len(docLen)
	if len(dfs) != nt || len(lens) != nt || len(docs) != len(tfs) || len(zero)%2 != 0 {
		r.Corruptf("bm25 snapshot array lengths disagree")
		return r.Err()
	}

	present := make([]bool, nd)
	var sum int64
	for _, d := range presentDocs {
		if int(d) >= nd || present[d] {
			r.Corruptf("bm25 snapshot: bad present document %d", d)
			return r.Err()
		}
		present[d] = true
		sum += int64(docLen[d])
	}
	if sum != totalLen {
		r.Corruptf("bm25 snapshot: total length %d, documents sum to %d", totalLen, sum)
		return r.Err()
	}
	for d, ok := range present {
		if !ok && docLen[d] != 0 {
			r.Corruptf("bm25 snapshot: absent document %d has a length", d)
			return r.Err()
		}
	}

	// Count each document's terms, then carve its list out of one array.
	perDoc := make([]uint32, nd)
	for _, d := range docs {
		if int(d) >= nd || !present[d] {
			r.Corruptf("bm25 snapshot: posting for absent document %d", d)
			return r.Err()
		}
		perDoc[d]++
	}
	for i := 0; i < len(zero); i += 2 {
		t, d := zero[i], zero[i+1]
		if int(t) >= nt || int(d) >= nd || !present[d] {
			r.Corruptf("bm25 snapshot: bad zero-weight entry (%d, %d)", t, d)
			return r.Err()
		}
		perDoc[d]++
	}
	backing := make([]docTerm, len(docs)+len(zero)/2)
	docTerms := make([][]docTerm, nd)
	var off int
	for d, c := range perDoc {
		if c > 0 {
			docTerms[d] = backing[off : off : off+int(c)]
			off += int(c)
		}
	}

	lists := make([]postings, nt)
	terms := make(map[string]uint32, nt-len(free))
	zeroDF := make([]uint32, nt)
	for i := 0; i < len(zero); i += 2 {
		zeroDF[zero[i]]++
	}
	var at int
	for id := range nt {
		n := int(lens[id])
		if n > len(docs)-at {
			r.Corruptf("bm25 snapshot: list %d overruns the postings", id)
			return r.Err()
		}
		l := &lists[id]
		l.docs = docs[at : at+n : at+n]
		l.tfs = tfs[at : at+n : at+n]
		l.df = int(dfs[id])
		if uint64(l.df) != uint64(n)+uint64(zeroDF[id]) {
			r.Corruptf("bm25 snapshot: term %d has df %d but %d postings", id, l.df, uint64(n)+uint64(zeroDF[id]))
			return r.Err()
		}
		name := names[id]
		if (name == "") != (l.df == 0) {
			r.Corruptf("bm25 snapshot: term %d is half free", id)
			return r.Err()
		}
		if name != "" {
			if _, dup := terms[name]; dup {
				r.Corruptf("bm25 snapshot: term %q twice", name)
				return r.Err()
			}
			terms[name] = uint32(id)
		}
		for pos, d := range l.docs {
			if !(l.tfs[pos] > 0) || math.IsInf(l.tfs[pos], 0) {
				r.Corruptf("bm25 snapshot: bad frequency in term %d", id)
				return r.Err()
			}
			dts := docTerms[d]
			if k := len(dts); k > 0 && dts[k-1].term == uint32(id) {
				r.Corruptf("bm25 snapshot: document %d twice in term %d", d, id)
				return r.Err()
			}
			docTerms[d] = append(dts, docTerm{term: uint32(id), pos: uint32(pos)})
		}
		at += n
	}
	if at != len(docs) {
		r.Corruptf("bm25 snapshot: %d postings belong to no term", len(docs)-at)
		return r.Err()
	}
	if len(zero) > 0 {
		for i := 0; i < len(zero); i += 2 {
			t, d := zero[i], zero[i+1]
			docTerms[d] = append(docTerms[d], docTerm{term: t, pos: noPosting})
		}
		for d, dts := range docTerms {
			slices.SortFunc(dts, func(a, b docTerm) int { return cmp.Compare(a.term, b.term) })
			for i := 1; i < len(dts); i++ {
				if dts[i].term == dts[i-1].term {
					r.Corruptf("bm25 snapshot: document %d holds term %d twice", d, dts[i].term)
					return r.Err()
				}
			}
		}
	}
	isFree := make([]bool, nt)
	for _, id := range free {
		if int(id) >= nt || names[id] != "" || isFree[id] {
			r.Corruptf("bm25 snapshot: bad free term %d", id)
			return r.Err()
		}
		isFree[id] = true
	}
	for id, name := range names {
		if name == "" && !isFree[id] {
			r.Corruptf("bm25 snapshot: free term %d is not listed", id)
			return r.Err()
		}
	}

	ix.terms, ix.names, ix.lists, ix.free = terms, names, lists, free
	ix.docTerms, ix.docLen, ix.present = docTerms, docLen, present
	ix.n, ix.totalLen = len(presentDocs), totalLen
	return nil
}

func writeParams(w *binenc.Writer, p Params) {
	w.Float64(p.K1)
	w.Float64(p.B)
	w.Float64s(p.FieldWeights)
	w.Uint32(uint32(p.IDF))
}

func readParams(r *binenc.Reader) Params {
	return Params{K1: r.Float64(), B: r.Float64(), FieldWeights: r.Float64s(), IDF: IDF(r.Uint32())}
}

// sameParams compares parameters bit for bit (a snapshot is only used by an
// index configured exactly as the one that wrote it).
func sameParams(a, b Params) bool {
	same := func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) }
	return same(a.K1, b.K1) && same(a.B, b.B) && a.IDF == b.IDF &&
		slices.EqualFunc(a.FieldWeights, b.FieldWeights, same)
}

// WriteParams writes p in the snapshot's encoding, for headers that must
// name the parameters an index was built with.
func WriteParams(w *binenc.Writer, p Params) { writeParams(w, p) }

// ReadParams reads what WriteParams wrote.
func ReadParams(r *binenc.Reader) Params { return readParams(r) }

// SameParams reports whether a and b are bit-for-bit the same parameters.
func SameParams(a, b Params) bool { return sameParams(a, b) }

// Has reports whether doc is indexed, so that a loader can check a snapshot's
// documents against its own.
func (ix *Index) Has(doc uint32) bool { return int(doc) < len(ix.present) && ix.present[doc] }
