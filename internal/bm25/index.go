package bm25

// The index: for each term an inverted list of documents in ascending order,
// each with a one-byte code for its weighted term frequency, one pair of
// arrays up to 512 postings and cut into blocks of at most 512 past that
// (postings.go), and for each document its length and the sorted ids of its
// terms. A posting costs about 9 bytes (doc 4, code 1, the document's term id
// 4, and a long list's block headers, a fraction of a byte). The term ids let
// Remove find the document's postings (a binary search over the blocks' last
// docs, then in one block) and let a replacement update in place the
// postings of the terms it keeps, so nothing leaks as documents come and go.
// The lists' order makes probing a document a binary search and intersecting
// with a sorted set a merge; the blocks make a single write cheap at any
// size, since a posting inserted or removed moves at most its block, while
// bulk loads, which add documents in ascending order, only append.
//
// Weighted frequencies are few distinct values (a sum of field weights times
// small counts), so the index interns them: codes 1..maxCodes name a value in
// a 256-entry table, and code 0 (escape) sends the lookup to a map keyed by
// (term, doc) once the table is full. Every score is computed from the exact
// float64 frequency, as before.

import (
	"math"
	"slices"
	"sync"

	"github.com/engram-memory/engram/internal/binenc"
)

// maxCodes is the number of interned frequency values (codes 1..maxCodes).
const maxCodes = 255

// Index is an inverted index with BM25 ranking. Search, UpperBound, Score,
// Len and Params may run from many goroutines at once; Add and Remove modify
// the index and must be serialised with everything else by the caller (hold
// a write lock for them and a read lock for searches). An Index must not be
// copied after first use.
type Index struct {
	p Params

	terms dict       // term → term id (dict.go)
	names []string   // term id → term, "" when the id is free
	lists []postings // term id → inverted list
	free  []uint32   // term ids whose term left the index, for reuse

	// Frequency codes: tfTab[c] for c in 1..nCodes is the value of code c
	// (tfTab[0] is 0, so a lookup reads 0 for an escaped posting), tfCode its
	// inverse by bits, bigTF the escaped postings' values by tfKey.
	tfTab    [256]float64
	nCodes   int
	maxCodes int // maxCodes; tests lower it to exercise escapes
	blockCap int // blockSize; tests lower it (>= 2) to exercise splits
	tfCode   map[uint64]uint8
	bigTF    map[uint64]float64

	docTerms [][]uint32 // doc → its distinct terms' ids, ascending
	docLen   []uint32   // doc → tokens over all fields (weighted by LengthWeights when set)
	present  []bool     // doc → indexed
	n        int        // indexed documents
	totalLen int64      // Σ docLen over indexed documents

	addTF   map[string]float64 // Add's scratch: term → weighted frequency
	addNew  []newTerm          // AddTerms' scratch
	scratch sync.Pool          // *accumulator for term-at-a-time search

	gen   uint64     // counts changes, for the domain statistics cache
	cache statsCache // per-domain statistics (domain.go)

	maps binenc.Mappings // arrays mapped from a snapshot (snapshot.go), unmapped with the index
}

// newTerm is a term of a document being added, with its weighted frequency.
type newTerm struct {
	id uint32
	v  float64
}

// New returns an empty index with len(p.FieldWeights) fields. Out-of-range
// parameters are replaced as documented on Params.
func New(p Params) *Index {
	return &Index{
		p:        p.sanitize(),
		terms:    newDict(0),
		addTF:    make(map[string]float64),
		tfCode:   make(map[uint64]uint8),
		maxCodes: maxCodes,
		blockCap: blockSize,
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
	var weighted float64 // the length with LengthWeights
	for f, toks := range fields[:min(len(fields), len(ix.p.FieldWeights))] {
		w := ix.p.FieldWeights[f]
		n := 0
		for _, t := range toks {
			if t == "" {
				continue
			}
			tf[t] += w
			n++
		}
		dl += int64(n)
		if ix.p.LengthWeights != nil {
			weighted += float64(n) * ix.p.LengthWeights[f]
		}
	}
	if ix.p.LengthWeights != nil {
		dl = int64(math.Min(math.Round(weighted), math.MaxUint32))
	}
	return Terms{tf: tf, dl: dl}
}

// AddTerms indexes doc from counted terms; see Add. Replacing a document
// updates the postings of the terms both versions hold in place and adds or
// removes only the others'.
func (ix *Index) AddTerms(doc uint32, d Terms) {
	ix.gen++
	if int(doc) >= len(ix.present) {
		grow := int(doc) + 1 - len(ix.present)
		ix.present = append(ix.present, make([]bool, grow)...)
		ix.docLen = append(ix.docLen, make([]uint32, grow)...)
		ix.docTerms = append(ix.docTerms, make([][]uint32, grow)...)
	}
	nts := ix.addNew[:0]
	for t, v := range d.tf {
		nts = append(nts, newTerm{id: ix.termID(t), v: v})
	}
	slices.SortFunc(nts, func(a, b newTerm) int {
		switch {
		case a.id < b.id:
			return -1
		case a.id > b.id:
			return 1
		}
		return 0
	})

	// Merge the old term list (empty when doc is absent) with the new one.
	old := ix.docTerms[doc]
	ids := make([]uint32, 0, len(nts))
	i, j := 0, 0
	for i < len(old) || j < len(nts) {
		switch {
		case j == len(nts) || (i < len(old) && old[i] < nts[j].id): // old only
			ix.drop(old[i], doc)
			i++
		case i == len(old) || nts[j].id < old[i]: // new only
			l := &ix.lists[nts[j].id]
			l.df++
			if nts[j].v > 0 {
				ix.setPosting(l, nts[j].id, doc, nts[j].v)
			}
			ids = append(ids, nts[j].id)
			j++
		default: // both: df unchanged, the posting updated
			id := old[i]
			l := &ix.lists[id]
			if nts[j].v > 0 {
				ix.setPosting(l, id, doc, nts[j].v)
			} else {
				ix.unlink(l, id, doc)
			}
			ids = append(ids, id)
			i++
			j++
		}
	}
	clear(nts)
	ix.addNew = nts[:0]

	if ix.present[doc] {
		ix.totalLen -= int64(ix.docLen[doc])
	} else {
		ix.n++
	}
	ix.docTerms[doc] = ids
	ix.docLen[doc] = uint32(min(d.dl, math.MaxUint32))
	ix.present[doc] = true
	ix.totalLen += int64(ix.docLen[doc])
}

// termID returns t's id, allocating one (reusing a freed id first).
func (ix *Index) termID(t string) uint32 {
	if id, ok := ix.terms.find(ix.names, t); ok {
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
	ix.terms.insert(t, id)
	return id
}

// Remove deletes doc from the index; removing an absent doc does nothing.
// Postings are removed from their lists, so memory follows the live
// documents. The caller must hold its write lock.
func (ix *Index) Remove(doc uint32) {
	if int(doc) >= len(ix.present) || !ix.present[doc] {
		return
	}
	ix.gen++
	for _, id := range ix.docTerms[doc] {
		ix.drop(id, doc)
	}
	ix.n--
	ix.totalLen -= int64(ix.docLen[doc])
	ix.docTerms[doc] = nil
	ix.docLen[doc] = 0
	ix.present[doc] = false
}

// drop takes doc out of term id: its posting if it has one, and its count in
// the document frequency, freeing the term when no document holds it.
func (ix *Index) drop(id, doc uint32) {
	l := &ix.lists[id]
	ix.unlink(l, id, doc)
	l.df--
	if l.df <= 0 {
		ix.terms.remove(ix.names[id], id)
		ix.names[id] = ""
		*l = postings{}
		ix.free = append(ix.free, id)
	}
}

// tfKey is an escaped posting's key in bigTF.
func tfKey(id, doc uint32) uint64 { return uint64(id)<<32 | uint64(doc) }

// code returns the frequency code of v, interning it while the table has
// room, else 0 (escape).
func (ix *Index) code(v float64) uint8 {
	b := math.Float64bits(v)
	if c, ok := ix.tfCode[b]; ok {
		return c
	}
	if ix.nCodes >= ix.maxCodes {
		return 0
	}
	ix.nCodes++
	c := uint8(ix.nCodes)
	ix.tfTab[c] = v
	ix.tfCode[b] = c
	return c
}

// setPosting gives doc the frequency v > 0 in term id's list l, inserting
// the posting in order or updating the one it has.
func (ix *Index) setPosting(l *postings, id, doc uint32, v float64) {
	c := ix.code(v)
	if c == 0 {
		if ix.bigTF == nil {
			ix.bigTF = make(map[uint64]float64)
		}
		ix.bigTF[tfKey(id, doc)] = v
	}
	if old, had := l.put(doc, c, ix.blockCap); had && old == 0 && c != 0 {
		delete(ix.bigTF, tfKey(id, doc))
	}
}

// unlink removes doc's posting from term id's list l, if it has one (it has
// none when the term is only in zero-weight fields of doc).
func (ix *Index) unlink(l *postings, id, doc uint32) {
	if old, had := l.remove(doc, ix.blockCap); had && old == 0 {
		delete(ix.bigTF, tfKey(id, doc))
	}
}

// tfAt returns the weighted frequency of term id's posting with code c for
// doc.
func (ix *Index) tfAt(id, doc uint32, c uint8) float64 {
	if c != 0 {
		return ix.tfTab[c]
	}
	return ix.bigTF[tfKey(id, doc)]
}

// findTerm binary-searches a document's sorted term ids.
func findTerm(ids []uint32, term uint32) bool {
	_, ok := slices.BinarySearch(ids, term)
	return ok
}
