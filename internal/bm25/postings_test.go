package bm25

import (
	"bytes"
	"cmp"
	"fmt"
	"math/rand"
	"slices"
	"strconv"
	"testing"
	"unsafe"

	"github.com/engram-memory/engram/internal/binenc"
	"github.com/engram-memory/engram/internal/docset"
)

// Tests of the block-split lists against their brute-force twin, one flat
// sorted array: every sequence of inserts and deletes over a small universe
// at block capacities that split and merge, every cursor walk, and whole
// indexes with tiny blocks against the reference scorer, by churn, by an
// exhaustive replacement and by fuzzing.

// flat returns the list's docs and codes end to end.
func (l *postings) flat() ([]uint32, []uint8) {
	var docs []uint32
	var codes []uint8
	var one [1]block
	for _, b := range l.blocks(&one) {
		docs = append(docs, b.docs...)
		codes = append(codes, b.codes...)
	}
	return docs, codes
}

// checkBlocks verifies a list's structure: a short list at most blockCap
// postings, a long one two blocks or more, each non-empty and at most
// blockCap, docs and codes of one length, lasts the blocks' last docs,
// ascending across blocks, n their total, and no two blocks' arrays
// overlapping.
func checkBlocks(tb testing.TB, l *postings, blockCap int) {
	tb.Helper()
	if l.long == nil {
		if len(l.docs) > blockCap || len(l.docs) != len(l.codes) {
			tb.Fatalf("short list of %d docs, %d codes (capacity %d)", len(l.docs), len(l.codes), blockCap)
		}
		if !slices.IsSorted(l.docs) || len(slices.Compact(slices.Clone(l.docs))) != len(l.docs) {
			tb.Fatalf("short list out of order")
		}
		return
	}
	bl := l.long
	if l.docs != nil || l.codes != nil || len(bl.blks) < 2 || len(bl.blks) != len(bl.lasts) {
		tb.Fatalf("long list: %d blocks, %d lasts, short arrays %d", len(bl.blks), len(bl.lasts), len(l.docs))
	}
	n := 0
	prev := int64(-1)
	for b, blk := range bl.blks {
		if len(blk.docs) == 0 || len(blk.docs) > blockCap || len(blk.docs) != len(blk.codes) {
			tb.Fatalf("block %d: %d docs, %d codes (capacity %d)", b, len(blk.docs), len(blk.codes), blockCap)
		}
		for _, d := range blk.docs {
			if int64(d) <= prev {
				tb.Fatalf("block %d: docs out of order", b)
			}
			prev = int64(d)
		}
		if bl.lasts[b] != blk.docs[len(blk.docs)-1] {
			tb.Fatalf("block %d: last %d, holds up to %d", b, bl.lasts[b], blk.docs[len(blk.docs)-1])
		}
		n += len(blk.docs)
	}
	if n != bl.n {
		tb.Fatalf("n %d, blocks hold %d", bl.n, n)
	}
	// No block's arrays, capacity included, overlap another's: appendLast
	// carves blocks out of one chunk, and an insert in place must never
	// write into the next block.
	type span struct{ lo, hi uintptr }
	var spans []span
	for _, blk := range bl.blks {
		d, c := unsafe.Pointer(unsafe.SliceData(blk.docs)), unsafe.Pointer(unsafe.SliceData(blk.codes))
		spans = append(spans, span{uintptr(d), uintptr(d) + 4*uintptr(cap(blk.docs))},
			span{uintptr(c), uintptr(c) + uintptr(cap(blk.codes))})
	}
	slices.SortFunc(spans, func(a, b span) int { return cmp.Compare(a.lo, b.lo) })
	for i := 1; i < len(spans); i++ {
		if spans[i].lo < spans[i-1].hi {
			tb.Fatalf("two blocks' arrays overlap")
		}
	}
}

// twin is the flat model of a list: sorted docs with their codes.
type twin struct {
	docs  []uint32
	codes []uint8
}

// setBoth puts (doc, c) in both the list and the twin and checks that both
// had the same code before.
func setBoth(tb testing.TB, l *postings, tw *twin, doc uint32, c uint8, blockCap int) {
	old, had := l.put(doc, c, blockCap)
	i, found := slices.BinarySearch(tw.docs, doc)
	if had != found || (found && old != tw.codes[i]) {
		tb.Fatalf("put %d: had %v (code %d), twin %v", doc, had, old, found)
	}
	if found {
		tw.codes[i] = c
		return
	}
	tw.docs = slices.Insert(tw.docs, i, doc)
	tw.codes = slices.Insert(tw.codes, i, c)
}

// removeBoth removes doc from both and checks they agree on what it had.
func removeBoth(tb testing.TB, l *postings, tw *twin, doc uint32, blockCap int) {
	old, had := l.remove(doc, blockCap)
	i, found := slices.BinarySearch(tw.docs, doc)
	if had != found || (found && old != tw.codes[i]) {
		tb.Fatalf("remove %d: had %v (code %d), twin %v", doc, had, old, found)
	}
	if found {
		tw.docs = slices.Delete(tw.docs, i, i+1)
		tw.codes = slices.Delete(tw.codes, i, i+1)
	}
}

// checkTwin compares the list with its twin, lookups included, and with
// walks every two-step cursor walk.
func checkTwin(tb testing.TB, l *postings, tw *twin, blockCap int, universe uint32, walks bool) {
	tb.Helper()
	checkBlocks(tb, l, blockCap)
	docs, codes := l.flat()
	if !slices.Equal(docs, tw.docs) || !slices.Equal(codes, tw.codes) || l.size() != len(tw.docs) {
		tb.Fatalf("list %v %v (size %d), twin %v %v", docs, codes, l.size(), tw.docs, tw.codes)
	}
	for d := range universe + 1 {
		c, found := l.get(d)
		j, want := slices.BinarySearch(tw.docs, d)
		if found != want || (found && c != tw.codes[j]) {
			tb.Fatalf("get(%d) = %d, %v in %v", d, c, found, tw.docs)
		}
	}
	if !walks {
		return
	}
	// Every cursor walk: from each start target to each later one.
	for d0 := range universe + 1 {
		for d1 := d0; d1 <= universe+1; d1++ {
			c := newCursor(l)
			c.seek(d0)
			got := c.seek(d1)
			j, want := slices.BinarySearch(tw.docs, d1)
			if got != want || (got && c.code() != tw.codes[j]) {
				tb.Fatalf("seek %d then %d: %v in %v", d0, d1, got, tw.docs)
			}
			if c.done() != (j == len(tw.docs)) {
				tb.Fatalf("seek %d then %d: done %v in %v", d0, d1, c.done(), tw.docs)
			}
		}
	}
}

func TestBlocksExhaustive(t *testing.T) {
	// Every sequence of 6 toggles (insert if absent with a code naming the
	// step, else delete) over 7 documents, at capacities 2, 3 and 4 (4
	// merges a block of one into a neighbour of up to two).
	const universe, steps = 7, 6
	for _, blockCap := range []int{2, 3, 4} {
		seq := make([]int, steps)
		for {
			var l postings
			tw := &twin{}
			for s, x := range seq {
				d := uint32(x)
				if _, found := l.get(d); found {
					removeBoth(t, &l, tw, d, blockCap)
				} else {
					setBoth(t, &l, tw, d, uint8(s+1), blockCap)
				}
				checkTwin(t, &l, tw, blockCap, universe, s == steps-1)
			}
			// Next sequence, odometer style.
			k := 0
			for k < steps && seq[k] == universe-1 {
				seq[k] = 0
				k++
			}
			if k == steps {
				break
			}
			seq[k]++
		}
	}
}

func TestBlocksRandomChurn(t *testing.T) {
	// Long random churn at capacities that split, merge and shrink often,
	// with code updates in place.
	r := rand.New(rand.NewSource(3))
	for _, blockCap := range []int{2, 5, 8, 16, 64} {
		var l postings
		tw := &twin{}
		const universe = 300
		for step := range 20_000 {
			d := uint32(r.Intn(universe))
			// Phases: grow, shrink, mixed.
			del := r.Intn(10) < []int{2, 8, 5}[(step/2000)%3]
			if del {
				removeBoth(t, &l, tw, d, blockCap)
			} else {
				setBoth(t, &l, tw, d, uint8(1+r.Intn(255)), blockCap)
			}
			if step%97 == 0 {
				checkTwin(t, &l, tw, blockCap, universe, step%(97*20) == 0)
			}
		}
		checkTwin(t, &l, tw, blockCap, universe, true)
	}
}

// churnTiny churns ix and a reference alike over docs documents.
func churnTiny(t *testing.T, r *rand.Rand, ix *Index, ref *refIndex, docs, rounds, vocab int) {
	for range rounds {
		d := uint32(r.Intn(docs))
		if r.Intn(4) == 0 {
			ix.Remove(d)
			delete(ref.docs, d)
			continue
		}
		fields := randDoc(r, len(ix.p.FieldWeights), vocab)
		ix.Add(d, fields)
		ref.docs[d] = fields
	}
}

func TestTinyBlocksMatchReference(t *testing.T) {
	// Indexes whose lists span many blocks (capacities 2, 3 and 8) score as
	// the reference does on every path, before and after a snapshot round
	// trip into an index of another capacity, and equal one of full blocks,
	// in a domain too.
	r := rand.New(rand.NewSource(5))
	allow := docset.New(200)
	for d := uint32(0); d < 200; d += 3 {
		allow.Add(d)
	}
	// With a zero-weight field, terms without postings; without one, every
	// holder has a posting, so domain frequencies are counted over the lists.
	for ci, blockCap := range []int{2, 3, 8, 4} {
		p := Params{K1: 1.2, B: 0.75, FieldWeights: []float64{2, 1, float64(ci / 3)}}
		ix, full, ref := New(p), New(p), newRef(p)
		ix.blockCap = blockCap
		for round := range 4 {
			seed := r.Int63()
			churnTiny(t, rand.New(rand.NewSource(seed)), ix, ref, 200, 600, 30)
			churnTiny(t, rand.New(rand.NewSource(seed)), full, newRef(p), 200, 600, 30)
			checkConsistent(t, ix)
			var buf bytes.Buffer
			w := binenc.NewWriter(&buf)
			ix.WriteSnapshot(w)
			if err := w.Finish(); err != nil {
				t.Fatal(err)
			}
			loaded := New(p)
			loaded.blockCap = []int{blockSize, 2, 5}[round%3]
			if err := loaded.ReadSnapshot(binenc.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))); err != nil {
				t.Fatal(err)
			}
			sameStructure(t, ix, loaded)
			checkConsistent(t, loaded)
			sub := New(p)
			allow.ForEach(func(d uint32) bool {
				if f, ok := ref.docs[d]; ok {
					sub.Add(d, f)
				}
				return true
			})
			for i := range 150 {
				q := randQuery(r, 30)
				set := []*docset.Set{nil, allow}[i%2]
				k := 1 + i%12
				got := ix.Search(q, set, k)
				checkRef(t, got, ref.scores(q, set), k)
				checkPathsAgree(t, ix, q, set, k)
				for _, other := range []*Index{full, loaded} {
					if o := other.Search(q, set, k); !slices.Equal(o, got) {
						t.Fatalf("capacity %d query %q: %v, other index %v", blockCap, q, got, o)
					}
				}
				// Statistics of a domain (document frequencies counted over
				// the lists' blocks or the documents' term lists): the same
				// as an index of the domain's documents alone.
				dom := &Domain{Key: "", Docs: allow}
				if a, b := ix.SearchIn(q, dom, nil, k), sub.Search(q, nil, k); !slices.Equal(a, b) {
					t.Fatalf("capacity %d query %q in the domain: %v, an index of the domain %v", blockCap, q, a, b)
				}
				if a, b := ix.QueryBoundIn(q, dom), sub.QueryBound(q); a != b {
					t.Fatalf("capacity %d query %q: domain bound %v, an index of the domain %v", blockCap, q, a, b)
				}
				for d := range uint32(200) {
					a, okA := ix.Score(d, q)
					b, okB := full.Score(d, q)
					if a != b || okA != okB {
						t.Fatalf("Score(%d, %q): %v, full blocks %v", d, q, a, b)
					}
				}
			}
			// The loaded index keeps working under changes.
			churnTiny(t, r, loaded, newRef(p), 200, 300, 30)
			checkConsistent(t, loaded)
		}
	}
}

func TestTinyBlocksReplaceExhaustive(t *testing.T) {
	// Every replacement of document 2 (each of two fields any subset of
	// three terms) by every other, amid neighbours on both sides, with blocks
	// of 2 so every list spans several: the same index as one built fresh.
	vocab := []string{"a", "b", "c"}
	var versions [][][]string
	for m := range 64 {
		f := make([][]string, 2)
		for i, w := range vocab {
			if m&(1<<i) != 0 {
				f[0] = append(f[0], w)
			}
			if m&(8<<i) != 0 {
				f[1] = append(f[1], w)
			}
		}
		versions = append(versions, f)
	}
	p := Params{K1: 1.2, B: 0.75, FieldWeights: []float64{1.5, 0.5}}
	queries := [][]string{{"a"}, {"b"}, {"c"}, {"a", "b"}, {"c", "a", "b"}}
	build := func(ix *Index) {
		ix.blockCap = 2
		for _, d := range []uint32{0, 1, 3, 4} {
			ix.Add(d, [][]string{{"a", "b", "c"}, {vocab[d%3]}})
		}
	}
	for i, v1 := range versions {
		for j, v2 := range versions {
			got, fresh := New(p), New(p)
			build(got)
			build(fresh)
			got.Add(2, v1)
			got.Add(2, v2)
			fresh.Add(2, v2)
			checkConsistent(t, got)
			checkSameSearches(t, got, fresh, queries, fmt.Sprintf("versions %d→%d replaced", i, j))
			got.Remove(2)
			fresh.Remove(2)
			checkConsistent(t, got)
			checkSameSearches(t, got, fresh, queries, fmt.Sprintf("versions %d→%d removed", i, j))
		}
	}
}

// FuzzTinyBlocks drives adds, removes and searches over 64 documents with
// blocks of 2 to 9 postings and checks every search against the reference,
// across paths, and the structure after each change.
func FuzzTinyBlocks(f *testing.F) {
	f.Add([]byte{2, 0, 1, 2, 3, 4, 5, 3, 1, 2, 0, 7, 7, 3, 0, 1})
	f.Add([]byte{5, 0, 0, 9, 9, 9, 2, 0, 3, 9, 1, 0, 4, 4, 4, 4, 3, 4})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		p := Params{K1: 1.2, B: 0.75, FieldWeights: []float64{2, 1}}
		ix, ref := New(p), newRef(p)
		ix.blockCap = 2 + int(data[0])%8
		data = data[1:]
		next := func() int {
			if len(data) == 0 {
				return 0
			}
			b := data[0]
			data = data[1:]
			return int(b)
		}
		for len(data) > 0 {
			op, arg := next()%4, next()
			d := uint32(arg % 64)
			switch op {
			case 0, 1:
				fields := make([][]string, 2)
				for f := range fields {
					for range next() % 5 {
						fields[f] = append(fields[f], "t"+strconv.Itoa(next()%5))
					}
				}
				ix.Add(d, fields)
				ref.docs[d] = fields
			case 2:
				ix.Remove(d)
				delete(ref.docs, d)
			case 3:
				q := []string{"t" + strconv.Itoa(arg%6), "t" + strconv.Itoa(next()%6)}
				allow := maskAllow(next(), 64)
				k := 1 + arg%6
				checkRef(t, ix.Search(q, allow, k), ref.scores(q, allow), k)
				checkPathsAgree(t, ix, q, allow, k)
			}
			checkConsistent(t, ix)
		}
	})
}
