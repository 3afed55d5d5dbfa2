package bm25

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"math/rand"
	"slices"
	"strconv"
	"testing"

	"github.com/engram-memory/engram/internal/binenc"
	"github.com/engram-memory/engram/internal/docset"
)

// Tests of the compact layout's fast paths against their brute-force twins:
// galloping seek against a linear scan, in-place replacement against a fresh
// index, escaped frequencies against interned ones, and the snapshot reader
// against corrupt input.

// checkConsistent verifies every structural invariant of ix against a
// recount from the documents' term lists: lists ascending over indexed
// documents, every posting in its document's term list, document
// frequencies, codes and escapes, the term maps and the totals.
// checkSameSearches requires got to answer every query (top 5, no filter)
// as fresh does, on every search path.
func checkSameSearches(tb testing.TB, got, fresh *Index, queries [][]string, what string) {
	tb.Helper()
	for _, q := range queries {
		if a, b := got.Search(q, nil, 5), fresh.Search(q, nil, 5); !slices.Equal(a, b) {
			tb.Fatalf("%s, query %q: %v, fresh %v", what, q, a, b)
		}
		checkPathsAgree(tb, got, q, nil, 5)
	}
}

func checkConsistent(tb testing.TB, ix *Index) {
	tb.Helper()
	df := make([]int, len(ix.lists))
	n, total := 0, int64(0)
	for d, ids := range ix.docTerms {
		if !ix.present[d] {
			if len(ids) != 0 || ix.docLen[d] != 0 {
				tb.Fatalf("absent document %d has terms or a length", d)
			}
			continue
		}
		n++
		total += int64(ix.docLen[d])
		if !slices.IsSorted(ids) || len(slices.Compact(slices.Clone(ids))) != len(ids) {
			tb.Fatalf("document %d: term ids %v not strictly ascending", d, ids)
		}
		for _, id := range ids {
			df[id]++
		}
	}
	if n != ix.n || total != ix.totalLen {
		tb.Fatalf("n %d/%d, total length %d/%d", n, ix.n, total, ix.totalLen)
	}
	escaped := 0
	for id := range ix.lists {
		checkBlocks(tb, &ix.lists[id], ix.blockCap)
		docs, codes := ix.lists[id].flat()
		l := struct {
			docs  []uint32
			codes []uint8
			df    int
		}{docs, codes, ix.lists[id].df}
		if l.df != df[id] || len(l.docs) != len(l.codes) {
			tb.Fatalf("term %d: df %d, recounted %d; %d docs, %d codes", id, l.df, df[id], len(l.docs), len(l.codes))
		}
		if (ix.names[id] == "") != (l.df == 0) {
			tb.Fatalf("term %d half free", id)
		}
		for i, d := range l.docs {
			if i > 0 && d <= l.docs[i-1] {
				tb.Fatalf("term %d: list out of order", id)
			}
			if !ix.present[d] || !findTerm(ix.docTerms[d], uint32(id)) {
				tb.Fatalf("term %d: posting for doc %d, which does not hold it", id, d)
			}
			c := l.codes[i]
			if c == 0 {
				escaped++
				if v, ok := ix.bigTF[tfKey(uint32(id), d)]; !ok || !(v > 0) {
					tb.Fatalf("term %d doc %d: escape without a value", id, d)
				}
			} else if int(c) > ix.nCodes {
				tb.Fatalf("term %d doc %d: code %d beyond %d", id, d, c, ix.nCodes)
			}
		}
	}
	if escaped != len(ix.bigTF) {
		tb.Fatalf("%d escaped postings, %d escaped values", escaped, len(ix.bigTF))
	}
	for c := 1; c <= ix.nCodes; c++ {
		if ix.tfCode[mathBits(ix.tfTab[c])] != uint8(c) {
			tb.Fatalf("code %d not interned", c)
		}
	}
	if ix.terms.n+len(ix.free) != len(ix.names) {
		tb.Fatalf("%d terms + %d free ids != %d names", ix.terms.n, len(ix.free), len(ix.names))
	}
	for id, name := range ix.names {
		if got, ok := ix.terms.find(ix.names, name); name != "" && (!ok || got != uint32(id)) {
			tb.Fatalf("term %q (id %d) is found as %d, %v", name, id, got, ok)
		}
	}
}

func TestSeekMatchesLinear(t *testing.T) {
	// Every ascending list over 0..11 of up to 6 elements (by bitmask), every
	// start and every target.
	for mask := range 1 << 12 {
		var docs []uint32
		for d := range uint32(12) {
			if mask&(1<<d) != 0 {
				docs = append(docs, d)
			}
		}
		for from := 0; from <= len(docs); from++ {
			for d := uint32(0); d < 14; d++ {
				want := from
				for want < len(docs) && docs[want] < d {
					want++
				}
				if got := seek(docs, from, d); got != want {
					t.Fatalf("seek(%v, %d, %d) = %d, want %d", docs, from, d, got, want)
				}
			}
		}
	}
}

// TestReplaceExhaustive replaces a document by every other version over a
// tiny vocabulary (each of two fields, one of weight 0, any subset of three
// terms, the first term possibly twice) amid neighbours before and after it,
// and requires the result to be the same index, structurally and in every
// score, as one built fresh.
func TestReplaceExhaustive(t *testing.T) {
	vocab := []string{"a", "b", "c"}
	var versions [][][]string
	for m0 := range 16 {
		for m1 := range 8 {
			f := make([][]string, 2)
			for i, w := range vocab {
				if m0&(1<<i) != 0 {
					f[0] = append(f[0], w)
				}
				if m1&(1<<i) != 0 {
					f[1] = append(f[1], w)
				}
			}
			if m0&8 != 0 {
				f[0] = append(f[0], "a")
			}
			versions = append(versions, f)
		}
	}
	p := Params{K1: 1.2, B: 0.75, FieldWeights: []float64{1.5, 0}}
	queries := [][]string{{"a"}, {"b"}, {"c"}, {"a", "b"}, {"c", "a", "b"}, {"z"}}
	neighbours := [][]string{{"a", "b"}, {"c"}}
	build := func(ix *Index) {
		ix.Add(0, neighbours)
		ix.Add(2, [][]string{{"b", "c", "c"}, {"a"}})
	}
	for i, v1 := range versions {
		for j, v2 := range versions {
			for _, codes := range []int{maxCodes, 1} {
				got := New(p)
				got.maxCodes = codes
				build(got)
				got.Add(1, v1)
				got.Add(1, v2)
				fresh := New(p)
				fresh.maxCodes = codes
				build(fresh)
				fresh.Add(1, v2)
				checkConsistent(t, got)
				if got.n != fresh.n || got.totalLen != fresh.totalLen || got.terms.n != fresh.terms.n {
					t.Fatalf("versions %d→%d: counts differ", i, j)
				}
				checkSameSearches(t, got, fresh, queries, fmt.Sprintf("versions %d→%d replaced", i, j))
				got.Remove(1)
				fresh.Remove(1)
				checkConsistent(t, got)
				checkSameSearches(t, got, fresh, queries, fmt.Sprintf("versions %d→%d removed", i, j))
			}
		}
	}
}

// TestEscapedFrequencies churns indexes whose frequency table holds 0, 1, 3
// or the full 255 values, with weights that make many distinct frequencies,
// and requires every search to be bit-identical across them and to match
// the reference, through a snapshot round trip too.
func TestEscapedFrequencies(t *testing.T) {
	p := Params{K1: 1.2, B: 0.75, FieldWeights: []float64{0.3, 1.7, 0, 2.9}, IDF: IDFLucene}
	caps := []int{maxCodes, 0, 1, 3}
	ixs := make([]*Index, len(caps))
	for i, c := range caps {
		ixs[i] = New(p)
		ixs[i].maxCodes = c
	}
	ref := newRef(p)
	r := rand.New(rand.NewSource(17))
	allow := docset.New(300)
	for d := uint32(0); d < 300; d += 7 {
		allow.Add(d)
	}
	for round := range 6 {
		for range 400 {
			d := uint32(r.Intn(300))
			if r.Intn(4) == 0 {
				for _, ix := range ixs {
					ix.Remove(d)
				}
				delete(ref.docs, d)
				continue
			}
			fields := randDoc(r, 4, 40)
			for _, ix := range ixs {
				ix.Add(d, fields)
			}
			ref.docs[d] = fields
		}
		for _, ix := range ixs {
			checkConsistent(t, ix)
		}
		if round == 0 && len(ixs[1].bigTF) == 0 {
			t.Fatal("no escaped frequency with an empty table")
		}
		loaded, err := roundTrip(t, ixs[2], p)
		if err != nil {
			t.Fatal(err)
		}
		sameStructure(t, ixs[2], loaded)
		checkConsistent(t, loaded)
		for i := range 200 {
			q := randQuery(r, 40)
			set := []*docset.Set{nil, allow}[i%2]
			want := ixs[0].Search(q, set, 15)
			checkRef(t, want, ref.scores(q, set), 15)
			for j, ix := range append(ixs[1:], loaded) {
				if got := ix.Search(q, set, 15); !slices.Equal(got, want) {
					t.Fatalf("round %d query %q: index %d gives %v, want %v", round, q, j+1, got, want)
				}
				checkPathsAgree(t, ix, q, set, 15)
			}
		}
	}
}

// FuzzSnapshot changes bytes of a real snapshot (escapes, zero-weight terms
// and free ids included), recomputes the checksum, and requires the reader
// to reject it or to accept an index that is consistent and keeps working
// through searches, changes and another round trip.
func FuzzSnapshot(f *testing.F) {
	p := Params{K1: 1.2, B: 0.75, FieldWeights: []float64{1, 0, 0.3}}
	ix := New(p)
	ix.maxCodes = 4
	r := rand.New(rand.NewSource(9))
	for range 120 {
		d := uint32(r.Intn(40))
		if r.Intn(4) == 0 {
			ix.Remove(d)
		} else {
			ix.Add(d, randDoc(r, 3, 200))
		}
	}
	if len(ix.bigTF) == 0 || len(ix.free) == 0 {
		f.Fatal("the seed index has no escapes or no free ids")
	}
	var buf bytes.Buffer
	w := binenc.NewWriter(&buf)
	ix.WriteSnapshot(w)
	if err := w.Finish(); err != nil {
		f.Fatal(err)
	}
	valid := buf.Bytes()
	f.Add(uint32(0), []byte{})
	f.Add(uint32(60), []byte{1})
	f.Add(uint32(len(valid)/2), []byte{0xff, 0xff})
	f.Add(uint32(len(valid)-40), []byte{2, 0, 0, 0})
	f.Add(uint32(len(valid)-200), []byte{0x80})
	table := crc32.MakeTable(crc32.Castagnoli)
	f.Fuzz(func(t *testing.T, at uint32, patch []byte) {
		body := bytes.Clone(valid[:len(valid)-binenc.TrailerSize])
		off := int(at % uint32(len(body)))
		for i, b := range patch {
			if off+i < len(body) {
				body[off+i] ^= b
			}
		}
		data := binary.LittleEndian.AppendUint32(body, crc32.Checksum(body, table))
		got := New(p)
		rd := binenc.NewReader(bytes.NewReader(data), int64(len(data)))
		if got.ReadSnapshot(rd) != nil || rd.Verify() != nil {
			return
		}
		checkConsistent(t, got)
		allow := docset.New(64)
		for d := uint32(0); d < 64; d += 3 {
			allow.Add(d)
		}
		q := []string{"w0", "w3", "w11"}
		got.Search(q, nil, 10)
		got.Search(q, allow, 10)
		checkPathsAgree(t, got, q, allow, 10)
		got.QueryBoundIn(q, &Domain{Key: "k", Docs: allow})
		for d := range uint32(45) {
			if d%3 == 0 {
				got.Remove(d)
			} else {
				got.Add(d, [][]string{{"w" + strconv.Itoa(int(d%7))}, nil, {"w1"}})
			}
		}
		checkConsistent(t, got)
		if _, err := roundTrip(t, got, p); err != nil {
			t.Fatalf("second round trip: %v", err)
		}
	})
}

func TestPairHashSeparatesSets(t *testing.T) {
	// Sanity check of the snapshot's set comparison: moving one pair to
	// another term or document changes the sum under any key.
	r := rand.New(rand.NewSource(1))
	for range 1000 {
		key := r.Uint64()
		t0, d0 := uint32(r.Intn(1000)), uint32(r.Intn(1000))
		a := pairHash(key, t0, d0)
		if a == pairHash(key, t0+1, d0) || a == pairHash(key, t0, d0+1) || a == pairHash(key, d0, t0) && t0 != d0 {
			t.Fatalf("key %x: collision at (%d, %d)", key, t0, d0)
		}
	}
}

func mathBits(v float64) uint64 { return math.Float64bits(v) }

// TestSnapshotRejectsInconsistent writes indexes broken in one way each
// (every broken structure still encodes cleanly) and requires ReadSnapshot
// to refuse them with ErrCorrupt.
func TestSnapshotRejectsInconsistent(t *testing.T) {
	p := Params{K1: 1.2, B: 0.75, FieldWeights: []float64{1, 0.5}}
	build := func() *Index {
		ix := New(p)
		ix.maxCodes = 2
		for d := range uint32(12) {
			ix.Add(d, [][]string{{"a", "w" + strconv.Itoa(int(d%5))}, {"b", "b", "w" + strconv.Itoa(int(d%3))}})
		}
		ix.Remove(4)
		return ix
	}
	list := func(ix *Index, term string) *postings {
		id, _ := ix.terms.find(ix.names, term)
		return &ix.lists[id]
	}
	for _, tc := range []struct {
		name   string
		mutate func(ix *Index)
	}{
		{"posting moved to a document without the term", func(ix *Index) {
			l := list(ix, "w1") // docs 1, 6, 11 (w1 in name) and 1, 7, 10 (text)
			l.docs[0] = 0
		}},
		{"posting for a removed document", func(ix *Index) {
			l := list(ix, "w2")
			for i, d := range l.docs {
				if d == 5 {
					l.docs[i] = 4
				}
			}
		}},
		{"list out of order", func(ix *Index) {
			l := list(ix, "a")
			l.docs[1], l.docs[2] = l.docs[2], l.docs[1]
		}},
		{"list with a document twice", func(ix *Index) {
			l := list(ix, "a")
			l.docs[2] = l.docs[1]
		}},
		{"code beyond the table", func(ix *Index) { list(ix, "a").codes[0] = 9 }},
		{"escape without a value", func(ix *Index) {
			for k := range ix.bigTF {
				delete(ix.bigTF, k)
				return
			}
		}},
		{"term list out of order", func(ix *Index) {
			ids := ix.docTerms[3]
			ids[0], ids[1] = ids[1], ids[0]
		}},
		{"term list missing a term", func(ix *Index) { ix.docTerms[3] = ix.docTerms[3][1:] }},
		{"removed document with terms", func(ix *Index) { ix.docTerms[4] = slices.Clone(ix.docTerms[3]) }},
		{"a name twice", func(ix *Index) {
			a, _ := ix.terms.find(ix.names, "a")
			b, _ := ix.terms.find(ix.names, "b")
			ix.names[b] = ix.names[a]
		}},
		{"a frequency twice in the table", func(ix *Index) { ix.tfTab[2] = ix.tfTab[1] }},
		{"a free id in use", func(ix *Index) { ix.free = append(ix.free, 0) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ix := build()
			if len(ix.bigTF) == 0 || ix.nCodes != 2 {
				t.Fatalf("the fixture has %d escapes, %d codes", len(ix.bigTF), ix.nCodes)
			}
			if _, err := roundTrip(t, ix, p); err != nil {
				t.Fatalf("intact: %v", err)
			}
			tc.mutate(ix)
			if _, err := roundTrip(t, ix, p); !errors.Is(err, binenc.ErrCorrupt) {
				t.Fatalf("got %v, want ErrCorrupt", err)
			}
		})
	}
}
