package index

// Supersession. A memory that names another in Supersedes (by id, in its own
// scope) makes that one no longer current from its own occurred_at on. The
// index keeps, for every superseded key, the documents that supersede it,
// whether or not the superseded memory is indexed yet (an import may bring
// the newer memory first), and sets each superseded memory's derived
// Superseded field (on a copy: an indexed memory is never changed), its
// time in superAt, and the superseded set the current-only filter removes.

import (
	"math"
	"slices"

	"github.com/engram-memory/engram/internal/docset"
	"github.com/engram-memory/engram/memory"
)

// noSuperseder is superAt's value for a memory nothing supersedes.
const noSuperseder = math.MaxInt64

// targetKey is the key of the memory m supersedes, or "".
func targetKey(m *memory.Memory) string {
	if m.Supersedes == "" {
		return ""
	}
	return memory.Key(m.Supersedes, m.Scope)
}

// supersedeRemove forgets that doc (whose memory is old) supersedes
// anything, and refreshes what it superseded.
func (ix *Index) supersedeRemove(doc uint32, old *memory.Memory) {
	tk := targetKey(old)
	if tk == "" {
		return
	}
	l := slices.DeleteFunc(ix.supersOf[tk], func(d uint32) bool { return d == doc })
	if len(l) == 0 {
		delete(ix.supersOf, tk)
	} else {
		ix.supersOf[tk] = l
	}
	ix.refreshSuperseded(tk)
}

// supersedeInsert records that doc (whose memory is m) supersedes what it
// names, and refreshes that memory and m itself (which others may supersede).
func (ix *Index) supersedeInsert(doc uint32, m *memory.Memory) {
	if tk := targetKey(m); tk != "" {
		if ix.supersOf == nil {
			ix.supersOf = map[string][]uint32{}
		}
		ix.supersOf[tk] = append(ix.supersOf[tk], doc)
		ix.refreshSuperseded(tk)
	}
	ix.refreshSuperseded(m.Key())
}

// refreshSuperseded sets the derived supersession of the memory with key,
// if it is indexed, from the documents that supersede it now.
func (ix *Index) refreshSuperseded(key string) {
	doc, ok := ix.byKey[key]
	if !ok {
		return
	}
	m := ix.doc(doc)
	if m == nil {
		return
	}
	cands := make([]*memory.Memory, 0, len(ix.supersOf[key]))
	for _, d := range ix.supersOf[key] {
		cands = append(cands, ix.doc(d))
	}
	sup := memory.SupersessionOf(m.ID, m.Scope, cands)
	if sameSupersession(m.Superseded, sup) {
		return
	}
	c := *m // memories are immutable once indexed: replace the pointer
	c.Superseded = sup
	ix.setDoc(doc, &c)
	ix.setSuperAt(doc, sup)
}

// setSuperAt records doc's supersession time and set membership.
func (ix *Index) setSuperAt(doc uint32, sup *memory.Supersession) {
	if sup == nil {
		ix.superAt[doc] = noSuperseder
		if ix.superseded.Has(doc) {
			ix.superseded.Remove(doc)
			ix.nSuperseded--
		}
		return
	}
	ix.superAt[doc] = sup.At.UnixNano()
	if !ix.superseded.Has(doc) {
		ix.superseded.Add(doc)
		ix.nSuperseded++
	}
}

func sameSupersession(a, b *memory.Supersession) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.By == b.By && a.At.Equal(b.At)
}

// rebuildSupersession derives every supersession from the supersedes
// postings and the memories' scopes (after a snapshot read), decoding only
// the memories superseded and those superseding them.
func (ix *Index) rebuildSupersession() {
	ix.supersOf = map[string][]uint32{}
	ix.live.ForEach(func(doc uint32) bool {
		ix.superAt[doc] = noSuperseder
		return true
	})
	for id, docs := range ix.supersedesP {
		docs.ForEach(func(doc uint32) bool {
			tk := memory.Key(id, ix.scopeAt(doc)) // targetKey
			ix.supersOf[tk] = append(ix.supersOf[tk], doc)
			return true
		})
	}
	for tk := range ix.supersOf {
		ix.refreshSuperseded(tk)
	}
}

// current is the set of documents in allow (nil: all) that no memory
// supersedes, when some are superseded; nil and false otherwise.
func (ix *Index) current(allow *docset.Set) (*docset.Set, bool) {
	if ix.nSuperseded == 0 {
		return nil, false
	}
	out := allow
	if out == nil {
		out = ix.live.Clone()
	}
	out.AndNot(&ix.superseded)
	return out, true
}

// asOf is the set of documents current at t (unix nanoseconds): occurred by
// then and superseded, if at all, only later.
func (ix *Index) asOf(t int64) *docset.Set {
	out := docset.New(len(ix.docs))
	for doc, at := range ix.occurred {
		if at <= t && ix.superAt[doc] > t && ix.live.Has(uint32(doc)) {
			out.Add(uint32(doc))
		}
	}
	return out
}
