// Package index is the in-memory mirror of a store: document numbering, the BM25
// index, one vector index per embedding model, and the postings that compile a
// memory.Filter into the allowed set both legs consult before ranking.
package index

import (
	"strings"
	"sync/atomic"
	"time"

	"github.com/engram-memory/engram/internal/ann"
	"github.com/engram-memory/engram/internal/bm25"
	"github.com/engram-memory/engram/internal/docset"
	"github.com/engram-memory/engram/internal/tokenize"
	"github.com/engram-memory/engram/internal/vector"
	"github.com/engram-memory/engram/memory"
)

// Fields indexed by BM25, in this order: a memory's own (name, description,
// text, speaker), its neighbours' text (context) and its day (date); see
// episode.go.
const (
	FieldName = iota
	FieldDescription
	FieldText
	FieldSpeaker
	FieldContext
	FieldDate
	NumFields
)

// DefaultFieldWeights are BM25's field weights, in field order: the context
// and date fields count for less than a memory's own words (measured on
// LoCoMo; docs/evaluation.md, "LoCoMo dev").
func DefaultFieldWeights() []float64 { return []float64{1, 1, 1, 1, 0.3, 0.3} }

// DefaultLengthWeights are BM25's length weights (bm25.Params.LengthWeights):
// the context makes a memory longer, as its own words do, so that a turn
// with long neighbours is not favoured over the turn that holds the answer
// (measured on LoCoMo: hit@1 0.33 with the context left out of the length,
// 0.43 with it in), while the few date terms do not.
func DefaultLengthWeights() []float64 { return []float64{1, 1, 1, 1, 1, 0} }

// Index holds every memory of a store and the structures that search them. It
// is not safe for concurrent writes: callers hold a write lock for Put and
// Delete and a read lock for everything else.
type Index struct {
	tok  *tokenize.Tokenizer
	bm   *bm25.Index
	vecs map[string]*vector.Index // by embedding model id
	// graphs holds an ANN graph over a model's vectors once it has
	// GraphMin of them (graph.go).
	graphs    map[string]*ann.Graph
	graphMin  int
	annPolicy ann.Policy
	bulk      bool // BeginBulk: graphs wait for EndBulk
	// wantGraphs: some model may need a graph built (WantsGraphs).
	wantGraphs bool
	building   map[string]*GraphBuild // builds under way, by model

	// docs holds the memories by doc number: nil for a free slot, and for
	// one whose memory is still pending in the snapshot it was read from
	// (pend; lazy.go). Read through doc, written through setDoc.
	docs     []*memory.Memory
	pend     *pending
	lazyErr  atomic.Pointer[error] // a pending memory that failed to decode (Corrupt)
	created  []int64               // created_at (unix nanos) by doc number
	occurred []int64               // occurred_at (unix nanos) by doc number
	superAt  []int64               // when a superseding memory occurred, by doc number; noSuperseder for none
	byKey    map[string]uint32     // memory.Key → doc: ids are per-scope namespaces
	free     []uint32

	// Filter postings: "key=value" for scope, and exact values for the rest.
	scope, types, scenes, sources, tags map[string]*docset.Set
	episodeP, supersedesP               map[string]*docset.Set

	// Episodes and context (episode.go): what the context fields hold, each
	// episode's documents in episode order, and, during a batch, the
	// documents to re-index at its end with their tokens when known.
	ctx      ContextOptions
	episodes map[string][]uint32
	batch    int
	dirty    map[uint32]struct{}
	stash    map[uint32]*fieldTokens

	// Supersession (supersede.go): superseded key → documents superseding
	// it, and the documents superseded.
	supersOf    map[string][]uint32
	superseded  docset.Set
	nSuperseded int
	// live holds every indexed document, for the current-only filter of a
	// search with no other filter.
	live docset.Set

	// Interned: the memories of one scope share one Scope map, and those
	// embedded by one model one Embedding (model and dimension), instead of
	// a copy each (intern.go).
	scopes map[string]map[string]string
	embeds map[embedKey]*memory.Embedding
}

// New returns an empty index.
func New(tok *tokenize.Tokenizer, p bm25.Params) *Index {
	return &Index{
		tok:         tok,
		bm:          bm25.New(p),
		vecs:        map[string]*vector.Index{},
		graphs:      map[string]*ann.Graph{},
		building:    map[string]*GraphBuild{},
		byKey:       map[string]uint32{},
		scope:       map[string]*docset.Set{},
		types:       map[string]*docset.Set{},
		scenes:      map[string]*docset.Set{},
		sources:     map[string]*docset.Set{},
		tags:        map[string]*docset.Set{},
		episodeP:    map[string]*docset.Set{},
		supersedesP: map[string]*docset.Set{},
		scopes:      map[string]map[string]string{},
		embeds:      map[embedKey]*memory.Embedding{},
	}
}

// Len is the number of memories.
func (ix *Index) Len() int { return len(ix.byKey) }

// Tokenizer is the tokenizer used for documents, and so for queries.
func (ix *Index) Tokenizer() *tokenize.Tokenizer { return ix.tok }

// Analyzed is a memory with its fields tokenized: the expensive part of
// indexing, which Analyze does safely from many goroutines at once.
type Analyzed struct {
	m     *memory.Memory
	terms bm25.Terms
	toks  *fieldTokens // instead of terms, for a memory whose context needs its neighbours
	row   *vector.Row  // nil: no usable vector
}

// Analyze tokenizes and counts m's fields and prepares its vector for
// PutAnalyzed. It only reads the index's settings, so loaders may call it
// concurrently without the write lock.
func (ix *Index) Analyze(m *memory.Memory) Analyzed {
	a := Analyzed{m: m}
	ft := ix.tokens(m)
	if ix.needsContext(m) {
		a.toks = ft // counted under the write lock, with the neighbours' text
	} else {
		a.terms = ix.bm.Count(ft[:])
	}
	if e := m.Embedding; e != nil && len(e.Vector) > 0 {
		// A zero or non-finite vector is left out of the vector leg; the memory
		// is still found by keywords.
		a.row, _ = vector.Prepare(e.Vector)
	}
	return a
}

// Reserve makes room for n more vectors of a model, before a bulk load.
func (ix *Index) Reserve(model string, dim, n int) {
	vi := ix.vecs[model]
	if vi == nil {
		vi = vector.New(dim)
		ix.vecs[model] = vi
	}
	if vi.Dim() == dim {
		vi.Reserve(n)
	}
}

// Put adds m, or replaces the memory with its key (its id in its scope,
// memory.Key). The index keeps m: callers
// must not modify it afterwards. Its vector moves into the vector index (as
// a normalised copy): the kept memory's Embedding names the model and
// dimension only.
func (ix *Index) Put(m *memory.Memory) { ix.PutAnalyzed(ix.Analyze(m)) }

// PutAnalyzed is Put for a memory already analyzed; a is spent (its row
// goes back for another Analyze).
func (ix *Index) PutAnalyzed(a Analyzed) {
	m := a.m
	m.Superseded = nil // derived: set below from what the index holds
	key := m.Key()
	doc, ok := ix.byKey[key]
	var old *memory.Memory
	if ok {
		old = ix.doc(doc)
		ix.unpost(doc)
		ix.detach(doc, old, m)
	} else {
		doc = ix.alloc()
		ix.byKey[key] = doc
		ix.live.Add(doc)
	}
	ix.setDoc(doc, m)
	ix.created[doc] = m.CreatedAt.UnixNano()
	ix.occurred[doc] = m.OccurredAt.UnixNano()
	ix.superAt[doc] = noSuperseder
	if a.toks != nil {
		if ix.stash == nil {
			ix.stash = map[uint32]*fieldTokens{}
		}
		ix.stash[doc] = a.toks
		ix.mark(doc)
	} else {
		ix.bm.AddTerms(doc, a.terms)
	}
	if old == nil || !episodeUnchanged(old, m) {
		ix.episodeInsert(doc, m)
	} // else it keeps its place in the list, and its neighbours their context
	post(ix.episodeP, m.Episode, doc)
	post(ix.supersedesP, m.Supersedes, doc)
	if e := m.Embedding; e != nil && a.row != nil {
		vi := ix.vecs[e.Model]
		if vi == nil || (vi.Len() == 0 && vi.Dim() != e.Dim) {
			vi = vector.New(e.Dim)
			ix.vecs[e.Model] = vi
		}
		if vi.Dim() == e.Dim && vi.SetRow(doc, a.row) == nil {
			ix.graphAdd(e.Model, vi, doc)
		}
		m.Embedding = ix.embeddingOf(e.Model, e.Dim)
	}
	vector.Recycle(a.row) // copied into the vector index, or not wanted
	m.Scope = ix.internScope(m.Scope)
	post(ix.types, m.Type, doc)
	post(ix.scenes, m.Scene, doc)
	post(ix.sources, m.Source, doc)
	for k, v := range m.Scope {
		post(ix.scope, k+"="+v, doc)
	}
	for _, t := range m.Tags {
		post(ix.tags, t, doc)
	}
	// Last: it may replace ix.docs[doc] by a copy of the finished m.
	ix.supersedeInsert(doc, m)
	if ix.batch == 0 {
		ix.flush()
	}
}

// detach takes doc, whose memory old is being replaced by m (nil: deleted),
// out of its episode list (unless m keeps its place and text) and out of
// what it superseded.
func (ix *Index) detach(doc uint32, old, m *memory.Memory) {
	if m == nil || !episodeUnchanged(old, m) {
		ix.episodeRemove(doc, old)
	}
	ix.supersedeRemove(doc, old)
	delete(ix.stash, doc)
}

// SetUsage refreshes the use statistics (uses, demand) of an indexed memory
// from m, the same memory as stored now, without re-indexing it. It reports
// false when the memory is not indexed. The old memory is copied, never
// changed, so readers holding it are unaffected.
func (ix *Index) SetUsage(m *memory.Memory) bool {
	return ix.SetUsageKey(m.Key(), m.Uses, m.Demand, m.DemandAt)
}

// SetUsageKey is SetUsage for the memory with key.
func (ix *Index) SetUsageKey(key string, uses int64, demand float64, at *time.Time) bool {
	doc, ok := ix.byKey[key]
	if !ok {
		return false
	}
	updated := *ix.doc(doc)
	updated.Uses, updated.Demand, updated.DemandAt = uses, demand, at
	ix.setDoc(doc, &updated)
	return true
}

// Delete removes the memory with key (memory.Key), if present.
func (ix *Index) Delete(key string) {
	doc, ok := ix.byKey[key]
	if !ok {
		return
	}
	old := ix.doc(doc)
	ix.unpost(doc)
	ix.detach(doc, old, nil)
	delete(ix.byKey, key)
	ix.live.Remove(doc)
	ix.setDoc(doc, nil)
	ix.setSuperAt(doc, nil)
	ix.free = append(ix.free, doc)
	if ix.batch == 0 {
		ix.flush()
	}
}

func (ix *Index) alloc() uint32 {
	if n := len(ix.free); n > 0 {
		doc := ix.free[n-1]
		ix.free = ix.free[:n-1]
		return doc
	}
	ix.docs = append(ix.docs, nil)
	ix.created = append(ix.created, 0)
	ix.occurred = append(ix.occurred, 0)
	ix.superAt = append(ix.superAt, noSuperseder)
	return uint32(len(ix.docs) - 1)
}

// unpost removes doc from every structure but keeps its number.
func (ix *Index) unpost(doc uint32) {
	m := ix.doc(doc)
	ix.bm.Remove(doc)
	for model, vi := range ix.vecs {
		if vi.Has(doc) {
			ix.graphRemove(model, vi, doc)
			vi.Remove(doc)
		}
	}
	unpost(ix.types, m.Type, doc)
	unpost(ix.scenes, m.Scene, doc)
	unpost(ix.sources, m.Source, doc)
	for k, v := range m.Scope {
		unpost(ix.scope, k+"="+v, doc)
	}
	for _, t := range m.Tags {
		unpost(ix.tags, t, doc)
	}
	unpost(ix.episodeP, m.Episode, doc)
	unpost(ix.supersedesP, m.Supersedes, doc)
}

func post(p map[string]*docset.Set, key string, doc uint32) {
	if key == "" {
		return
	}
	s := p[key]
	if s == nil {
		s = &docset.Set{}
		p[key] = s
	}
	s.Add(doc)
}

func unpost(p map[string]*docset.Set, key string, doc uint32) {
	if s := p[key]; s != nil {
		s.Remove(doc)
	}
}

// Get returns the memory with key (memory.Key), or nil.
func (ix *Index) Get(key string) *memory.Memory {
	if doc, ok := ix.byKey[key]; ok {
		return ix.doc(doc)
	}
	return nil
}

// KeysOf returns the keys of every memory with id, in any scope. It scans
// the index: for the rare change-log entry that names an id only.
func (ix *Index) KeysOf(id string) []string {
	var out []string
	prefix := id + "\x00" // memory.Key: the id, a NUL, the scope
	ix.live.ForEach(func(doc uint32) bool {
		if m := ix.decoded(doc); m != nil {
			if m.ID == id {
				out = append(out, m.Key())
			}
		} else if ix.pendingAt(doc) && strings.HasPrefix(ix.pend.rec[doc].key, prefix) {
			out = append(out, ix.pend.rec[doc].key)
		}
		return true
	})
	return out
}

// Doc returns the memory with document number doc.
func (ix *Index) Doc(doc uint32) *memory.Memory { return ix.doc(doc) }

// DocOf returns the document number of the memory with key (memory.Key).
func (ix *Index) DocOf(key string) (uint32, bool) {
	doc, ok := ix.byKey[key]
	return doc, ok
}

// Each calls fn for every memory (in no particular order) until it returns false.
func (ix *Index) Each(allow *docset.Set, fn func(*memory.Memory) bool) {
	for doc := range ix.docs {
		if allow.Has(uint32(doc)) {
			if m := ix.doc(uint32(doc)); m != nil && !fn(m) {
				return
			}
		}
	}
}

// Allowed compiles a filter into the set of documents it admits. It returns
// nil, meaning every document, for an empty filter.
func (ix *Index) Allowed(f *memory.Filter) *docset.Set {
	if f == nil || f.Empty() {
		return nil
	}
	var out *docset.Set
	and := func(s *docset.Set) {
		if s == nil {
			s = &docset.Set{}
		}
		if out == nil {
			out = s.Clone()
		} else {
			out.And(s)
		}
	}
	for k, v := range f.Scope {
		and(ix.scope[k+"="+v])
	}
	if f.Type != "" {
		and(ix.types[f.Type])
	}
	if f.Scene != "" {
		and(ix.scenes[f.Scene])
	}
	if f.Source != "" {
		and(ix.sources[f.Source])
	}
	for _, t := range f.Tags {
		and(ix.tags[t])
	}
	if f.Episode != "" {
		and(ix.episodeP[f.Episode])
	}
	if f.Supersedes != "" {
		and(ix.supersedesP[f.Supersedes])
	}
	if f.Since != nil || f.Until != nil {
		span := docset.New(len(ix.docs))
		lo, hi := int64(-1<<63), int64(1<<63-1)
		if f.Since != nil {
			lo = f.Since.UnixNano()
		}
		if f.Until != nil {
			hi = f.Until.UnixNano()
		}
		for doc, c := range ix.created {
			if c >= lo && c < hi && ix.live.Has(uint32(doc)) {
				span.Add(uint32(doc))
			}
		}
		and(span)
	}
	// Last, on the smallest set: what is current (nothing to remove, and
	// nil kept, when no memory is superseded).
	if f.AsOf != nil {
		and(ix.asOf(f.AsOf.UnixNano()))
	} else if f.Current {
		if cur, ok := ix.current(out); ok {
			out = cur
		}
	}
	return out
}

// OccurredIn is the set of documents in allow (nil: all) that occurred
// inside one of the windows.
func (ix *Index) OccurredIn(windows []memory.TimeWindow, allow *docset.Set) *docset.Set {
	out := docset.New(len(ix.docs))
	for doc, t := range ix.occurred {
		if !ix.live.Has(uint32(doc)) || !allow.Has(uint32(doc)) {
			continue
		}
		for _, w := range windows {
			if t >= w.Since.UnixNano() && t < w.Until.UnixNano() {
				out.Add(uint32(doc))
				break
			}
		}
	}
	return out
}

// Domain is the collection the BM25 statistics of a search in scope come
// from: the memories in the scope (a tenant sees scores that depend on its
// own memories only, DESIGN §8), or the whole index for no scope. Type, tag
// and time filters narrow the results, not the collection.
func (ix *Index) Domain(scope map[string]string) *bm25.Domain {
	if len(scope) == 0 {
		return nil
	}
	var docs *docset.Set
	for k, v := range scope {
		s := ix.scope[k+"="+v]
		if s == nil {
			s = &docset.Set{}
		}
		switch {
		case len(scope) == 1:
			docs = s // only read, under the caller's read lock: no copy
		case docs == nil:
			docs = s.Clone()
		default:
			docs.And(s)
		}
	}
	return &bm25.Domain{Key: memory.ScopeJSON(scope), Docs: docs}
}

// BM25 runs the keyword leg: the top k documents in allow (which lies inside
// domain d, nil for the whole index) for the query text, scored against d's
// statistics, and the keyword relevance signal's denominator for it, the BM25
// score of a full match if d held every query term (bm25.Index.QueryBound).
// The query is tokenized once for both.
func (ix *Index) BM25(query string, d *bm25.Domain, allow *docset.Set, k int) ([]bm25.Hit, float64) {
	return ix.BM25Terms(ix.tok.Tokens(query), d, allow, k)
}

// BM25Terms is BM25 for a query already tokenized (Tokenizer): a long
// query's reduced terms.
func (ix *Index) BM25Terms(terms []string, d *bm25.Domain, allow *docset.Set, k int) ([]bm25.Hit, float64) {
	return ix.bm.SearchIn(terms, d, allow, k), ix.bm.QueryBoundIn(terms, d)
}

// DocFreq is how many documents domain d (nil: the whole index) holds, and
// how many of them hold each of terms.
func (ix *Index) DocFreq(terms []string, d *bm25.Domain) (int, []int) {
	return ix.bm.DocFreqIn(terms, d)
}

// KeywordRelevance is, for a domain d of fewer than bm25.RelevanceMinDocs
// documents, the keyword relevance signal's parts for the BM25 leg's hits
// docs: their scores and the query's bound with the domain read as that many
// documents (bm25.Index.RelevanceIn). ok is false for a larger domain, whose
// parts are the leg's scores and bound.
func (ix *Index) KeywordRelevance(query string, d *bm25.Domain, docs []uint32) (scores []float64, bound float64, ok bool) {
	if ix.bm.LenIn(d) >= bm25.RelevanceMinDocs {
		return nil, 0, false
	}
	return ix.bm.RelevanceIn(ix.tok.Tokens(query), d, docs, bm25.RelevanceMinDocs)
}

// KeywordRelevanceTerms is KeywordRelevance for a query already tokenized.
func (ix *Index) KeywordRelevanceTerms(terms []string, d *bm25.Domain, docs []uint32) (scores []float64, bound float64, ok bool) {
	if ix.bm.LenIn(d) >= bm25.RelevanceMinDocs {
		return nil, 0, false
	}
	return ix.bm.RelevanceIn(terms, d, docs, bm25.RelevanceMinDocs)
}

// Vectors returns the vector index of a model, or nil.
func (ix *Index) Vectors(model string) *vector.Index { return ix.vecs[model] }

// Models counts the embedded memories per model.
func (ix *Index) Models() map[string]int {
	out := map[string]int{}
	for m, vi := range ix.vecs {
		if n := vi.Len(); n > 0 {
			out[m] = n
		}
	}
	return out
}
