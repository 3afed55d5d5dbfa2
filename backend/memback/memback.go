// Package memback is Engram's reference backend: every memory in one map
// under one lock, every read and every search leg a pass over all of them.
// It is the seam's fake for engine tests (no file, no server) and the
// brute-force twin that backendtest checks the real backends' legs against:
// BM25 by the formula written out in bm25.go, vectors by exhaustive cosine,
// every filter applied to each memory by memory.Filter.Match.
package memback

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/engram-memory/engram/backend"
	"github.com/engram-memory/engram/internal/tokenize"
	"github.com/engram-memory/engram/memory"
)

// Kind is what Describe calls this backend.
const Kind = "reference"

// Backend is the in-memory reference backend. It implements backend.Backend
// and every optional power that both built-in stores have (Updater,
// Describer, Tallier, Merger, Neighbourer, KeyDeleter), plus QueryTermer.
// Its methods are safe for concurrent use.
type Backend struct {
	tok *tokenize.Tokenizer
	p   Params

	mu sync.RWMutex
	// mems holds every memory as stored (vector included, no derived
	// supersession), by memory.Key. A stored memory is never changed: a
	// write replaces the pointer, so what a read handed out stays as it was.
	mems map[string]*memory.Memory
}

var (
	_ backend.Backend     = (*Backend)(nil)
	_ backend.Updater     = (*Backend)(nil)
	_ backend.Describer   = (*Backend)(nil)
	_ backend.Tallier     = (*Backend)(nil)
	_ backend.Merger      = (*Backend)(nil)
	_ backend.Neighbourer = (*Backend)(nil)
	_ backend.KeyDeleter  = (*Backend)(nil)
	_ backend.QueryTermer = (*Backend)(nil)
)

// New returns an empty backend that scores as the SQLite backend does by
// default (DefaultParams).
func New() *Backend { return NewWith(DefaultParams()) }

// NewWith returns an empty backend with BM25 parameters p.
func NewWith(p Params) *Backend {
	return &Backend{tok: tokenize.New(p.Tokenizer), p: p, mems: map[string]*memory.Memory{}}
}

// Close does nothing: there is nothing to release.
func (b *Backend) Close() error { return nil }

// checkInside refuses memories whose scope lies outside the caller's.
func checkInside(scope map[string]string, mems []*memory.Memory) error {
	for _, m := range mems {
		if m == nil {
			return fmt.Errorf("%w: a nil memory", memory.ErrInvalid)
		}
		if !memory.Inside(m.Scope, scope) {
			return fmt.Errorf("%w: memory %s: scope %s lies outside %s", memory.ErrInvalid, m.ID, memory.ScopeJSON(m.Scope), memory.ScopeJSON(scope))
		}
	}
	return nil
}

// stored is m as the backend keeps it: without the derived supersession,
// which reads compute.
func stored(m *memory.Memory) *memory.Memory {
	if m.Superseded == nil {
		return m
	}
	c := *m
	c.Superseded = nil
	return &c
}

// Put stores memories, each replacing the one with its key, all or none.
func (b *Backend) Put(ctx context.Context, scope map[string]string, mems []*memory.Memory) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := checkInside(scope, mems); err != nil {
		return err
	}
	for _, m := range mems {
		if err := m.CheckStored(); err != nil {
			return fmt.Errorf("memory %s: %w", m.ID, err)
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, m := range mems {
		b.mems[m.Key()] = stored(m)
	}
	return nil
}

// resolve applies the id rule (memory.Pick) to id in scope: the key of the
// memory it names, "" for none. The caller holds the lock.
func (b *Backend) resolve(id string, scope map[string]string) (string, error) {
	var keys []string
	var scopes []map[string]string
	for k, m := range b.mems {
		if m.ID == id {
			keys = append(keys, k)
			scopes = append(scopes, m.Scope)
		}
	}
	i, err := memory.Pick(id, scope, scopes)
	if i < 0 {
		return "", err
	}
	return keys[i], nil
}

// Delete removes the memories the ids name in scope, all or none.
func (b *Backend) Delete(ctx context.Context, scope map[string]string, ids []string) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	keys := make([]string, 0, len(ids))
	for _, id := range ids {
		k, err := b.resolve(id, scope)
		if err != nil {
			return 0, err
		}
		if k != "" {
			keys = append(keys, k)
		}
	}
	n := 0
	for _, k := range keys {
		if _, ok := b.mems[k]; ok {
			delete(b.mems, k)
			n++
		}
	}
	return n, nil
}

// DeleteKeys removes the memories named exactly by keys that lie inside
// scope (backend.KeyDeleter).
func (b *Backend) DeleteKeys(ctx context.Context, scope map[string]string, keys []string) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, k := range keys {
		if m, ok := b.mems[k]; ok && memory.Inside(m.Scope, scope) {
			delete(b.mems, k)
			n++
		}
	}
	return n, nil
}

// RecordUse counts one use at now of each memory the ids name in scope.
func (b *Backend) RecordUse(ctx context.Context, scope map[string]string, ids []string, now time.Time, strict bool) ([]backend.Usage, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	at := time.Unix(0, now.UnixNano()).UTC() // as a store keeps a time: nanoseconds, UTC
	b.mu.Lock()
	defer b.mu.Unlock()
	staged := map[string]*memory.Memory{} // written when every id is resolved
	var out []backend.Usage
	for _, id := range ids {
		k, err := b.resolve(id, scope)
		if err == nil && k == "" {
			err = fmt.Errorf("memory %s: %w", id, memory.ErrNotFound)
		}
		if err != nil {
			if strict {
				return nil, err
			}
			continue
		}
		m := staged[k]
		if m == nil {
			m = b.mems[k]
		}
		c := *m
		c.Uses, c.Demand = memory.Use(m.Uses, m.Demand, m.DemandAt, now)
		t := at
		c.DemandAt = &t
		staged[k] = &c
		out = append(out, backend.Usage{ID: id, Uses: c.Uses, Demand: c.Demand, At: &t})
	}
	for k, m := range staged {
		b.mems[k] = m
	}
	return out, nil
}

// SetEmbeddings stores each update's vector on the memory its id names in
// scope if its content hash is still the update's.
func (b *Backend) SetEmbeddings(ctx context.Context, scope map[string]string, ups []backend.EmbeddingUpdate) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	for _, u := range ups {
		if e := u.Embedding; e != nil {
			if err := memory.CheckVector(e.Vector); err != nil {
				return 0, fmt.Errorf("%w: memory %s: embedding: %v", memory.ErrInvalid, u.ID, err)
			}
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, u := range ups {
		k, err := b.resolve(u.ID, scope)
		if err != nil || k == "" || b.mems[k].ContentHash != u.Hash {
			continue // ambiguous, gone, or changed since
		}
		c := *b.mems[k]
		c.Embedding = nil
		if e := u.Embedding; e != nil {
			c.Embedding = &memory.Embedding{Model: e.Model, Dim: e.Dim, Vector: slices.Clone(e.Vector)}
		}
		b.mems[k] = &c
		n++
	}
	return n, nil
}

// Update changes the memory id names in scope in one step under the write
// lock (backend.Updater).
func (b *Backend) Update(ctx context.Context, scope map[string]string, id string, fn func(*memory.Memory) (*memory.Memory, error)) (*memory.Memory, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	k, err := b.resolve(id, scope)
	if err != nil {
		return nil, err
	}
	if k == "" {
		return nil, fmt.Errorf("memory %s: %w", id, memory.ErrNotFound)
	}
	old := b.mems[k]
	m, err := fn(deepCopy(old))
	if err != nil {
		return nil, err
	}
	if m == nil {
		return deepCopy(old), nil
	}
	if m.ID != id {
		return nil, fmt.Errorf("%w: an update may not change the id (%s to %s)", memory.ErrInvalid, id, m.ID)
	}
	if !memory.Inside(m.Scope, scope) {
		return nil, fmt.Errorf("%w: memory %s: scope %s lies outside %s", memory.ErrInvalid, id, memory.ScopeJSON(m.Scope), memory.ScopeJSON(scope))
	}
	if err := m.CheckStored(); err != nil {
		return nil, fmt.Errorf("memory %s: %w", id, err)
	}
	nk := m.Key()
	if _, taken := b.mems[nk]; taken && nk != k {
		return nil, fmt.Errorf("%w: memory %s cannot move to scope %s: a memory with its id is already there", memory.ErrInvalid, id, memory.ScopeJSON(m.Scope))
	}
	delete(b.mems, k)
	m = stored(m)
	b.mems[nk] = m
	return deepCopy(m), nil
}

// PutMerging stores the memories that repeat none already stored, and the
// merges of those that do, in one step (backend.Merger): a repeat is a
// stored memory with the same memory.TextKey and exactly the same scope, the
// least id when several are.
func (b *Backend) PutMerging(ctx context.Context, scope map[string]string, mems []*memory.Memory, mergeable []bool, merge backend.MergeFunc) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := checkInside(scope, mems); err != nil {
		return nil, err
	}
	for _, m := range mems {
		if err := m.CheckStored(); err != nil {
			return nil, fmt.Errorf("memory %s: %w", m.ID, err)
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	existing := make([]string, len(mems))
	var written []*memory.Memory
	merged := map[string]int{} // key of a stored memory merged into → its index in written
	for i, m := range mems {
		if i >= len(mergeable) || !mergeable[i] {
			written = append(written, m)
			continue
		}
		st := b.sameText(m)
		if st == nil {
			written = append(written, m)
			continue
		}
		existing[i] = st.ID
		if merge == nil {
			continue
		}
		j, again := merged[st.Key()]
		if again {
			st = written[j]
		}
		upd, err := merge(i, deepCopy(st))
		if err != nil {
			return nil, fmt.Errorf("merge memory %d into %s: %w", i+1, st.ID, err)
		}
		if upd == nil {
			continue
		}
		if upd.Key() != st.Key() {
			return nil, fmt.Errorf("merge memory %d into %s: the merge changed its key", i+1, st.ID)
		}
		if err := upd.CheckStored(); err != nil {
			return nil, fmt.Errorf("merge memory %d into %s: %w", i+1, st.ID, err)
		}
		if again {
			written[j] = upd
		} else {
			merged[st.Key()] = len(written)
			written = append(written, upd)
		}
	}
	for _, m := range written {
		b.mems[m.Key()] = stored(m)
	}
	return existing, nil
}

// sameText is the stored memory with m's text key and exactly m's scope (the
// least id when several are), or nil. The caller holds the lock.
func (b *Backend) sameText(m *memory.Memory) *memory.Memory {
	tk, sj := memory.TextKey(m.Text), memory.ScopeJSON(m.Scope)
	var best *memory.Memory
	for _, s := range b.mems {
		if memory.ScopeJSON(s.Scope) == sj && memory.TextKey(s.Text) == tk && (best == nil || s.ID < best.ID) {
			best = s
		}
	}
	return best
}

// deepCopy is a copy of m that shares nothing with it.
func deepCopy(m *memory.Memory) *memory.Memory {
	c := *m
	if m.Scope != nil {
		c.Scope = make(map[string]string, len(m.Scope))
		for k, v := range m.Scope {
			c.Scope[k] = v
		}
	}
	if m.Tags != nil {
		c.Tags = slices.Clone(m.Tags)
	}
	if m.Metadata != nil {
		c.Metadata = slices.Clone(m.Metadata)
	}
	if m.DemandAt != nil {
		t := *m.DemandAt
		c.DemandAt = &t
	}
	if m.Embedding != nil {
		e := *m.Embedding
		if e.Vector != nil {
			e.Vector = slices.Clone(e.Vector)
		}
		c.Embedding = &e
	}
	if m.Superseded != nil {
		s := *m.Superseded
		c.Superseded = &s
	}
	return &c
}

// byKey orders memories as memory.Key sorts: by id, then scope.
func byKey(a, b *memory.Memory) int {
	if c := cmp.Compare(a.ID, b.ID); c != 0 {
		return c
	}
	return cmp.Compare(memory.ScopeJSON(a.Scope), memory.ScopeJSON(b.Scope))
}
