package index

// Episodes and context. The memories of an episode (memory.EpisodeKey: a
// scope's conversation, session or task) are kept in episode order
// (memory.EpisodeOrder), so that each knows its neighbours. BM25 indexes a
// memory's own fields and, as weaker fields, the text of its Neighbours
// previous and next memories (its context) and its date, so that the answer
// turn that never repeats its topic ("They're called Peruvian Lilies.") is
// found through the question next to it, and a date in a query finds the
// memories of that day.
//
// The context is derived from the indexed memories, never stored: a write
// that moves, changes or removes a memory marks it and the memories within
// Neighbours of its old and new places, and the marked ones are re-indexed
// before the write lock is released (at once, or at the end of a batch), so
// a search always sees every context as the memories now are.

import (
	"runtime"
	"slices"
	"strconv"
	"time"

	"github.com/engram-memory/engram/internal/bm25"
	"github.com/engram-memory/engram/internal/parallel"
	"github.com/engram-memory/engram/memory"
)

// ContextOptions say what a memory's BM25 context and date fields hold.
type ContextOptions struct {
	// Neighbours is how many memories before and after a memory in its
	// episode lend their text to its context field; 0 indexes no context.
	Neighbours int
	// Dates indexes the occurred_at day ("8 May 2023", in UTC) of each
	// memory that has a time of its own in its date field: a memory of an
	// episode, or one whose occurred_at is not its created_at. (The day a
	// note was written is no evidence about its words; indexing it would
	// let any number in a query match it.)
	Dates bool
}

// DefaultContext is the context the built-in backend indexes: chosen on
// LoCoMo (docs/evaluation.md, "LoCoMo dev").
var DefaultContext = ContextOptions{Neighbours: 2, Dates: true}

// maxNeighbours bounds ContextOptions.Neighbours.
const maxNeighbours = 16

// SetContext sets what the context and date fields hold. It must be called
// before the first Put.
func (ix *Index) SetContext(o ContextOptions) {
	o.Neighbours = min(max(o.Neighbours, 0), maxNeighbours)
	ix.ctx = o
}

// fieldTokens is a memory's tokens per BM25 field.
type fieldTokens [NumFields][]string

// tokens tokenizes m's own fields (its context field left empty).
func (ix *Index) tokens(m *memory.Memory) *fieldTokens {
	var ft fieldTokens
	ft[FieldName] = ix.tok.Tokens(m.Name)
	ft[FieldDescription] = ix.tok.Tokens(m.Description)
	ft[FieldText] = ix.tok.Tokens(m.Text)
	ft[FieldSpeaker] = ix.tok.Tokens(m.Speaker)
	if ix.ctx.Dates && HasOwnTime(m) {
		ft[FieldDate] = ix.tok.Tokens(DateText(m.OccurredAt))
	}
	return &ft
}

// HasOwnTime reports whether a memory's day is indexed in its date field
// (ContextOptions.Dates): it belongs to an episode, or it occurred at
// another time than it was created (a zero OccurredAt is its CreatedAt).
func HasOwnTime(m *memory.Memory) bool {
	return m.Episode != "" || (!m.OccurredAt.IsZero() && !m.OccurredAt.Equal(m.CreatedAt))
}

// DateText is the day of t as the date field indexes it: "8 May 2023", in
// UTC.
func DateText(t time.Time) string {
	t = t.UTC()
	return strconv.Itoa(t.Day()) + " " + t.Month().String() + " " + strconv.Itoa(t.Year())
}

// needsContext reports whether m's BM25 terms depend on its neighbours.
func (ix *Index) needsContext(m *memory.Memory) bool {
	return ix.ctx.Neighbours > 0 && m.Episode != ""
}

// BeginBatch defers re-indexing the memories whose context a write changes
// until the matching EndBatch, so that a batch of writes to one episode
// re-indexes each memory once. Batches nest; the caller holds the write
// lock from BeginBatch to EndBatch.
func (ix *Index) BeginBatch() { ix.batch++ }

// EndBatch ends a batch: the memories it marked are re-indexed now.
func (ix *Index) EndBatch() {
	if ix.batch--; ix.batch <= 0 {
		ix.batch = 0
		ix.flush()
	}
}

// mark records that doc's BM25 terms must be computed again.
func (ix *Index) mark(doc uint32) {
	if ix.dirty == nil {
		ix.dirty = map[uint32]struct{}{}
	}
	ix.dirty[doc] = struct{}{}
}

// flush re-indexes the marked memories with their context, in document
// order, each neighbour's text tokenized once: the tokens are gathered
// first, the terms counted on all cores, and the index written last.
func (ix *Index) flush() {
	if len(ix.dirty) == 0 {
		return
	}
	docs := make([]uint32, 0, len(ix.dirty))
	for doc := range ix.dirty {
		if m := ix.docDoc(doc); m != nil && (ix.needsContext(m) || ix.stash[doc] != nil) {
			docs = append(docs, doc) // else indexed without context already
		}
	}
	clear(ix.dirty)
	slices.Sort(docs)
	// Every document's own tokens: stashed by Analyze, else tokenized now.
	own := make([]*fieldTokens, len(docs))
	var todo []int
	for i, doc := range docs {
		if own[i] = ix.stash[doc]; own[i] == nil {
			todo = append(todo, i)
		}
	}
	parallel.Split(min(runtime.GOMAXPROCS(0), max(1, len(todo)/64)), len(todo), func(_, lo, hi int) {
		for _, i := range todo[lo:hi] {
			own[i] = ix.tokens(ix.doc(docs[i]))
		}
	})
	texts := make(map[uint32][]string, len(docs))
	for i, doc := range docs { // every stashed document is among them
		texts[doc] = own[i][FieldText]
	}
	// The neighbours' texts not at hand yet.
	var missing []uint32
	neighbours := make([][]uint32, len(docs))
	for i, doc := range docs {
		m := ix.doc(doc)
		if ix.needsContext(m) {
			neighbours[i] = ix.neighbourDocs(doc, m, ix.ctx.Neighbours)
			for _, n := range neighbours[i] {
				if _, ok := texts[n]; !ok {
					texts[n] = nil
					missing = append(missing, n)
				}
			}
		}
	}
	got := make([][]string, len(missing))
	parallel.Split(min(runtime.GOMAXPROCS(0), max(1, len(missing)/64)), len(missing), func(_, lo, hi int) {
		for k := lo; k < hi; k++ {
			got[k] = ix.tok.Tokens(ix.doc(missing[k]).Text)
		}
	})
	for k, n := range missing {
		texts[n] = got[k]
	}
	terms := make([]bm25.Terms, len(docs))
	parallel.Split(min(runtime.GOMAXPROCS(0), max(1, len(docs)/64)), len(docs), func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			fields := *own[i]
			var ctx []string
			for _, n := range neighbours[i] {
				ctx = append(ctx, texts[n]...)
			}
			fields[FieldContext] = ctx
			terms[i] = ix.bm.Count(fields[:])
		}
	})
	for i, doc := range docs {
		ix.bm.AddTerms(doc, terms[i])
	}
	clear(ix.stash)
}

// docDoc is the memory of doc, or nil for a free or out-of-range slot.
func (ix *Index) docDoc(doc uint32) *memory.Memory {
	if int(doc) >= len(ix.docs) {
		return nil
	}
	return ix.doc(doc)
}

// position is where m stands in the episode list l (or would be inserted),
// and whether the memory there is doc.
func (ix *Index) position(l []uint32, m *memory.Memory) (int, bool) {
	return slices.BinarySearchFunc(l, m, func(d uint32, m *memory.Memory) int {
		seq, at, id := ix.orderAt(d)
		return memory.NeighbourOrder(memory.Neighbour{Seq: seq, OccurredAt: at, ID: id}, memory.Neighbour{Seq: m.Seq, OccurredAt: m.OccurredAt, ID: m.ID})
	})
}

// episodeRemove takes doc (whose memory is still old) out of its episode
// list, marking the memories within Neighbours of its place.
func (ix *Index) episodeRemove(doc uint32, old *memory.Memory) {
	key := old.EpisodeKey()
	if key == "" {
		return
	}
	l := ix.episodes[key]
	i, found := ix.position(l, old)
	if !found || l[i] != doc {
		i = slices.Index(l, doc) // equal order keys cannot happen (ids differ); be safe
		if i < 0 {
			return
		}
	}
	l = slices.Delete(l, i, i+1)
	if len(l) == 0 {
		delete(ix.episodes, key)
		return
	}
	ix.episodes[key] = l
	ix.markAround(l, i-1, i)
}

// episodeInsert puts doc (whose memory is now m) into its episode list,
// marking it and the memories within Neighbours of its place.
func (ix *Index) episodeInsert(doc uint32, m *memory.Memory) {
	key := m.EpisodeKey()
	if key == "" {
		return
	}
	if ix.episodes == nil {
		ix.episodes = map[string][]uint32{}
	}
	l := ix.episodes[key]
	i, _ := ix.position(l, m)
	l = slices.Insert(l, i, doc)
	ix.episodes[key] = l
	ix.markAround(l, i-1, i+1)
}

// markAround marks, when context is indexed, the Neighbours memories of l
// ending at index before and those starting at index after: the memories
// whose context a change between them alters.
func (ix *Index) markAround(l []uint32, before, after int) {
	k := ix.ctx.Neighbours
	if k == 0 {
		return
	}
	for i := max(0, before-k+1); i <= before && i < len(l); i++ {
		ix.mark(l[i])
	}
	for i := max(after, 0); i < min(len(l), after+k); i++ {
		ix.mark(l[i])
	}
}

// episodeUnchanged reports whether replacing old by m leaves the episode
// lists and every neighbour's context as they were.
func episodeUnchanged(old, m *memory.Memory) bool {
	return old.EpisodeKey() == m.EpisodeKey() && memory.EpisodeOrder(old, m) == 0 && old.Text == m.Text
}

// around returns the documents of up to k memories before doc (whose memory
// is m) in its episode and up to k after, in episode order; they share the
// episode list's array, which the caller only reads.
func (ix *Index) around(doc uint32, m *memory.Memory, k int) (before, after []uint32) {
	l := ix.episodes[m.EpisodeKey()]
	i, found := ix.position(l, m)
	if !found || l[i] != doc {
		return nil, nil
	}
	return l[max(0, i-k):i], l[i+1 : min(len(l), i+1+k)]
}

// neighbourDocs is around's documents as one list, before then after.
func (ix *Index) neighbourDocs(doc uint32, m *memory.Memory, k int) []uint32 {
	before, after := ix.around(doc, m, k)
	return append(slices.Clip(before), after...)
}

// Neighbours returns the memories before and after the memory with key in
// its episode, up to k each, in episode order (nil for a memory in no
// episode, or none indexed).
func (ix *Index) Neighbours(key string, k int) (before, after []*memory.Memory) {
	doc, ok := ix.byKey[key]
	if !ok || k <= 0 {
		return nil, nil
	}
	b, a := ix.around(doc, ix.doc(doc), k)
	for _, d := range b {
		before = append(before, ix.doc(d))
	}
	for _, d := range a {
		after = append(after, ix.doc(d))
	}
	return before, after
}

// rebuildEpisodes builds the episode lists from the episode postings and
// what the snapshot read recorded of each memory (after a snapshot read),
// without re-indexing or decoding anything.
func (ix *Index) rebuildEpisodes() {
	ix.episodes = map[string][]uint32{}
	for episode, docs := range ix.episodeP {
		docs.ForEach(func(doc uint32) bool {
			key := ix.episodeKeyAt(doc, episode)
			ix.episodes[key] = append(ix.episodes[key], doc)
			return true
		})
	}
	for _, l := range ix.episodes {
		slices.SortFunc(l, ix.episodeOrder)
	}
}

// ContextOf is the text of the neighbours whose words the memory with key
// has in its context field, in episode order: for tests that check the
// index against what its memories say.
func (ix *Index) ContextOf(key string) []string {
	before, after := ix.Neighbours(key, ix.ctx.Neighbours)
	var out []string
	for _, m := range append(before, after...) {
		out = append(out, m.Text)
	}
	return out
}
