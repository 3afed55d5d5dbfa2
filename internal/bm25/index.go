package bm25

// The index: for each term an unordered inverted list of (document,
// pre-weighted term frequency), and for each document its length and its
// term list with the position of each of its postings, so that Remove
// swap-deletes exactly the document's postings and nothing leaks as
// documents come and go.

import (
	"cmp"
	"math"
	"slices"
	"sync"
)

// noPosting marks a docTerm whose term occurs in the document only in
// zero-weight fields: it counts towards the term's document frequency (as in
// FTS5) but has no posting, since it could only ever contribute 0.
const noPosting = math.MaxUint32

// postings is one term's inverted list, unordered: doc numbers with their
// pre-weighted term frequencies, plus the term's document frequency.
type postings struct {
	docs []uint32
	tfs  []float64 // Σ_f w_f · count of the term in field f, always > 0
	df   int       // documents containing the term in any field
}

// docTerm records that a document contains term, and where its posting sits
// in the term's list (noPosting if it has none), so Remove is O(terms in doc).
type docTerm struct {
	term uint32
	pos  uint32
}

// Index is an inverted index with BM25 ranking. Search, UpperBound, Score,
// Len and Params may run from many goroutines at once; Add and Remove modify
// the index and must be serialised with everything else by the caller (hold
// a write lock for them and a read lock for searches). An Index must not be
// copied after first use.
type Index struct {
	p Params

	terms map[string]uint32 // term → term id
	names []string          // term id → term, "" when the id is free
	lists []postings        // term id → inverted list
	free  []uint32          // term ids whose term left the index, for reuse

	docTerms [][]docTerm // doc → its distinct terms, sorted by term id
	docLen   []uint32    // doc → tokens over all fields (unweighted)
	present  []bool      // doc → indexed
	n        int         // indexed documents
	totalLen int64       // Σ docLen over indexed documents

	addTF   map[string]float64 // Add's scratch: term → weighted frequency
	scratch sync.Pool          // *accumulator for term-at-a-time search

	gen   uint64     // counts changes, for the domain statistics cache
	cache statsCache // per-domain statistics (domain.go)
}

// New returns an empty index with len(p.FieldWeights) fields. Out-of-range
// parameters are replaced as documented on Params.
func New(p Params) *Index {
	return &Index{
		p:     p.sanitize(),
		terms: make(map[string]uint32),
		addTF: make(map[string]float64),
	}
}

// Params returns the effective parameters (after sanitising).
func (ix *Index) Params() Params {
	p := ix.p
	p.FieldWeights = slices.Clone(p.FieldWeights)
	return p
}

// Len returns the number of indexed documents.
func (ix *Index) Len() int { return ix.n }

// DocLen returns doc's length in tokens over all fields (0 when absent).
func (ix *Index) DocLen(doc uint32) int {
	if int(doc) >= len(ix.docLen) {
		return 0
	}
	return int(ix.docLen[doc])
}

// avgdl is the mean document length over indexed documents, 0 when empty.
func (ix *Index) avgdl() float64 {
	if ix.n == 0 {
		return 0
	}
	return float64(ix.totalLen) / float64(ix.n)
}

// Add indexes document doc with fields[i] the tokens of field i, replacing
// any earlier version of doc. Fields beyond len(FieldWeights) are ignored and
// missing ones are empty; empty-string tokens are skipped. Document numbers
// should be dense (the index keeps arrays sized by the largest one) and may
// be reused after Remove. The caller must hold its write lock.
func (ix *Index) Add(doc uint32, fields [][]string) {
	clear(ix.addTF)
	ix.AddTerms(doc, ix.count(ix.addTF, fields))
}

// Terms is a document's weighted term frequencies and length: what Add
// needs from its tokens. Making it is the costly part of Add and needs no
// lock, so loaders count documents on several goroutines (Count) and add them
// with AddTerms under the write lock.
type Terms struct {
	tf map[string]float64
	dl int64
}

// Count computes a document's Terms. It only reads the index's parameters and
// is safe to call concurrently with anything but a parameter change.
func (ix *Index) Count(fields [][]string) Terms {
	return ix.count(make(map[string]float64, 32), fields)
}

func (ix *Index) count(tf map[string]float64, fields [][]string) Terms {
	var dl int64
	for f, toks := range fields[:min(len(fields), len(ix.p.FieldWeights))] {
		w := ix.p.FieldWeights[f]
		for _, t := range toks {
			if t == "" {
				continue
			}
			tf[t] += w
			dl++
		}
	}
	return Terms{tf: tf, dl: dl}
}

// AddTerms indexes doc from counted terms; see Add.
func (ix *Index) AddTerms(doc uint32, d Terms) {
	ix.Remove(doc)
	ix.gen++
	if int(doc) >= len(ix.present) {
		grow := int(doc) + 1 - len(ix.present)
		ix.present = append(ix.present, make([]bool, grow)...)
		ix.docLen = append(ix.docLen, make([]uint32, grow)...)
		ix.docTerms = append(ix.docTerms, make([][]docTerm, grow)...)
	}
	dts := make([]docTerm, 0, len(d.tf))
	for t, v := range d.tf {
		id := ix.termID(t)
		l := &ix.lists[id]
		l.df++
		pos := uint32(noPosting)
		if v > 0 {
			pos = uint32(len(l.docs))
			l.docs = append(l.docs, doc)
			l.tfs = append(l.tfs, v)
		}
		dts = append(dts, docTerm{term: id, pos: pos})
	}
	slices.SortFunc(dts, func(a, b docTerm) int { return cmp.Compare(a.term, b.term) })

	ix.docTerms[doc] = dts
	ix.docLen[doc] = uint32(min(d.dl, math.MaxUint32))
	ix.present[doc] = true
	ix.n++
	ix.totalLen += int64(ix.docLen[doc])
}

// termID returns t's id, allocating one (reusing a freed id first).
func (ix *Index) termID(t string) uint32 {
	if id, ok := ix.terms[t]; ok {
		return id
	}
	var id uint32
	if k := len(ix.free); k > 0 {
		id = ix.free[k-1]
		ix.free = ix.free[:k-1]
		ix.names[id] = t
	} else {
		id = uint32(len(ix.names))
		ix.names = append(ix.names, t)
		ix.lists = append(ix.lists, postings{})
	}
	ix.terms[t] = id
	return id
}

// Remove deletes doc from the index; removing an absent doc does nothing.
// Postings are swap-removed, so memory follows the live documents. The
// caller must hold its write lock.
func (ix *Index) Remove(doc uint32) {
	if int(doc) >= len(ix.present) || !ix.present[doc] {
		return
	}
	ix.gen++
	for _, dt := range ix.docTerms[doc] {
		l := &ix.lists[dt.term]
		l.df--
		if dt.pos != noPosting {
			ix.unlink(l, dt)
		}
		if l.df == 0 {
			delete(ix.terms, ix.names[dt.term])
			ix.names[dt.term] = ""
			*l = postings{}
			ix.free = append(ix.free, dt.term)
		}
	}
	ix.n--
	ix.totalLen -= int64(ix.docLen[doc])
	ix.docTerms[doc] = nil
	ix.docLen[doc] = 0
	ix.present[doc] = false
}

// unlink swap-removes the posting at dt.pos from l, repointing the docTerm of
// the document whose posting moves into the hole.
func (ix *Index) unlink(l *postings, dt docTerm) {
	last := uint32(len(l.docs) - 1)
	if dt.pos != last {
		moved := l.docs[last]
		l.docs[dt.pos] = moved
		l.tfs[dt.pos] = l.tfs[last]
		mts := ix.docTerms[moved]
		if i, ok := findTerm(mts, dt.term); ok {
			mts[i].pos = dt.pos
		}
	}
	l.docs = l.docs[:last]
	l.tfs = l.tfs[:last]
	// Give back memory when a list has shrunk to a quarter of its capacity.
	if c := cap(l.docs); c > 64 && len(l.docs) < c/4 {
		l.docs = slices.Clip(slices.Clone(l.docs))
		l.tfs = slices.Clip(slices.Clone(l.tfs))
	}
}

// findTerm binary-searches a document's sorted term list.
func findTerm(dts []docTerm, term uint32) (int, bool) {
	lo, hi := 0, len(dts)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if dts[m].term < term {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < len(dts) && dts[lo].term == term
}
