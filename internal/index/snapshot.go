package index

// Snapshots: the whole index — every memory, the BM25 index and one vector
// index per model — written to and read back from a sectioned binenc stream
// (binenc.Sections): the memories in chunks, BM25, each model's vectors and
// graph are sections with checksums of their own, so a reader verifies and
// decodes them on all cores at once. Document numbers, free slots and
// posting order are kept exactly, so a loaded index answers every search as
// the written one did; the id map, creation times and filter postings are
// rebuilt from a light pass over the memories' records (cheap, chunk by
// chunk), which stay pending in their chunks until used (lazy.go), and
// everything read is checked for consistency before it is used.

import (
	"encoding/binary"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/engram-memory/engram/internal/ann"
	"github.com/engram-memory/engram/internal/binenc"
	"github.com/engram-memory/engram/internal/bm25"
	"github.com/engram-memory/engram/internal/docset"
	"github.com/engram-memory/engram/internal/tokenize"
	"github.com/engram-memory/engram/internal/vector"
	"github.com/engram-memory/engram/memory"
)

// snapshotVersion changes whenever the layout below (or a nested one) does.
// 2: each model's vectors are followed by its ANN graph, if it has one.
// 3: a memory's strings in one array (memoryCodec).
// 4: sections (binenc.Sections), read in parallel: a head, the memories in
// chunks of snapshotChunk slots, BM25, then per model its vectors and graph.
// 5: BM25's large arrays mappable (bm25 snapshot version 3).
// 6: the vectors carry their sign sketches (vector snapshot version 4).
// 7: the episode fields and supersedes; the context options in the head.
// 8: each model's float32 matrix in a section of its own, checked lazily
// (vector snapshot version 5).
const snapshotVersion = 8

// snapshotChunk is the number of document slots per memories section that
// WriteSnapshot writes (the head records it): small enough that the chunks of
// 100k memories spread over a few cores, large enough that a section's fixed
// costs (a reader, a checksum) do not count. A variable so tests can lower it.
var snapshotChunk = 4096

// maxSnapshotChunk bounds the chunk size a reader accepts.
const maxSnapshotChunk = 1 << 20

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

// WriteSnapshot writes the index to w as sections (w.EndSection after each),
// for ReadSnapshot to verify and decode them concurrently. The caller holds
// at least a read lock.
func (ix *Index) WriteSnapshot(w *binenc.Writer) {
	// The head: what the reader needs to claim every other section.
	w.Uint32(snapshotVersion)
	o := ix.tok.Options()
	w.Bool(o.Stem)
	w.Bool(o.Stopwords)
	w.Uint32(uint32(ix.ctx.Neighbours))
	w.Bool(ix.ctx.Dates)
	w.Uint64(uint64(len(ix.docs)))
	chunk := snapshotChunk
	w.Uint64(uint64(chunk))
	w.Uint32s(ix.free)
	models := make([]string, 0, len(ix.vecs))
	for model := range ix.vecs {
		models = append(models, model)
	}
	slices.Sort(models)
	w.Uint64(uint64(len(models)))
	for _, model := range models {
		w.String(model)
		w.Bool(ix.graphs[model] != nil)
	}
	w.EndSection()
	var c memoryCodec
	for lo := 0; lo < len(ix.docs); lo += chunk {
		for doc := lo; doc < min(lo+chunk, len(ix.docs)); doc++ {
			m := ix.decoded(uint32(doc))
			if m == nil && ix.pendingAt(uint32(doc)) {
				// Unchanged since it was read: its record as it was.
				w.Bool(true)
				w.RawBytes(ix.pend.bytes(uint32(doc)))
				continue
			}
			w.Bool(m != nil)
			if m != nil {
				c.write(w, m)
			}
		}
		w.EndSection()
	}
	ix.bm.WriteSnapshot(w)
	w.EndSection()
	for _, model := range models {
		ix.vecs[model].WriteSnapshot(w) // two sections, the first ended
		w.EndSection()
		if g := ix.graphs[model]; g != nil {
			g.WriteSnapshot(w)
			w.EndSection()
		}
	}
}

// ReadSnapshot reads an index written by WriteSnapshot from the next
// sections of s, for tokenizer tok, BM25 parameters p and context options
// co, which must equal those it was written with; ao configures the approximate index from here
// on (a graph in the snapshot is used as it is, never rebuilt). The sections
// are verified and decoded on up to GOMAXPROCS goroutines, and the lookups
// (key map, filter postings) built from each chunk of memories as it
// arrives; every goroutine has ended when it returns. Any inconsistency, or
// a section whose checksum fails, is an error.
func ReadSnapshot(s *binenc.Sections, tok *tokenize.Tokenizer, p bm25.Params, co ContextOptions, ao ANNOptions) (*Index, error) {
	defer pauseGC()() // gcpause.go
	ix := New(tok, p)
	ix.SetANN(ao)
	ix.SetContext(co)
	head := s.Next()
	if v := head.Uint32(); head.Err() == nil && v != snapshotVersion {
		head.Corruptf("index snapshot version %d, want %d", v, snapshotVersion)
	}
	o := tok.Options()
	if stem, stop := head.Bool(), head.Bool(); head.Err() == nil && (stem != o.Stem || stop != o.Stopwords) {
		head.Corruptf("index snapshot tokenizer (stem %t, stopwords %t) differs from (stem %t, stopwords %t)", stem, stop, o.Stem, o.Stopwords)
	}
	if nb, dates := head.Uint32(), head.Bool(); head.Err() == nil && (int(nb) != ix.ctx.Neighbours || dates != ix.ctx.Dates) {
		head.Corruptf("index snapshot context (%d neighbours, dates %t) differs from (%d neighbours, dates %t)", nb, dates, ix.ctx.Neighbours, ix.ctx.Dates)
	}
	slots, chunk := head.Uint64(), head.Uint64()
	if head.Err() == nil && (chunk < 1 || chunk > maxSnapshotChunk) {
		head.Corruptf("index snapshot: chunks of %d memories", chunk)
	}
	ix.free = head.Uint32s()
	nmodels := head.Count(8 + 4)
	models := make([]string, nmodels)
	hasGraph := make([]bool, nmodels)
	for i := range models {
		models[i], hasGraph[i] = head.String(), head.Bool()
		if i > 0 && head.Err() == nil && models[i] <= models[i-1] {
			head.Corruptf("index snapshot: model %q after %q", models[i], models[i-1])
		}
	}
	if err := head.Verify(); err != nil {
		return nil, fmt.Errorf("index snapshot head: %w", err)
	}
	// Claim every section before allocating for the slot count: each slot
	// holds at least its 4-byte presence flag in its chunk's section.
	if slots > uint64(s.Left())*chunk {
		return nil, fmt.Errorf("%w: index snapshot: %d slots in chunks of %d need more than the %d sections left", binenc.ErrCorrupt, slots, chunk, s.Left())
	}
	nchunks := (slots + chunk - 1) / chunk
	chunks := make([]*binenc.Reader, nchunks)
	var chunkBytes int64
	for i := range chunks {
		chunks[i] = s.Next()
		chunkBytes += chunks[i].Remaining()
	}
	if slots > uint64(chunkBytes)/4 {
		return nil, fmt.Errorf("%w: index snapshot: %d slots in %d bytes", binenc.ErrCorrupt, slots, chunkBytes)
	}
	bmr := s.Next()
	matr := make([]*binenc.Reader, nmodels)
	vecr := make([]*binenc.Reader, nmodels)
	graphr := make([]*binenc.Reader, nmodels)
	for i := range models {
		matr[i], vecr[i] = s.Next(), s.Next()
		if hasGraph[i] {
			graphr[i] = s.Next()
		}
	}
	n := int(slots)
	ix.docs = make([]*memory.Memory, n)
	ix.created = make([]int64, n)
	ix.occurred = make([]int64, n)
	ix.superAt = make([]int64, n)
	ix.byKey = make(map[string]uint32, max(0, n-len(ix.free)))

	var (
		errMu    sync.Mutex
		firstErr error
		failed   atomic.Bool
	)
	fail := func(err error) {
		errMu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		errMu.Unlock()
		failed.Store(true)
	}
	// section is the task that decodes one section with read and verifies
	// its checksum, failing the load with what it was on error.
	section := func(r *binenc.Reader, what string, read func() error) func() {
		return func() {
			if failed.Load() {
				return
			}
			err := read()
			if err == nil {
				err = r.Verify()
			}
			if err != nil {
				fail(fmt.Errorf("index snapshot: %s: %w", what, err))
			}
		}
	}
	// The tasks: BM25 first, the longest now that memories are read by a
	// light pass (at 10,000 memories about 4 ms of CPU, the three chunks
	// of memories together as much), so that it runs beside them instead
	// of after; then the memories, in order (the lookups wait on them in
	// order), then the models' sections (an in-process call 0.2-1.1 ms
	// sooner than with BM25 after the memories, medians of 60 in turns).
	var tasks []func()
	tasks = append(tasks, section(bmr, "BM25", func() error { return ix.bm.ReadSnapshot(bmr) }))
	done := make([]chan struct{}, nchunks)
	var intern sync.Mutex // guards ix.scopes and ix.embeds while chunks decode
	keys := make([]chunkKeys, nchunks)
	// The memories stay in their chunks (lazy.go): mapped from the file,
	// where it can be, else read.
	data := make([][]byte, nchunks)
	var closers []io.Closer
	for i, r := range chunks {
		if b, c, err := r.MapPayload(); err == nil {
			data[i] = b
			closers = append(closers, c)
		}
	}
	ix.pend = newPending(int(chunk), n, data, closers)
	for i, r := range chunks {
		done[i] = make(chan struct{})
		lo := i * int(chunk)
		hi := min(lo+int(chunk), n)
		tasks = append(tasks, func() {
			defer close(done[i])
			if failed.Load() {
				return
			}
			if data[i] == nil {
				data[i] = r.Rest()
			} else {
				r.SkipRest()
			}
			err := r.Err()
			if err == nil {
				err = ix.readChunk(r, data[i], lo, hi, &intern, &keys[i])
			}
			if err != nil {
				fail(fmt.Errorf("index snapshot memories %d-%d: %w", lo, hi-1, err))
			}
		})
	}
	vecs := make([]*vector.Index, nmodels)
	graphs := make([]*ann.Graph, nmodels)
	for i, model := range models {
		what := fmt.Sprintf("model %q", model)
		tasks = append(tasks, section(vecr[i], what, func() (err error) {
			vecs[i], err = vector.ReadSnapshot(matr[i], vecr[i], n)
			return err
		}))
		if graphr[i] != nil {
			tasks = append(tasks, section(graphr[i], what, func() (err error) {
				graphs[i], err = ann.ReadSnapshot(graphr[i], n)
				return err
			}))
		}
	}
	var wg sync.WaitGroup
	// The lookups, on two goroutines of their own (the key map, and the
	// filter postings): chunk by chunk, in order.
	for _, index := range []func(lo, hi int, keys *chunkKeys) error{ix.indexKeys, ix.indexPostings} {
		wg.Go(func() {
			for i := range chunks {
				<-done[i]
				if failed.Load() {
					return
				}
				lo := i * int(chunk)
				if err := index(lo, min(lo+int(chunk), n), &keys[i]); err != nil {
					fail(err)
					return
				}
			}
		})
	}
	queue := make(chan func(), len(tasks))
	for _, t := range tasks {
		queue <- t
	}
	close(queue)
	for range min(runtime.GOMAXPROCS(0), len(tasks)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for t := range queue {
				t()
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	corrupt := func(format string, args ...any) (*Index, error) {
		return nil, fmt.Errorf("%w: index snapshot: %s", binenc.ErrCorrupt, fmt.Sprintf(format, args...))
	}
	for i, model := range models {
		vi := vecs[i]
		for doc := range vi.Docs() {
			var e *memory.Embedding
			if int(doc) < n && ix.live.Has(doc) {
				e = ix.embeddingAt(doc)
			}
			if e == nil || e.Model != model || e.Dim != vi.Dim() {
				return corrupt("vector of model %q for document %d that has none", model, doc)
			}
		}
		if g := graphs[i]; g != nil {
			if g.Dim() != vi.Dim() {
				return corrupt("model %q has %d-d vectors but a %d-d graph", model, vi.Dim(), g.Dim())
			}
			if err := g.Check(vi, vi.Len()); err != nil {
				return corrupt("model %q: %v", model, err)
			}
			ix.graphs[model] = g
		}
		ix.vecs[model] = vi
	}
	if err := ix.checkFree(); err != nil {
		return nil, err
	}
	if ix.bm.Len() != len(ix.byKey) {
		return corrupt("%d memories but %d in BM25", len(ix.byKey), ix.bm.Len())
	}
	missing := -1
	ix.live.ForEach(func(doc uint32) bool {
		if !ix.bm.Has(doc) {
			missing = int(doc)
		}
		return missing < 0
	})
	if missing >= 0 {
		return corrupt("memory %d missing from BM25", missing)
	}
	// Derived, not stored: the episode lists and what supersedes what.
	ix.rebuildEpisodes()
	ix.rebuildSupersession()
	ix.wantGraphs = true // a model past the threshold without a graph gets one built
	return ix, nil
}

// chunkKeys is what the light pass over a chunk of memories computes for
// the lookups, by slot from the chunk's first: each memory's key, its
// scope's "key=value" postings, and its other filter values and tags
// ("" and nil for an empty slot). The values and tags are views of the
// chunk's bytes: a posting list takes a copy of a value it has not met.
type chunkKeys struct {
	keys []string
	kvs  [][]string
	vals [][numValues]string
	tags [][]string
}

// The filter values of chunkKeys.vals, in order.
const (
	valType = iota
	valScene
	valSource
	valEpisode
	valSupersedes
	numValues
)

// scopeText is what the lookups need of one interned scope.
type scopeText struct {
	json string   // memory.ScopeJSON
	kv   []string // "key=value" per entry
}

// readChunk reads the memories of slots lo to hi from their section r,
// leaving them pending (lazy.go) in data, the section's payload (mapped, or
// read), which it reads with the light pass: what the index needs of each
// memory goes to ix.pend's records, the times to ix.created and
// ix.occurred, the keys and filter values to keys for indexKeys and
// indexPostings. The decoder is the one that decodes the memory later, so
// both accept the same records. A memory with a vector of its own (one
// the index could not use) is decoded now. It verifies r.
func (ix *Index) readChunk(r *binenc.Reader, data []byte, lo, hi int, intern *sync.Mutex, keys *chunkKeys) error {
	c := memoryCodec{intern: intern, view: true}
	in := binenc.NewPayloadReader(data)
	n := hi - lo
	keys.keys = make([]string, n)
	keys.kvs = make([][]string, n)
	keys.vals = make([][numValues]string, n)
	keys.tags = make([][]string, n)
	// Scopes are interned, so memories of one scope share its map: its text
	// is computed once per chunk, found by the map's identity.
	scopes := map[unsafe.Pointer]*scopeText{}
	var keyArena []byte // the keys' bytes: appended to, never rewritten
	var tagArena []string
	var m memory.Memory
	for doc := lo; doc < hi; doc++ {
		rc := &ix.pend.rec[doc]
		rc.off = noRecord
		if !in.Bool() {
			if in.Err() != nil {
				return in.Err()
			}
			continue
		}
		at := in.Offset()
		c.read(in, ix, &m)
		if in.Err() != nil {
			return in.Err()
		}
		if m.ID == "" {
			in.Corruptf("memory without an id in slot %d", doc)
			return in.Err()
		}
		ix.created[doc] = m.CreatedAt.UnixNano()
		ix.occurred[doc] = m.OccurredAt.UnixNano()
		*rc = record{off: at, end: in.Offset(), seq: m.Seq, sec: m.OccurredAt.Unix(), nsec: uint32(m.OccurredAt.Nanosecond()), scope: m.Scope}
		json := "{}"
		if len(m.Scope) > 0 {
			id := *(*unsafe.Pointer)(unsafe.Pointer(&m.Scope)) // the map's identity
			st := scopes[id]
			if st == nil {
				st = &scopeText{json: memory.ScopeJSON(m.Scope)}
				for k, v := range m.Scope {
					st.kv = append(st.kv, k+"="+v)
				}
				scopes[id] = st
			}
			json, keys.kvs[doc-lo] = st.json, st.kv
		}
		// memory.Key, carved out of the chunk's key arena: a million keys
		// were a million allocations (0.1 s of CPU at 1M memories).
		kn := len(m.ID) + 1 + len(json)
		if kn > cap(keyArena)-len(keyArena) {
			keyArena = make([]byte, 0, max(kn, min(64<<10, (hi-doc)*64)))
		}
		k := len(keyArena)
		keyArena = append(append(append(keyArena, m.ID...), 0), json...)
		rc.key = unsafe.String(&keyArena[k], kn)
		keys.keys[doc-lo] = rc.key
		keys.vals[doc-lo] = [numValues]string{m.Type, m.Scene, m.Source, m.Episode, m.Supersedes}
		if len(m.Tags) > 0 {
			t := len(tagArena)
			tagArena = append(tagArena, m.Tags...)
			keys.tags[doc-lo] = tagArena[t:len(tagArena):len(tagArena)]
		}
		if e := m.Embedding; e != nil && e.Vector != nil {
			ix.docs[doc] = ix.pend.decode(ix, uint32(doc))
			rc.off = noRecord
		} else {
			rc.embed = e
		}
	}
	if in.Remaining() != 0 {
		in.Corruptf("%d bytes after the memories", in.Remaining())
		return in.Err()
	}
	return r.Verify()
}

// indexKeys builds the key map of the memories of slots lo to hi, whose
// keys readChunk computed; a key seen twice is an error.
func (ix *Index) indexKeys(lo, hi int, keys *chunkKeys) error {
	for doc := lo; doc < hi; doc++ {
		key := keys.keys[doc-lo]
		if key == "" {
			continue
		}
		had := len(ix.byKey)
		ix.byKey[key] = uint32(doc)
		if len(ix.byKey) == had {
			id, scope := memory.SplitKey(key)
			return fmt.Errorf("%w: index snapshot: memory %q twice in scope %s", binenc.ErrCorrupt, id, scope)
		}
	}
	return nil
}

// indexPostings builds the filter postings of the memories of slots lo to
// hi from what readChunk found. Chunks are indexed in order, so every
// posting list stays ascending.
func (ix *Index) indexPostings(lo, hi int, keys *chunkKeys) error {
	for doc := lo; doc < hi; doc++ {
		if keys.keys[doc-lo] == "" {
			continue
		}
		v := &keys.vals[doc-lo]
		postView(ix.types, v[valType], uint32(doc))
		postView(ix.scenes, v[valScene], uint32(doc))
		postView(ix.sources, v[valSource], uint32(doc))
		for _, kv := range keys.kvs[doc-lo] {
			post(ix.scope, kv, uint32(doc))
		}
		for _, t := range keys.tags[doc-lo] {
			postView(ix.tags, t, uint32(doc))
		}
		postView(ix.episodeP, v[valEpisode], uint32(doc))
		postView(ix.supersedesP, v[valSupersedes], uint32(doc))
		ix.live.Add(uint32(doc))
	}
	return nil
}

// postView is post for a key that may be a view of bytes the index does
// not keep: a new posting list's key is a copy.
func postView(p map[string]*docset.Set, key string, doc uint32) {
	if s := p[key]; s != nil {
		s.Add(doc)
		return
	}
	post(p, strings.Clone(key), doc)
}

// checkFree verifies that the free list names exactly the empty slots.
func (ix *Index) checkFree() error {
	seen := make([]bool, len(ix.docs))
	for _, doc := range ix.free {
		if int(doc) >= len(ix.docs) || ix.live.Has(doc) || seen[doc] {
			return fmt.Errorf("%w: index snapshot: bad free slot %d", binenc.ErrCorrupt, doc)
		}
		seen[doc] = true
	}
	if len(ix.free)+len(ix.byKey) != len(ix.docs) {
		return fmt.Errorf("%w: index snapshot: %d slots, %d memories, %d free", binenc.ErrCorrupt, len(ix.docs), len(ix.byKey), len(ix.free))
	}
	return nil
}

// A memory is written as its flags, the lengths of its strings, all its
// strings in one byte array (the eight text fields, the scope's keys and
// values, the tags, the embedding's model), then its other fields: a reader
// makes one allocation for all its text, and finds the scope and embedding
// it shares with other memories (interned, index.go) without allocating.
const memoryStrings = 11 // ID … ContentHash, Episode, Speaker, Supersedes

// memoryCodec holds an encoder's or decoder's scratch space, and a
// decoder's arenas: the memories it decodes share their text and tag lists
// in buffers of about 64 KiB.
type memoryCodec struct {
	lens []uint32
	blob []byte
	key  []byte
	// Decoding: intern (nil when decoding alone) guards the index's shared
	// scopes and embeddings; text and tags are carved from the arenas.
	intern *sync.Mutex
	text   []byte
	tags   []string
	pairs  []string
	// What this decoder found interned, so that it takes the lock only for
	// a scope or embedding it has not met yet.
	scopes map[string]map[string]string
	embed  *memory.Embedding // the last description interned; with given, the memory's
	// view: the light pass (readChunk). A memory's strings are views of
	// the input, valid only until the next read; what is interned is
	// copied first.
	view bool
	// single: one memory decoded on its own (pending.decode), its arenas
	// sized to it. given: its scope and embedding are those the light pass
	// interned (scope, embed), looked up in no table.
	single, given bool
	scope         map[string]string
}

// scopeOf is ix.scopeOf of c.pairs, through the decoder's own cache.
func (c *memoryCodec) scopeOf(ix *Index) map[string]string {
	if c.intern == nil {
		return ix.scopeOf(c.pairs, &c.key)
	}
	if len(c.pairs) == 0 {
		return map[string]string{}
	}
	b := c.key[:0]
	for _, p := range c.pairs {
		b = binary.AppendUvarint(b, uint64(len(p)))
		b = append(b, p...)
	}
	c.key = b
	if s, ok := c.scopes[string(b)]; ok {
		return s
	}
	if c.view {
		for i, p := range c.pairs {
			c.pairs[i] = strings.Clone(p) // kept by the interned map
		}
	}
	c.intern.Lock()
	s := ix.scopeOf(c.pairs, &c.key)
	c.intern.Unlock()
	if c.scopes == nil {
		c.scopes = map[string]map[string]string{}
	}
	c.scopes[string(c.key)] = s
	return s
}

// embeddingOf is ix.embeddingOf, through the decoder's own cache.
func (c *memoryCodec) embeddingOf(ix *Index, model string, dim int) *memory.Embedding {
	if e := c.embed; e != nil && e.Model == model && e.Dim == dim {
		return e
	}
	if c.view {
		model = strings.Clone(model) // kept by the interned description
	}
	if c.intern != nil {
		c.intern.Lock()
		defer c.intern.Unlock()
	}
	c.embed = ix.embeddingOf(model, dim)
	return c.embed
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
	for _, f := range []string{m.ID, m.Name, m.Description, m.Text, m.Type, m.Scene, m.Source, m.ContentHash, m.Episode, m.Speaker, m.Supersedes} {
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
	writeTime(w, m.OccurredAt)
	w.Int64(m.Seq)
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

// read decodes a memory into m, sharing scopes and embedding descriptions
// through ix; errors stay in r.
func (c *memoryCodec) read(r *binenc.Reader, ix *Index, m *memory.Memory) {
	flags := r.Uint32()
	if r.Err() == nil && flags >= flagVector<<1 {
		r.Corruptf("memory flags %#x", flags)
	}
	nscope, ntags := int(r.Uint32()), int(r.Uint32())
	c.lens = r.Uint32sTo(c.lens)
	lens := c.lens
	var blob []byte
	if c.view {
		blob = r.BytesView()
	} else {
		blob = r.BytesShared(&c.text)
	}
	if r.Err() != nil {
		return
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
		return
	}
	next := func() string {
		n := int(lens[0])
		lens = lens[1:]
		s := unsafe.String(unsafe.SliceData(blob), n)
		blob = blob[n:]
		return s
	}
	*m = memory.Memory{
		ID: next(), Name: next(), Description: next(), Text: next(),
		Type: next(), Scene: next(), Source: next(), ContentHash: next(),
		Episode: next(), Speaker: next(), Supersedes: next(),
	}
	if flags&flagScope != 0 {
		c.pairs = c.pairs[:0]
		for range 2 * nscope {
			c.pairs = append(c.pairs, next())
		}
		if c.given {
			m.Scope = c.scope
		} else {
			m.Scope = c.scopeOf(ix)
		}
	} else if nscope != 0 {
		r.Corruptf("memory %s: scope entries without a scope", m.ID)
		return
	}
	if flags&flagTags != 0 && ntags == 0 {
		m.Tags = []string{}
	} else if flags&flagTags != 0 {
		switch {
		case c.view:
			c.tags = slices.Grow(c.tags[:0], ntags) // scratch: the light pass keeps none
			m.Tags = c.tags[:ntags:ntags]
		case ntags > len(c.tags) && c.single:
			m.Tags = make([]string, ntags)
		default:
			if ntags > len(c.tags) {
				c.tags = make([]string, max(ntags, 1024))
			}
			m.Tags = c.tags[:ntags:ntags]
			c.tags = c.tags[ntags:]
		}
		for i := range m.Tags {
			m.Tags[i] = next()
		}
	} else if ntags != 0 {
		r.Corruptf("memory %s: tags without tags", m.ID)
		return
	}
	var model string
	if flags&flagEmbedding != 0 {
		model = next()
	}
	var meta []byte
	if c.view {
		meta = r.BytesView()
	} else {
		meta = r.BytesShared(&c.text)
	}
	if flags&flagMetadata != 0 {
		m.Metadata = nonNil(meta)
	}
	m.Favorite = flags&flagFavorite != 0
	m.CreatedAt = readTime(r)
	m.UpdatedAt = readTime(r)
	m.OccurredAt = readTime(r)
	if m.Seq = r.Int64(); r.Err() == nil && (m.Seq < 0 || m.Seq > memory.MaxSeq || (m.Seq != 0 && m.Episode == "")) {
		r.Corruptf("memory %s: seq %d", m.ID, m.Seq)
	}
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
		switch {
		case flags&flagVector != 0:
			m.Embedding = &memory.Embedding{Model: model, Dim: int(dim), Vector: nonNil(r.Float32s())}
		case c.given:
			m.Embedding = c.embed
		default:
			m.Embedding = c.embeddingOf(ix, model, int(dim))
		}
	}
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
