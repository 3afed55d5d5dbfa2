package index

// Memories read from a snapshot are decoded when first used. Reading a
// snapshot builds what every search needs (the key map, filter postings,
// times, episode lists, BM25, vectors) from a light pass over each memory's
// record; the memory itself stays in its chunk section, mapped from the
// file, until something asks for it (a search result, a write, a
// neighbour). A call that opens a store of 10,000 memories and reads ten of
// them then builds ten memory structs, not 10,000 (with their text copied
// to the heap): most of what opening a store cost.
//
// A slot's memory is one pointer in ix.docs: nil until decoded (or for a
// free slot), set once. Readers, which hold the caller's read lock and may
// decode at the same time, load and set it atomically; writers, which hold
// the write lock, replace it the same way. A decoded memory owns its bytes
// (text, tags and metadata are copied), so it outlives the mapping, which
// is unmapped once the index is unreachable.

import (
	"fmt"
	"io"
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/engram-memory/engram/internal/binenc"
	"github.com/engram-memory/engram/memory"
)

// noRecord marks a slot whose memory is not pending: free, or decoded
// (or replaced) since.
const noRecord = -1

// pending holds the memories a snapshot read left in their records.
type pending struct {
	chunk int      // slots per chunk
	data  [][]byte // by chunk: the section's payload, mapped from the file
	rec   []record // by slot
}

// record is what the light pass kept of a pending memory: where its record
// lies, and what loading the index needs of it without decoding it.
type record struct {
	off, end int64  // the record in its chunk's payload; off is noRecord when not pending
	nsec     uint32 // occurred_at's nanoseconds
	sec      int64  // occurred_at in Unix seconds
	seq      int64
	key      string            // memory.Key
	scope    map[string]string // interned, as the decoded memory has it
	embed    *memory.Embedding // interned; nil without an embedding (or with a vector of its own, decoded at once)
}

// occurred is the memory's occurred_at.
func (rc *record) occurred() time.Time { return time.Unix(rc.sec, int64(rc.nsec)).UTC() }

// bytes is slot d's record as the snapshot holds it.
func (p *pending) bytes(d uint32) []byte {
	rc := &p.rec[d]
	return p.data[int(d)/p.chunk][rc.off:rc.end]
}

// newPending returns the pending memories of slots slots read in chunks of
// chunk slots: data are the chunks' payloads (filled in as they are read),
// closers their mappings, closed once p is unreachable. The light pass
// fills the records.
func newPending(chunk, slots int, data [][]byte, closers []io.Closer) *pending {
	p := &pending{chunk: chunk, data: data, rec: make([]record, slots)}
	if len(closers) > 0 {
		runtime.AddCleanup(p, func(cs []io.Closer) {
			for _, c := range cs {
				_ = c.Close()
			}
		}, closers)
	}
	return p
}

// slot is a pointer to ix.docs[d], for atomic access.
func (ix *Index) slot(d uint32) *unsafe.Pointer {
	return (*unsafe.Pointer)(unsafe.Pointer(&ix.docs[d]))
}

// doc returns the memory of slot d, or nil for a free slot, decoding it from
// the snapshot on first use. Safe under a read lock.
func (ix *Index) doc(d uint32) *memory.Memory {
	s := ix.slot(d)
	if m := (*memory.Memory)(atomic.LoadPointer(s)); m != nil || !ix.pendingAt(d) {
		return m
	}
	m := ix.pend.decode(ix, d)
	if atomic.CompareAndSwapPointer(s, nil, unsafe.Pointer(m)) {
		return m
	}
	return (*memory.Memory)(atomic.LoadPointer(s)) // another reader decoded it first
}

// decoded returns slot d's memory if it is decoded, or nil.
func (ix *Index) decoded(d uint32) *memory.Memory {
	return (*memory.Memory)(atomic.LoadPointer(ix.slot(d)))
}

// setDoc makes m (nil: none) the memory of slot d. The caller holds the
// write lock (or is loading).
func (ix *Index) setDoc(d uint32, m *memory.Memory) {
	atomic.StorePointer(ix.slot(d), unsafe.Pointer(m))
	if ix.pendingAt(d) {
		ix.pend.rec[d] = record{off: noRecord}
	}
}

// pendingAt reports whether slot d's memory is still in its record.
func (ix *Index) pendingAt(d uint32) bool {
	return ix.pend != nil && int(d) < len(ix.pend.rec) && ix.pend.rec[d].off != noRecord
}

// decode decodes slot d's memory from its record, which the load verified.
func (p *pending) decode(ix *Index, d uint32) *memory.Memory {
	rc := &p.rec[d]
	r := binenc.NewPayloadReader(p.bytes(d))
	c := memoryCodec{single: true, given: true, scope: rc.scope, embed: rc.embed}
	m := new(memory.Memory)
	c.read(r, ix, m)
	if id, _ := memory.SplitKey(rc.key); r.Unchecked() != nil || m.ID != id {
		// Cannot happen: the light pass read these bytes with the same code
		// and found them whole, and mmap.Lease keeps them as checked. Should
		// it, the index says it is corrupt (Corrupt), so that its owner
		// rebuilds it, and the memory is what the light pass kept of it.
		err := r.Unchecked()
		if err == nil {
			err = fmt.Errorf("%w: memory %q decodes as %q", binenc.ErrCorrupt, id, m.ID)
		}
		err = fmt.Errorf("index snapshot: pending memory %d: %w", d, err)
		ix.lazyErr.CompareAndSwap(nil, &err)
		return &memory.Memory{ID: id, Scope: rc.scope, Embedding: rc.embed, Seq: rc.seq, OccurredAt: rc.occurred()}
	}
	return m
}

// episodeKeyAt is memory.EpisodeKey of slot d's memory, whose episode is
// episode ("" for a free slot).
func (ix *Index) episodeKeyAt(d uint32, episode string) string {
	if m := ix.decoded(d); m != nil {
		return m.EpisodeKey()
	}
	if ix.pendingAt(d) {
		_, scope := memory.SplitKey(ix.pend.rec[d].key)
		return scope + "\x00" + episode
	}
	return ""
}

// scopeAt is slot d's memory's scope.
func (ix *Index) scopeAt(d uint32) map[string]string {
	if m := ix.decoded(d); m != nil {
		return m.Scope
	}
	if ix.pendingAt(d) {
		return ix.pend.rec[d].scope
	}
	return nil
}

// embeddingAt is slot d's memory's embedding.
func (ix *Index) embeddingAt(d uint32) *memory.Embedding {
	if m := ix.decoded(d); m != nil {
		return m.Embedding
	}
	if ix.pendingAt(d) {
		return ix.pend.rec[d].embed
	}
	return nil
}

// orderAt is what memory.EpisodeOrder compares of slot d's memory (zeros
// for a free slot).
func (ix *Index) orderAt(d uint32) (seq int64, at time.Time, id string) {
	if m := ix.decoded(d); m != nil {
		return m.Seq, m.OccurredAt, m.ID
	}
	if ix.pendingAt(d) {
		rc := &ix.pend.rec[d]
		id, _ = memory.SplitKey(rc.key)
		return rc.seq, rc.occurred(), id
	}
	return 0, time.Time{}, ""
}

// episodeOrder is memory.EpisodeOrder of slots a and b (NeighbourOrder is
// the same order), decoding neither.
func (ix *Index) episodeOrder(a, b uint32) int {
	sa, ta, ia := ix.orderAt(a)
	sb, tb, ib := ix.orderAt(b)
	return memory.NeighbourOrder(memory.Neighbour{Seq: sa, OccurredAt: ta, ID: ia}, memory.Neighbour{Seq: sb, OccurredAt: tb, ID: ib})
}
