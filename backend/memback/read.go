package memback

import (
	"context"
	"slices"

	"github.com/engram-memory/engram/backend"
	"github.com/engram-memory/engram/memory"
)

// view is every memory with its derived supersession (memory.SupersessionOf
// over the memories that name it), in key order. Memories nothing supersedes
// are the stored ones themselves, the others copies. The caller holds the
// lock (read or write).
func (b *Backend) view() []*memory.Memory {
	supers := map[string][]*memory.Memory{} // superseded key → memories naming it
	for _, m := range b.mems {
		if m.Supersedes != "" {
			k := memory.Key(m.Supersedes, m.Scope)
			supers[k] = append(supers[k], m)
		}
	}
	out := make([]*memory.Memory, 0, len(b.mems))
	for k, m := range b.mems {
		if s := memory.SupersessionOf(m.ID, m.Scope, supers[k]); s != nil {
			c := *m
			c.Superseded = s
			m = &c
		}
		out = append(out, m)
	}
	slices.SortFunc(out, byKey)
	return out
}

// withoutVector is m as a listing or a leg hands it out: its Embedding names
// the model and dimension, without the vector.
func withoutVector(m *memory.Memory) *memory.Memory {
	if m.Embedding == nil || m.Embedding.Vector == nil {
		return m
	}
	c := *m
	c.Embedding = &memory.Embedding{Model: m.Embedding.Model, Dim: m.Embedding.Dim}
	return &c
}

// Get returns the memories the ids name in scope, as stored, vectors
// included; each is the caller's.
func (b *Backend) Get(ctx context.Context, scope map[string]string, ids []string) (map[string]*memory.Memory, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	b.mu.RLock()
	defer b.mu.RUnlock()
	out := make(map[string]*memory.Memory, len(ids))
	for _, id := range ids {
		k, err := b.resolve(id, scope)
		if err != nil {
			return nil, err
		}
		if k != "" {
			out[id] = deepCopy(b.mems[k])
		}
	}
	return out, nil
}

// List calls fn with every memory q.Filter admits, in key order, outside the
// lock (fn may call the backend).
func (b *Backend) List(ctx context.Context, q backend.ListQuery, fn func(*memory.Memory) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	b.mu.RLock()
	var out []*memory.Memory
	for _, m := range b.view() {
		if !q.Filter.Match(m) {
			continue
		}
		if q.Vectors {
			m = deepCopy(m)
		} else {
			m = withoutVector(m)
		}
		out = append(out, m)
	}
	b.mu.RUnlock()
	for _, m := range out {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fn(m); err != nil {
			return err
		}
	}
	return nil
}

// Models counts the searchable vectors (finite, not zero) of each model.
func (b *Backend) Models(ctx context.Context) (map[string]backend.ModelInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	b.mu.RLock()
	defer b.mu.RUnlock()
	out := map[string]backend.ModelInfo{}
	for _, m := range b.mems {
		if e := m.Embedding; e != nil && searchable(e.Vector) {
			mi := out[e.Model]
			mi.Dim, mi.Count = len(e.Vector), mi.Count+1
			out[e.Model] = mi
		}
	}
	return out, nil
}

// episode is the memories of m's episode (memory.EpisodeKey) in episode
// order; nil for a memory in no episode. The caller holds the lock.
func (b *Backend) episode(m *memory.Memory) []*memory.Memory {
	ek := m.EpisodeKey()
	if ek == "" {
		return nil
	}
	var l []*memory.Memory
	for _, x := range b.mems {
		if x.EpisodeKey() == ek {
			l = append(l, x)
		}
	}
	slices.SortFunc(l, memory.EpisodeOrder)
	return l
}

// around is up to k memories before m and k after it in l (m's episode, in
// order).
func around(l []*memory.Memory, m *memory.Memory, k int) (before, after []*memory.Memory) {
	i := slices.IndexFunc(l, func(x *memory.Memory) bool { return x.ID == m.ID })
	if i < 0 || k <= 0 {
		return nil, nil
	}
	return l[max(0, i-k):i], l[i+1 : min(len(l), i+1+k)]
}

// Neighbours returns up to k memories before and after the memory with id in
// exactly scope, in episode order, without their vectors
// (backend.Neighbourer).
func (b *Backend) Neighbours(ctx context.Context, scope map[string]string, id string, k int) (before, after []*memory.Memory, err error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	b.mu.RLock()
	defer b.mu.RUnlock()
	m, ok := b.mems[memory.Key(id, scope)]
	if !ok {
		return nil, nil, nil
	}
	bf, af := around(b.episode(m), m, k)
	for _, x := range bf {
		before = append(before, withoutVector(x))
	}
	for _, x := range af {
		after = append(after, withoutVector(x))
	}
	return before, after, nil
}

// Tally counts the memories in scope (backend.Tallier).
func (b *Backend) Tally(ctx context.Context, scope map[string]string) (backend.Tally, error) {
	if err := ctx.Err(); err != nil {
		return backend.Tally{}, err
	}
	b.mu.RLock()
	defer b.mu.RUnlock()
	t := backend.Tally{Types: map[string]int{}, Embedded: map[string]int{}}
	for _, m := range b.mems {
		if !memory.Inside(m.Scope, scope) {
			continue
		}
		t.Memories++
		t.Types[m.Type]++
		if m.Favorite {
			t.Favorites++
		}
		if e := m.Embedding; e != nil && e.Dim > 0 {
			t.Embedded[e.Model]++
		}
	}
	return t, nil
}

// Describe reports the backend's kind and how many memories it holds
// (backend.Describer).
func (b *Backend) Describe(ctx context.Context) (backend.Description, error) {
	if err := ctx.Err(); err != nil {
		return backend.Description{}, err
	}
	b.mu.RLock()
	defer b.mu.RUnlock()
	return backend.Description{Kind: Kind, Memories: len(b.mems)}, nil
}

// QueryTerms tokenizes text as the BM25 leg does and counts the memories in
// scope holding each distinct term in any field (backend.QueryTermer).
func (b *Backend) QueryTerms(ctx context.Context, text string, scope map[string]string) ([]backend.TermCount, int, error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	counts := backend.CountTerms(b.tok.Tokens(text))
	b.mu.RLock()
	docs := b.analyze(scope)
	b.mu.RUnlock()
	for i := range counts {
		counts[i].DF = 0
		for _, d := range docs {
			if d.tf[counts[i].Term] > 0 {
				counts[i].DF++
			}
		}
	}
	return counts, len(docs), nil
}
