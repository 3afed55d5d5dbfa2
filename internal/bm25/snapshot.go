package bm25

// Snapshots: the index written to and read back from a binenc stream, so a
// store opens without re-tokenizing every document. Every structure is
// written flat (a list's blocks end to end, so the layout does not depend on
// the block size) and read back with bulk reads into a few large arrays that
// the lists' blocks and the term lists are carved out of: loading costs
// O(terms + documents) allocations and one sequential pass over the postings
// to validate them. Validation keeps a corrupt snapshot from becoming an
// index that later misbehaves: every list strictly ascending over indexed
// documents, every term list strictly ascending over live terms, codes inside
// the table, and the two views of the (document, term) pairs the same set,
// checked by comparing a keyed hash summed over each (the key is random per
// load, so no file can be made to collide).

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"unsafe"

	"github.com/engram-memory/engram/internal/binenc"
)

// snapshotVersion changes whenever the layout below does.
// 3: the postings' documents and codes and the documents' term ids mappable.
// 4: the parameters carry the length weights.
const snapshotVersion = 4

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
	w.Float64s(ix.tfTab[1 : 1+ix.nCodes])

	// Per term its posting count, then every list's docs and codes end to
	// end; the escaped postings' values by (term, doc); the documents that
	// hold a term only in zero-weight fields (they count in df, with no
	// posting) as (term, doc) pairs; per document its term count, then every
	// document's term ids end to end.
	lens := make([]uint32, len(ix.lists))
	var total int
	for id := range ix.lists {
		lens[id] = uint32(ix.lists[id].size())
		total += ix.lists[id].size()
	}
	w.Uint32s(lens)
	w.MappableLen(4 * total)
	for id := range ix.lists {
		var one [1]block
		for _, b := range ix.lists[id].blocks(&one) {
			w.RawUint32s(b.docs)
		}
	}
	w.MappableLen(total)
	for id := range ix.lists {
		var one [1]block
		for _, b := range ix.lists[id].blocks(&one) {
			w.RawBytes(b.codes)
		}
	}
	keys := make([]uint64, 0, len(ix.bigTF))
	for k := range ix.bigTF {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	vals := make([]float64, len(keys))
	for i, k := range keys {
		vals[i] = ix.bigTF[k]
	}
	w.Uint64s(keys)
	w.Float64s(vals)
	// A term without a posting needs a zero-weight field, so without one
	// there is nothing to look for.
	var zero []uint32 // pairs: term, doc
	hasZero := slices.Contains(ix.p.FieldWeights, 0)
	counts := make([]uint32, len(ix.docTerms))
	var terms int
	for doc, ids := range ix.docTerms {
		counts[doc] = uint32(len(ids))
		terms += len(ids)
		for _, id := range ids {
			if !hasZero {
				break
			}
			if _, ok := ix.lists[id].get(uint32(doc)); !ok {
				zero = append(zero, id, uint32(doc))
			}
		}
	}
	w.Uint32s(zero)
	w.Uint32s(counts)
	w.MappableLen(4 * terms)
	for _, ids := range ix.docTerms {
		w.RawUint32s(ids)
	}
}

// pairHash is a keyed hash of a (term, doc) pair: summed over a set of
// pairs, it tells two sets apart except with negligible probability.
func pairHash(key uint64, term, doc uint32) uint64 {
	x := (uint64(term)<<32 | uint64(doc)) ^ key
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
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
	names := r.StringsShared()
	free := r.Uint32s()
	docLen := r.Uint32s()
	presentDocs := r.Uint32s()
	totalLen := r.Int64()
	tab := r.Float64s()
	lens := r.Uint32s()
	// The three large arrays are mapped from the file when the reader maps
	// (the index's lists and term lists are carved out of them, and cloned
	// before they change size), unmapped once the index is unreachable.
	var maps binenc.Mappings
	docs, c := r.MappableUint32s()
	maps.Keep(unsafe.Pointer(unsafe.SliceData(docs)), 4*len(docs), c)
	codes, c := r.Mappable(0)
	maps.Keep(unsafe.Pointer(unsafe.SliceData(codes)), len(codes), c)
	escKeys := r.Uint64s()
	escVals := r.Float64s()
	zero := r.Uint32s()
	counts := r.Uint32s()
	termIDs, c := r.MappableUint32s()
	maps.Keep(unsafe.Pointer(unsafe.SliceData(termIDs)), 4*len(termIDs), c)
	if len(maps) > 0 {
		ix.maps = maps
		runtime.AddCleanup(ix, binenc.Mappings.Close, maps)
	}
	if r.Err() != nil {
		return r.Err()
	}
	nt, nd := len(names), len(docLen)
	if len(lens) != nt || len(docs) != len(codes) || len(escKeys) != len(escVals) ||
		len(zero)%2 != 0 || len(counts) != nd || len(tab) > ix.maxCodes {
		r.Corruptf("bm25 snapshot array lengths disagree")
		return r.Err()
	}

	present := make([]bool, nd)
	clear(present) // written before it is read: see dict.resize
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
		if !ok && (docLen[d] != 0 || counts[d] != 0) {
			r.Corruptf("bm25 snapshot: absent document %d has a length or terms", d)
			return r.Err()
		}
	}

	// The frequency table and the escaped values.
	tfCode := make(map[uint64]uint8, len(tab))
	for i, v := range tab {
		if !(v > 0) || math.IsInf(v, 0) {
			r.Corruptf("bm25 snapshot: bad frequency %v in the table", v)
			return r.Err()
		}
		if _, dup := tfCode[math.Float64bits(v)]; dup {
			r.Corruptf("bm25 snapshot: frequency %v twice in the table", v)
			return r.Err()
		}
		tfCode[math.Float64bits(v)] = uint8(i + 1)
	}
	var bigTF map[uint64]float64
	if len(escKeys) > 0 {
		bigTF = make(map[uint64]float64, len(escKeys))
		for i, k := range escKeys {
			if v := escVals[i]; !(v > 0) || math.IsInf(v, 0) || (i > 0 && k <= escKeys[i-1]) {
				r.Corruptf("bm25 snapshot: bad escaped frequency %d", i)
				return r.Err()
			}
			bigTF[k] = escVals[i]
		}
	}

	// Three independent passes, the dictionary and the documents' term lists
	// on their own goroutines: each returns "" or what is wrong.
	key := rand.Uint64()
	var (
		wg                  sync.WaitGroup
		terms               dict
		docTerms            [][]uint32
		hTerms              uint64
		dictErr, docTermErr string
	)
	wg.Add(2)
	go func() {
		defer wg.Done()
		terms, dictErr = buildDict(names, nt-len(free))
	}()
	go func() {
		defer wg.Done()
		docTerms, hTerms, docTermErr = readDocTerms(key, counts, termIDs, nt)
	}()
	lists, hPost, listErr := readLists(key, lens, docs, codes, bigTF, len(tab), nd, ix.blockCap)
	wg.Wait()
	for _, e := range []string{listErr, docTermErr, dictErr} {
		if e != "" {
			r.Corruptf("bm25 snapshot: %s", e)
			return r.Err()
		}
	}
	for i := 0; i < len(zero); i += 2 {
		t, d := zero[i], zero[i+1]
		if int(t) >= nt || int(d) >= nd || !present[d] {
			r.Corruptf("bm25 snapshot: bad zero-weight entry (%d, %d)", t, d)
			return r.Err()
		}
		lists[t].df++
		hPost += pairHash(key, t, d)
	}
	// The two views of the (term, doc) pairs are the same set: every posting
	// is in its document's term list (so its document is indexed, since an
	// absent one has no terms) and every term of a document has a posting or
	// a zero-weight entry.
	if hPost != hTerms || len(termIDs) != len(docs)+len(zero)/2 {
		r.Corruptf("bm25 snapshot: the documents' terms and the postings disagree")
		return r.Err()
	}

	// The terms: named iff some document holds them; the free ids listed.
	isFree := make([]bool, nt)
	for _, id := range free {
		if int(id) >= nt || names[id] != "" || isFree[id] {
			r.Corruptf("bm25 snapshot: bad free term %d", id)
			return r.Err()
		}
		isFree[id] = true
	}
	for id, name := range names {
		if (name == "") != (lists[id].df == 0) || (name == "") != isFree[id] {
			r.Corruptf("bm25 snapshot: term %d is half free", id)
			return r.Err()
		}
	}

	ix.terms, ix.names, ix.lists, ix.free = terms, names, lists, free
	ix.nCodes, ix.tfCode, ix.bigTF = len(tab), tfCode, bigTF
	copy(ix.tfTab[1:], tab)
	ix.docTerms, ix.docLen, ix.present = docTerms, docLen, present
	ix.n, ix.totalLen = len(presentDocs), totalLen
	return nil
}

// readLists carves the lists out of docs and codes, those longer than
// blockCap in blocks of blockCap postings (the last shorter), and checks
// them: each strictly ascending below nd, codes inside a table of nCodes,
// every escaped posting with a value. It returns the sum of pairHash over
// the postings.
func readLists(key uint64, lens, docs []uint32, codes []uint8, bigTF map[uint64]float64, nCodes, nd, blockCap int) ([]postings, uint64, string) {
	lists := make([]postings, len(lens))
	nblk, nlong := 0, 0
	for _, n := range lens {
		if int(n) > blockCap {
			nblk += (int(n) + blockCap - 1) / blockCap
			nlong++
		}
	}
	longs := make([]blockList, 0, nlong)
	blks := make([]block, nblk)
	lasts := make([]uint32, nblk)
	var at, atb, escaped int
	var h uint64
	for id, n32 := range lens {
		n := int(n32)
		if n > len(docs)-at {
			return nil, 0, fmt.Sprintf("list %d overruns the postings", id)
		}
		ds, cs := docs[at:at+n:at+n], codes[at:at+n:at+n]
		if n > 0 && int(ds[n-1]) >= nd {
			return nil, 0, fmt.Sprintf("list %d names document %d of %d", id, ds[n-1], nd)
		}
		prev := int64(-1)
		for i, d := range ds {
			if int64(d) <= prev {
				return nil, 0, fmt.Sprintf("list %d is out of order", id)
			}
			prev = int64(d)
			switch c := cs[i]; {
			case c == 0:
				if _, ok := bigTF[tfKey(uint32(id), d)]; !ok {
					return nil, 0, fmt.Sprintf("escaped posting (%d, %d) has no value", id, d)
				}
				escaped++
			case int(c) > nCodes:
				return nil, 0, fmt.Sprintf("code %d beyond the table of %d", c, nCodes)
			}
			h += pairHash(key, uint32(id), d)
		}
		l := &lists[id]
		l.df = n
		at += n
		if n <= blockCap {
			if n > 0 {
				l.docs, l.codes = ds, cs
			}
			continue
		}
		nb := (n + blockCap - 1) / blockCap
		longs = append(longs, blockList{blks: blks[atb : atb+nb : atb+nb], lasts: lasts[atb : atb+nb : atb+nb], n: n})
		l.long = &longs[len(longs)-1]
		for b := range nb {
			lo, hi := b*blockCap, min(n, (b+1)*blockCap)
			l.long.blks[b] = block{docs: ds[lo:hi:hi], codes: cs[lo:hi:hi]}
			l.long.lasts[b] = ds[hi-1]
		}
		atb += nb
	}
	if at != len(docs) {
		return nil, 0, fmt.Sprintf("%d postings belong to no term", len(docs)-at)
	}
	if escaped != len(bigTF) {
		return nil, 0, fmt.Sprintf("%d escaped values for %d escaped postings", len(bigTF), escaped)
	}
	return lists, h, ""
}

// readDocTerms carves each document's term list out of ids (counts[d] of
// them for document d) and checks each is strictly ascending below nt. It
// returns the sum of pairHash over the (term, doc) pairs.
func readDocTerms(key uint64, counts, ids []uint32, nt int) ([][]uint32, uint64, string) {
	docTerms := make([][]uint32, len(counts))
	var at int
	var h uint64
	for d, c := range counts {
		n := int(c)
		if n > len(ids)-at {
			return nil, 0, fmt.Sprintf("document %d's terms overrun the list", d)
		}
		own := ids[at : at+n : at+n]
		prev := int64(-1)
		for _, id := range own {
			if int64(id) <= prev || int(id) >= nt {
				return nil, 0, fmt.Sprintf("document %d's terms are out of order", d)
			}
			prev = int64(id)
			h += pairHash(key, id, uint32(d))
		}
		if n > 0 {
			docTerms[d] = own
		}
		at += n
	}
	if at != len(ids) {
		return nil, 0, fmt.Sprintf("%d term ids belong to no document", len(ids)-at)
	}
	return docTerms, h, ""
}

// buildDict makes the dictionary of the non-empty names, each at most once.
func buildDict(names []string, live int) (dict, string) {
	d := newDict(live)
	for id, name := range names {
		if name != "" && !d.add(names, name, uint32(id)) {
			return dict{}, fmt.Sprintf("term %q twice", name)
		}
	}
	return d, ""
}

func writeParams(w *binenc.Writer, p Params) {
	w.Float64(p.K1)
	w.Float64(p.B)
	w.Float64s(p.FieldWeights)
	w.Uint32(uint32(p.IDF))
	w.Bool(p.LengthWeights != nil)
	w.Float64s(p.LengthWeights)
}

func readParams(r *binenc.Reader) Params {
	p := Params{K1: r.Float64(), B: r.Float64(), FieldWeights: r.Float64s(), IDF: IDF(r.Uint32())}
	if has, lw := r.Bool(), r.Float64s(); has {
		p.LengthWeights = nonNilFloats(lw)
	}
	return p
}

// nonNilFloats is s, or an empty non-nil slice for nil.
func nonNilFloats(s []float64) []float64 {
	if s == nil {
		return []float64{}
	}
	return s
}

// sameParams compares parameters bit for bit (a snapshot is only used by an
// index configured exactly as the one that wrote it).
func sameParams(a, b Params) bool {
	same := func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) }
	return same(a.K1, b.K1) && same(a.B, b.B) && a.IDF == b.IDF &&
		slices.EqualFunc(a.FieldWeights, b.FieldWeights, same) &&
		(a.LengthWeights == nil) == (b.LengthWeights == nil) && slices.EqualFunc(a.LengthWeights, b.LengthWeights, same)
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

// Doc returns doc's indexed terms with their weighted frequencies and its
// length, read back from the inverted lists (nil when doc is absent): a
// slow accessor for tests that check an index against what it should hold.
func (ix *Index) Doc(doc uint32) (map[string]float64, uint32) {
	if !ix.Has(doc) {
		return nil, 0
	}
	out := make(map[string]float64, len(ix.docTerms[doc]))
	for _, id := range ix.docTerms[doc] {
		if c, ok := ix.lists[id].get(doc); ok {
			out[ix.names[id]] = ix.tfAt(id, doc, c)
		} else {
			out[ix.names[id]] = 0 // only in zero-weight fields
		}
	}
	return out, ix.docLen[doc]
}

// Expect is what Add of fields would index: the terms with a positive
// weighted frequency, each with it, and the length.
func (ix *Index) Expect(fields [][]string) (map[string]float64, uint32) {
	d := ix.Count(fields)
	out := make(map[string]float64, len(d.tf))
	for t, v := range d.tf {
		out[t] = v
	}
	return out, uint32(min(d.dl, math.MaxUint32))
}
