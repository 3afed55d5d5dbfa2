package index

import (
	"unsafe"

	"github.com/engram-memory/engram/internal/docset"
	"github.com/engram-memory/engram/memory"
)

// Footprint estimates the index's memory by component, in bytes: what its
// slices hold (capacity), strings by length, map entries at their share of the
// table, and what memories share (interned scopes, embedding descriptions)
// once. It reads every memory: for reports, not hot paths.
type Footprint struct {
	Memories      int64 `json:"memories"`       // the memory structs, their text, tags and metadata
	Lookup        int64 `json:"lookup"`         // key → document, creation times, filter postings, interned scopes
	BM25          int64 `json:"bm25"`           // on the heap: term dictionary, inverted lists, document lengths
	BM25Mapped    int64 `json:"bm25_mapped"`    // the lists' and term lists' arrays mapped from the snapshot
	Vectors       int64 `json:"vectors"`        // on the heap: row tables, scales, matrices not mapped
	VectorsMapped int64 `json:"vectors_mapped"` // mapped from the snapshot: resident as far as touched
	Graphs        int64 `json:"graphs"`         // ANN graphs
}

// mapEntry is what a map entry costs beyond its key and value's own memory.
const mapEntry = 40

// Footprint measures the index. The caller holds at least a read lock.
// A memory still pending in its snapshot (lazy.go) counts its record's
// bytes (mapped: resident as far as touched) and what the index keeps of it.
func (ix *Index) Footprint() Footprint {
	var f Footprint
	for doc := range ix.docs {
		f.Memories += 8 // the slot
		m := ix.decoded(uint32(doc))
		if m == nil && ix.pendingAt(uint32(doc)) {
			rc := &ix.pend.rec[doc]
			f.Memories += rc.end - rc.off
			continue
		}
		if m == nil {
			continue
		}
		f.Memories += int64(unsafe.Sizeof(*m)) + int64(len(m.ID)+len(m.Name)+len(m.Description)+len(m.Text)+
			len(m.Type)+len(m.Scene)+len(m.Source)+len(m.ContentHash)+len(m.Episode)+len(m.Speaker)+len(m.Supersedes)+
			cap(m.Metadata)) + 16*int64(cap(m.Tags))
		for _, t := range m.Tags {
			f.Memories += int64(len(t))
		}
		if m.DemandAt != nil {
			f.Memories += 24
		}
		if e := m.Embedding; e != nil && e.Vector != nil {
			f.Memories += int64(unsafe.Sizeof(*e)) + 4*int64(cap(e.Vector))
		}
	}
	for k := range ix.byKey {
		f.Lookup += mapEntry + 4 + 16 + int64(len(k))
	}
	f.Lookup += 8*int64(cap(ix.created)+cap(ix.occurred)+cap(ix.superAt)) + 4*int64(cap(ix.free))
	if ix.pend != nil {
		f.Lookup += int64(cap(ix.pend.rec)) * int64(unsafe.Sizeof(record{}))
	}
	for k, l := range ix.episodes {
		f.Lookup += mapEntry + 24 + int64(len(k)) + 4*int64(cap(l))
	}
	for k, l := range ix.supersOf {
		f.Lookup += mapEntry + 24 + int64(len(k)) + 4*int64(cap(l))
	}
	f.Lookup += ix.superseded.Bytes() + ix.live.Bytes()
	for _, p := range []map[string]*docset.Set{ix.scope, ix.types, ix.scenes, ix.sources, ix.tags, ix.episodeP, ix.supersedesP} {
		for k, s := range p {
			f.Lookup += mapEntry + 24 + int64(len(k)) + s.Bytes()
		}
	}
	for k, s := range ix.scopes {
		f.Lookup += mapEntry + 24 + int64(len(k)) + mapEntry*int64(len(s))
		for kk, v := range s {
			f.Lookup += int64(len(kk) + len(v))
		}
	}
	f.Lookup += int64(len(ix.embeds)) * (mapEntry + int64(unsafe.Sizeof(memory.Embedding{})))
	f.BM25, f.BM25Mapped = ix.bm.Bytes(), ix.bm.MappedBytes()
	for _, vi := range ix.vecs {
		heap, mapped := vi.Bytes()
		f.Vectors += heap
		f.VectorsMapped += mapped
	}
	for _, g := range ix.graphs {
		f.Graphs += g.Bytes()
	}
	return f
}
