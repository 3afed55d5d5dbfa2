package index

// Snapshots: the whole index — every memory, the BM25 index and one vector
// index per model — written to and read back from a binenc stream. Document
// numbers, free slots and posting order are kept exactly, so a loaded index
// answers every search as the written one did; the id map, creation times and
// filter postings are rebuilt from the memories (cheap), and everything read
// is checked for consistency before it is used.

import (
	"fmt"
	"slices"
	"time"
	"unsafe"

	"github.com/engram-memory/engram/internal/ann"
	"github.com/engram-memory/engram/internal/binenc"
	"github.com/engram-memory/engram/internal/bm25"
	"github.com/engram-memory/engram/internal/tokenize"
	"github.com/engram-memory/engram/internal/vector"
	"github.com/engram-memory/engram/memory"
)

// snapshotVersion changes whenever the layout below (or a nested one) does.
// 2: each model's vectors are followed by its ANN graph, if it has one.
// 3: a memory's strings in one array (memoryCodec).
const snapshotVersion = 3

// Memory flags: which optional fields are set.
const (
	flagFavorite = 1 << iota
	flagDemandAt
	flagMetadata  // Metadata non-nil
	flagScope     // Scope non-nil
	flagTags      // Tags non-nil
	flagEmbedding // Embedding non-nil
	flagVector    // Embedding.Vector non-nil (a vector the index could not use)
)

// WriteSnapshot writes the index to w. The caller holds at least a read lock.
func (ix *Index) WriteSnapshot(w *binenc.Writer) {
	w.Uint32(snapshotVersion)
	o := ix.tok.Options()
	w.Bool(o.Stem)
	w.Bool(o.Stopwords)
	w.Uint64(uint64(len(ix.docs)))
	w.Uint32s(ix.free)
	var c memoryCodec
	for _, m := range ix.docs {
		w.Bool(m != nil)
		if m != nil {
			c.write(w, m)
		}
	}
	ix.bm.WriteSnapshot(w)
	models := make([]string, 0, len(ix.vecs))
	for model := range ix.vecs {
		models = append(models, model)
	}
	slices.Sort(models)
	w.Uint64(uint64(len(models)))
	for _, model := range models {
		w.String(model)
		ix.vecs[model].WriteSnapshot(w)
		g := ix.graphs[model]
		w.Bool(g != nil)
		if g != nil {
			g.WriteSnapshot(w)
		}
	}
}

// ReadSnapshot reads an index written by WriteSnapshot, for tokenizer tok and
// BM25 parameters p, which must equal those it was written with; ao configures
// the approximate index from here on (a graph in the snapshot is used as it
// is, never rebuilt). Any inconsistency is an error (also recorded in r).
func ReadSnapshot(r *binenc.Reader, tok *tokenize.Tokenizer, p bm25.Params, ao ANNOptions) (*Index, error) {
	ix := New(tok, p)
	ix.SetANN(ao)
	if v := r.Uint32(); r.Err() == nil && v != snapshotVersion {
		r.Corruptf("index snapshot version %d, want %d", v, snapshotVersion)
	}
	o := tok.Options()
	if stem, stop := r.Bool(), r.Bool(); r.Err() == nil && (stem != o.Stem || stop != o.Stopwords) {
		r.Corruptf("index snapshot tokenizer (stem %t, stopwords %t) differs from (stem %t, stopwords %t)", stem, stop, o.Stem, o.Stopwords)
	}
	n := r.Count(4) // each slot has at least its 4-byte presence flag
	ix.free = r.Uint32s()
	ix.docs = make([]*memory.Memory, n)
	ix.created = make([]int64, n)
	var c memoryCodec
	for doc := range ix.docs {
		if r.Err() != nil {
			return nil, r.Err()
		}
		if !r.Bool() {
			continue
		}
		m := c.read(r, ix)
		if r.Err() != nil {
			return nil, r.Err()
		}
		if m.ID == "" {
			r.Corruptf("index snapshot: memory without an id in slot %d", doc)
			return nil, r.Err()
		}
		ix.docs[doc] = m
	}
	// The lookups (key map, creation times, filter postings) are built from
	// the memories on a goroutine of their own while the rest is read.
	lookups := make(chan error, 1)
	go func() { lookups <- ix.indexDocs() }()
	waitLookups := func() error {
		if lookups == nil {
			return nil
		}
		err := <-lookups
		lookups = nil
		if err != nil {
			r.SetErr(err)
		}
		return err
	}
	defer waitLookups() // an early return still waits: nothing may outlive the read
	if err := ix.bm.ReadSnapshot(r); err != nil {
		return nil, err
	}
	models := r.Count(8)
	for range models {
		model := r.String()
		vi, err := vector.ReadSnapshot(r, len(ix.docs))
		if err != nil {
			return nil, err
		}
		if r.Bool() {
			g, err := ann.ReadSnapshot(r)
			if err != nil {
				return nil, err
			}
			if g.Dim() != vi.Dim() {
				r.Corruptf("index snapshot: model %q has %d-d vectors but a %d-d graph", model, vi.Dim(), g.Dim())
				return nil, r.Err()
			}
			if err := g.Check(vi, vi.Len()); err != nil {
				r.Corruptf("index snapshot: model %q: %v", model, err)
				return nil, r.Err()
			}
			ix.graphs[model] = g
		}
		if _, dup := ix.vecs[model]; dup {
			r.Corruptf("index snapshot: model %q twice", model)
			return nil, r.Err()
		}
		for doc := range vi.Docs() {
			m := ix.docAt(doc)
			if m == nil || m.Embedding == nil || m.Embedding.Model != model || m.Embedding.Dim != vi.Dim() {
				r.Corruptf("index snapshot: vector of model %q for document %d that has none", model, doc)
				return nil, r.Err()
			}
		}
		ix.vecs[model] = vi
	}
	if err := waitLookups(); err != nil {
		return nil, err
	}
	if err := ix.checkFree(r); err != nil {
		return nil, err
	}
	if ix.bm.Len() != len(ix.byKey) {
		r.Corruptf("index snapshot: %d memories but %d in BM25", len(ix.byKey), ix.bm.Len())
		return nil, r.Err()
	}
	for _, doc := range ix.byKey {
		if !ix.bm.Has(doc) {
			r.Corruptf("index snapshot: memory %d missing from BM25", doc)
			return nil, r.Err()
		}
	}
	if r.Err() != nil {
		return nil, r.Err()
	}
	ix.wantGraphs = true // a model past the threshold without a graph gets one built
	return ix, nil
}

// indexDocs builds the key map, creation times and filter postings of the
// memories read into ix.docs; a key seen twice is an error.
func (ix *Index) indexDocs() error {
	for doc, m := range ix.docs {
		if m == nil {
			continue
		}
		key := m.Key()
		if _, dup := ix.byKey[key]; dup {
			return fmt.Errorf("%w: index snapshot: memory %q twice in scope %s", binenc.ErrCorrupt, m.ID, memory.ScopeJSON(m.Scope))
		}
		ix.byKey[key] = uint32(doc)
		ix.created[doc] = m.CreatedAt.UnixNano()
		post(ix.types, m.Type, uint32(doc))
		post(ix.scenes, m.Scene, uint32(doc))
		post(ix.sources, m.Source, uint32(doc))
		for k, v := range m.Scope {
			post(ix.scope, k+"="+v, uint32(doc))
		}
		for _, t := range m.Tags {
			post(ix.tags, t, uint32(doc))
		}
	}
	return nil
}

// checkFree verifies that the free list names exactly the empty slots.
func (ix *Index) checkFree(r *binenc.Reader) error {
	seen := make(map[uint32]bool, len(ix.free))
	for _, doc := range ix.free {
		if int(doc) >= len(ix.docs) || ix.docs[doc] != nil || seen[doc] {
			r.Corruptf("index snapshot: bad free slot %d", doc)
			return r.Err()
		}
		seen[doc] = true
	}
	if len(ix.free)+len(ix.byKey) != len(ix.docs) {
		r.Corruptf("index snapshot: %d slots, %d memories, %d free", len(ix.docs), len(ix.byKey), len(ix.free))
		return r.Err()
	}
	return r.Err()
}

// docAt is Doc with a range check.
func (ix *Index) docAt(doc uint32) *memory.Memory {
	if int(doc) >= len(ix.docs) {
		return nil
	}
	return ix.docs[doc]
}

// A memory is written as its flags, the lengths of its strings, all its
// strings in one byte array (the eight text fields, the scope's keys and
// values, the tags, the embedding's model), then its other fields: a reader
// makes one allocation for all its text, and finds the scope and embedding
// it shares with other memories (interned, index.go) without allocating.
const memoryStrings = 8 // ID … ContentHash

// memoryCodec holds an encoder's or decoder's scratch space.
type memoryCodec struct {
	lens []uint32
	blob []byte
	key  []byte
}

func (c *memoryCodec) add(s string) {
	c.lens = append(c.lens, uint32(len(s)))
	c.blob = append(c.blob, s...)
}

func (c *memoryCodec) write(w *binenc.Writer, m *memory.Memory) {
	var flags uint32
	if m.Favorite {
		flags |= flagFavorite
	}
	if m.DemandAt != nil {
		flags |= flagDemandAt
	}
	if m.Metadata != nil {
		flags |= flagMetadata
	}
	if m.Scope != nil {
		flags |= flagScope
	}
	if m.Tags != nil {
		flags |= flagTags
	}
	if m.Embedding != nil {
		flags |= flagEmbedding
		if m.Embedding.Vector != nil {
			flags |= flagVector
		}
	}
	w.Uint32(flags)
	c.lens, c.blob = c.lens[:0], c.blob[:0]
	for _, f := range []string{m.ID, m.Name, m.Description, m.Text, m.Type, m.Scene, m.Source, m.ContentHash} {
		c.add(f)
	}
	keys := make([]string, 0, len(m.Scope))
	for k := range m.Scope {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		c.add(k)
		c.add(m.Scope[k])
	}
	for _, t := range m.Tags {
		c.add(t)
	}
	if e := m.Embedding; e != nil {
		c.add(e.Model)
	}
	w.Uint32(uint32(len(keys)))
	w.Uint32(uint32(len(m.Tags)))
	w.Uint32s(c.lens)
	w.Bytes(c.blob)
	w.Bytes(m.Metadata)
	writeTime(w, m.CreatedAt)
	writeTime(w, m.UpdatedAt)
	w.Int64(m.Uses)
	w.Float64(m.Demand)
	if m.DemandAt != nil {
		writeTime(w, *m.DemandAt)
	}
	if e := m.Embedding; e != nil {
		w.Uint64(uint64(e.Dim))
		if e.Vector != nil {
			w.Float32s(e.Vector)
		}
	}
}

// read decodes a memory, sharing scopes and embedding descriptions through ix.
func (c *memoryCodec) read(r *binenc.Reader, ix *Index) *memory.Memory {
	flags := r.Uint32()
	if r.Err() == nil && flags >= flagVector<<1 {
		r.Corruptf("memory flags %#x", flags)
	}
	nscope, ntags := int(r.Uint32()), int(r.Uint32())
	lens := r.Uint32s()
	blob := r.Bytes()
	if r.Err() != nil {
		return nil
	}
	want := memoryStrings + 2*nscope + ntags
	if flags&flagEmbedding != 0 {
		want++
	}
	var total uint64
	for _, n := range lens {
		total += uint64(n)
	}
	if nscope > len(lens) || ntags > len(lens) || len(lens) != want || total != uint64(len(blob)) {
		r.Corruptf("memory with %d strings of %d bytes, want %d strings of %d bytes", len(lens), total, want, len(blob))
		return nil
	}
	next := func() string {
		n := int(lens[0])
		lens = lens[1:]
		s := unsafe.String(unsafe.SliceData(blob), n)
		blob = blob[n:]
		return s
	}
	m := &memory.Memory{
		ID: next(), Name: next(), Description: next(), Text: next(),
		Type: next(), Scene: next(), Source: next(), ContentHash: next(),
	}
	if flags&flagScope != 0 {
		c.key = c.key[:0]
		pairs := make([]string, 2*nscope)
		for i := range pairs {
			pairs[i] = next()
		}
		m.Scope = ix.scopeOf(pairs, &c.key)
	} else if nscope != 0 {
		r.Corruptf("memory %s: scope entries without a scope", m.ID)
		return nil
	}
	if flags&flagTags != 0 {
		m.Tags = make([]string, ntags)
		for i := range m.Tags {
			m.Tags[i] = next()
		}
	} else if ntags != 0 {
		r.Corruptf("memory %s: tags without tags", m.ID)
		return nil
	}
	var model string
	if flags&flagEmbedding != 0 {
		model = next()
	}
	if meta := r.Bytes(); flags&flagMetadata != 0 {
		m.Metadata = nonNil(meta)
	}
	m.Favorite = flags&flagFavorite != 0
	m.CreatedAt = readTime(r)
	m.UpdatedAt = readTime(r)
	m.Uses = r.Int64()
	m.Demand = r.Float64()
	if flags&flagDemandAt != 0 {
		t := readTime(r)
		m.DemandAt = &t
	}
	if flags&flagEmbedding != 0 {
		dim := r.Uint64()
		if dim > 1<<20 {
			r.Corruptf("memory %s: embedding dimension %d", m.ID, dim)
		}
		if flags&flagVector != 0 {
			m.Embedding = &memory.Embedding{Model: model, Dim: int(dim), Vector: nonNil(r.Float32s())}
		} else {
			m.Embedding = ix.embeddingOf(model, int(dim))
		}
	}
	return m
}

// Times are stored as Unix seconds and nanoseconds (any instant, the zero
// time included) and read back in UTC, as the store reads them.
func writeTime(w *binenc.Writer, t time.Time) {
	w.Int64(t.Unix())
	w.Uint32(uint32(t.Nanosecond()))
}

func readTime(r *binenc.Reader) time.Time {
	sec, nsec := r.Int64(), r.Uint32()
	if r.Err() == nil && nsec >= 1e9 {
		r.Corruptf("time with %d nanoseconds", nsec)
	}
	return time.Unix(sec, int64(nsec)).UTC()
}

// nonNil returns s, or an empty non-nil slice for nil, since the decoder reads
// empty slices as nil and the memory distinguishes the two.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
