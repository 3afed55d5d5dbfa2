package bm25

// Block-split inverted lists. A term's postings are ascending doc numbers
// with their frequency codes. A list of up to blockCap postings (most terms)
// is one pair of arrays, as compact as it can be; a longer one is cut into
// blocks of at most blockCap postings, each block its own pair of arrays,
// with every block's last doc in one array (lasts), so finding a document is
// a binary search over lasts and then over one block. Inserting or removing
// a posting moves at most a block's worth of postings (plus, when a block
// splits, merges or empties, the list's block headers), not the rest of the
// list: O(blockCap + df/blockCap) per posting, against O(df) for one flat
// array. Appends in doc order, the bulk-load case, fill each block to
// blockCap before opening the next, and carve new blocks out of chunks of a
// quarter of the list, so a list built by appends lies in contiguous runs. A
// block costs 52 bytes of headers and summary: a tenth of a byte a posting
// when full, under half a byte at the least fill a block keeps (blocks a
// quarter full or less merge with a neighbour when the two fit in three
// quarters of one).

import "slices"

// blockSize is the capacity of a block, in postings: a split or merge copies
// at most ~5 blockSize bytes, and the header costs 52/blockSize a posting.
const blockSize = 512

// maxChunk is the most blocks an append allocates arrays for at once.
const maxChunk = 32

// postings is one term's inverted list, short (docs and codes) or long
// (blocks), plus the term's document frequency.
type postings struct {
	docs  []uint32   // a short list's docs, strictly ascending; nil when long
	codes []uint8    // codes[i]: docs[i]'s frequency (tfTab, or 0 = bigTF)
	long  *blockList // a list of two blocks or more; nil when short
	df    int        // documents containing the term in any field
}

// blockList is a long list's blocks.
type blockList struct {
	blks  []block  // non-empty blocks, in doc order; two or more
	lasts []uint32 // lasts[b]: the last doc of blks[b]
	n     int      // postings, Σ len(blks[b].docs)
}

// block is a run of a list's postings.
type block struct {
	docs  []uint32 // strictly ascending, 1..blockCap of them
	codes []uint8  // codes[i]: docs[i]'s frequency
}

// size returns the number of postings.
func (l *postings) size() int {
	if l.long != nil {
		return l.long.n
	}
	return len(l.docs)
}

// blocks returns the list's blocks in doc order, a short list as one block
// held in *one (so iterating allocates nothing).
func (l *postings) blocks(one *[1]block) []block {
	if l.long != nil {
		return l.long.blks
	}
	if len(l.docs) == 0 {
		return nil
	}
	one[0] = block{docs: l.docs, codes: l.codes}
	return one[:]
}

// get returns doc's code and whether doc has a posting.
func (l *postings) get(doc uint32) (uint8, bool) {
	if l.long == nil {
		i, found := slices.BinarySearch(l.docs, doc)
		if !found {
			return 0, false
		}
		return l.codes[i], true
	}
	b, i, found := l.long.find(doc)
	if !found {
		return 0, false
	}
	return l.long.blks[b].codes[i], true
}

// put gives doc the code c, inserting its posting in order or updating the
// one it has, and returns the code it had and whether it had one.
func (l *postings) put(doc uint32, c uint8, blockCap int) (old uint8, had bool) {
	if l.long == nil {
		n := len(l.docs)
		if n == 0 || l.docs[n-1] < doc { // the common case: a new document
			if n < blockCap {
				l.docs = append(l.docs, doc)
				l.codes = append(l.codes, c)
				return 0, false
			}
		} else {
			i, found := slices.BinarySearch(l.docs, doc)
			if found {
				old, l.codes[i] = l.codes[i], c
				return old, true
			}
			if n < blockCap {
				l.docs = slices.Insert(l.docs, i, doc)
				l.codes = slices.Insert(l.codes, i, c)
				return 0, false
			}
		}
		// A full short list becomes a long one of that one block, which the
		// posting then splits or follows.
		l.long = &blockList{blks: []block{{docs: l.docs, codes: l.codes}}, lasts: []uint32{l.docs[n-1]}, n: n}
		l.docs, l.codes = nil, nil
	}
	bl := l.long
	if bl.lasts[len(bl.lasts)-1] < doc {
		bl.appendLast(doc, c, blockCap)
		return 0, false
	}
	b, i, found := bl.find(doc)
	if found {
		codes := bl.blks[b].codes
		old, codes[i] = codes[i], c
		return old, true
	}
	bl.insertAt(b, i, doc, c, blockCap)
	return 0, false
}

// remove deletes doc's posting and returns its code and whether it had one.
// A long list left with one block becomes short again.
func (l *postings) remove(doc uint32, blockCap int) (old uint8, had bool) {
	if l.long == nil {
		i, found := slices.BinarySearch(l.docs, doc)
		if !found {
			return 0, false
		}
		old = l.codes[i]
		l.docs = slices.Delete(l.docs, i, i+1)
		l.codes = slices.Delete(l.codes, i, i+1)
		// Give back memory when a list has shrunk to a quarter of its capacity.
		if c := cap(l.docs); c > 64 && len(l.docs) < c/4 {
			l.docs = slices.Clip(slices.Clone(l.docs))
			l.codes = slices.Clip(slices.Clone(l.codes))
		}
		return old, true
	}
	bl := l.long
	b, i, found := bl.find(doc)
	if !found {
		return 0, false
	}
	old = bl.blks[b].codes[i]
	bl.deleteAt(b, i, blockCap)
	if len(bl.blks) == 1 {
		l.docs, l.codes, l.long = bl.blks[0].docs, bl.blks[0].codes, nil
	}
	return old, true
}

// find returns the block that holds doc or would hold it (the first whose
// last doc is >= doc; len(blks) when doc is past the end), the index in that
// block, and whether doc is there.
func (l *blockList) find(doc uint32) (b, i int, found bool) {
	b, _ = slices.BinarySearch(l.lasts, doc)
	if b == len(l.blks) {
		return b, 0, false
	}
	i, found = slices.BinarySearch(l.blks[b].docs, doc)
	return b, i, found
}

// insertAt inserts (doc, c) at index i of block b, which must keep the list
// ascending; a full block splits first. Capacity grows by an eighth at a
// time (not doubling), so a block's arrays stay near their length.
func (l *blockList) insertAt(b, i int, doc uint32, c uint8, blockCap int) {
	if len(l.blks[b].docs) >= blockCap {
		l.split(b)
		if left := len(l.blks[b].docs); i >= left {
			b, i = b+1, i-left
		}
	}
	blk := &l.blks[b]
	n := len(blk.docs)
	if n == cap(blk.docs) || n == cap(blk.codes) {
		nc := min(blockCap, n+max(4, n/8))
		docs, codes := make([]uint32, n, nc), make([]uint8, n, nc)
		copy(docs, blk.docs)
		copy(codes, blk.codes)
		blk.docs, blk.codes = docs, codes
	}
	blk.docs = slices.Insert(blk.docs, i, doc)
	blk.codes = slices.Insert(blk.codes, i, c)
	l.lasts[b] = blk.docs[len(blk.docs)-1]
	l.n++
}

// appendLast adds (doc, c) after every posting of the list. A new block is
// carved from the spare capacity past the last block's arrays when they have
// some, else from a new chunk sized for a quarter as many blocks as the list
// has (at most maxChunk): a list built by appends lies in a few contiguous
// chunks, and grows by a quarter at a time, as a flat array grown by append
// would, with at most a quarter of its capacity spare. Only
// the last block's arrays may reach past blockCap, and only into spare
// capacity that no other block uses.
func (l *blockList) appendLast(doc uint32, c uint8, blockCap int) {
	nb := len(l.blks)
	if len(l.blks[nb-1].docs) < blockCap {
		blk := &l.blks[nb-1]
		blk.docs = append(blk.docs, doc)
		blk.codes = append(blk.codes, c)
		l.lasts[nb-1] = doc
		l.n++
		return
	}
	last := &l.blks[nb-1]
	docs, codes := last.docs, last.codes
	last.docs, last.codes = docs[:blockCap:blockCap], codes[:blockCap:blockCap]
	var next block
	if cap(docs) > blockCap && cap(codes) > blockCap {
		next = block{docs: docs[blockCap : blockCap+1 : cap(docs)], codes: codes[blockCap : blockCap+1 : cap(codes)]}
	} else {
		k := min(max(1, nb/4), maxChunk) * blockCap
		next = block{docs: make([]uint32, 1, k), codes: make([]uint8, 1, k)}
	}
	next.docs[0], next.codes[0] = doc, c
	l.blks = append(l.blks, next)
	l.lasts = append(l.lasts, doc)
	l.n++
}

// split cuts block b into two halves, each in arrays of its own.
func (l *blockList) split(b int) {
	blk := l.blks[b]
	h := len(blk.docs) / 2
	left := block{docs: slices.Clone(blk.docs[:h]), codes: slices.Clone(blk.codes[:h])}
	right := block{docs: slices.Clone(blk.docs[h:]), codes: slices.Clone(blk.codes[h:])}
	l.blks[b] = left
	l.blks = slices.Insert(l.blks, b+1, right)
	l.lasts = slices.Insert(l.lasts, b, left.docs[h-1])
}

// deleteAt removes the posting at index i of block b, dropping the block
// when it empties, merging it with a neighbour when it falls to a quarter
// of blockCap and the two fit in three quarters, and giving back capacity
// when a block's arrays are under half used.
func (l *blockList) deleteAt(b, i, blockCap int) {
	blk := &l.blks[b]
	blk.docs = slices.Delete(blk.docs, i, i+1)
	blk.codes = slices.Delete(blk.codes, i, i+1)
	l.n--
	n := len(blk.docs)
	if n == 0 {
		l.blks = slices.Delete(l.blks, b, b+1)
		l.lasts = slices.Delete(l.lasts, b, b+1)
		l.clip()
		return
	}
	l.lasts[b] = blk.docs[n-1]
	if n <= blockCap/4 {
		// The smaller neighbour, if the two fit in three quarters of a block.
		o := -1
		if b > 0 {
			o = b - 1
		}
		if b+1 < len(l.blks) && (o < 0 || len(l.blks[b+1].docs) < len(l.blks[o].docs)) {
			o = b + 1
		}
		if o >= 0 && n+len(l.blks[o].docs) <= blockCap*3/4 {
			l.merge(min(b, o))
			return
		}
	}
	if c := cap(blk.docs); c > 8 && n < c/2 {
		blk.docs, blk.codes = slices.Clip(slices.Clone(blk.docs)), slices.Clip(slices.Clone(blk.codes))
	}
}

// merge joins blocks b and b+1 into one, in arrays of its own.
func (l *blockList) merge(b int) {
	x, y := l.blks[b], l.blks[b+1]
	n := len(x.docs) + len(y.docs)
	docs := append(make([]uint32, 0, n), x.docs...)
	codes := append(make([]uint8, 0, n), x.codes...)
	l.blks[b] = block{docs: append(docs, y.docs...), codes: append(codes, y.codes...)}
	l.lasts[b] = l.lasts[b+1]
	l.blks = slices.Delete(l.blks, b+1, b+2)
	l.lasts = slices.Delete(l.lasts, b+1, b+2)
	l.clip()
}

// clip gives back the block headers' capacity when under a quarter is used.
func (l *blockList) clip() {
	if c := cap(l.blks); c > 8 && len(l.blks) < c/4 {
		l.blks = slices.Clip(slices.Clone(l.blks))
		l.lasts = slices.Clip(slices.Clone(l.lasts))
	}
}

// cursor walks a list forward to ascending target documents.
type cursor struct {
	l     *blockList // nil for a short list
	b     int        // current block
	i     int        // index in docs
	docs  []uint32   // the current block's docs (a short list's); nil before the first seek of a long list
	codes []uint8
}

func newCursor(l *postings) cursor {
	if l.long == nil {
		return cursor{docs: l.docs, codes: l.codes}
	}
	return cursor{l: l.long}
}

// seek moves to the first posting with doc >= d (not before the current
// one) and reports whether it is d: over a long list, a gallop over the
// blocks' last docs, then over the block from the current index.
func (c *cursor) seek(d uint32) bool {
	l := c.l
	if l == nil {
		c.i = seek(c.docs, c.i, d)
		return c.i < len(c.docs) && c.docs[c.i] == d
	}
	if c.b >= len(l.blks) {
		return false
	}
	if c.docs == nil || l.lasts[c.b] < d {
		if l.lasts[c.b] < d {
			c.b, c.i = seek(l.lasts, c.b+1, d), 0
			if c.b == len(l.blks) {
				return false
			}
		}
		c.docs, c.codes = l.blks[c.b].docs, l.blks[c.b].codes
	}
	c.i = seek(c.docs, c.i, d)
	return c.docs[c.i] == d // the block's last doc is >= d, so c.i is in range
}

// done reports whether the cursor is past the list's last posting.
func (c *cursor) done() bool {
	if c.l == nil {
		return c.i >= len(c.docs)
	}
	return c.b >= len(c.l.blks)
}

// code returns the code of the posting the cursor is on.
func (c *cursor) code() uint8 { return c.codes[c.i] }
