package weaviate

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/engram-memory/engram/backend"
	"github.com/engram-memory/engram/memory"
)

// Backend is Engram's engine on a Weaviate class: backend.Backend and the
// optional Hybrider (native fusion), Completer, Pinger and StatsScoper. Weaviate has no transactions, so what the seam promises as one
// write is here one batch whose objects are each written whole or not at all
// (see Put), and the read-modify-writes (Update, RecordUse, SetEmbeddings,
// PutMerging) are atomic among this process's calls only; docs/weaviate.md says what that
// means for several processes.
type Backend struct {
	s *Store

	// rmw serialises this process's read-modify-writes, so that two of them
	// never interleave on one memory.
	rmw sync.Mutex

	modelsMu   sync.Mutex
	models     map[string]backend.ModelInfo // nil: not known
	modelsAt   time.Time                    // when models was counted
	modelsGen  uint64                       // bumped by each write of this process
	refreshing bool                         // a background count is running
	closed     bool                         // Close has begun: no background count starts
	bg         sync.WaitGroup               // the background count, waited for by Close
	// ttl and maxStale replace modelsTTL and modelsMaxStale where set, and
	// recounted, where set, runs between a background count and its keeping
	// (tests).
	ttl, maxStale time.Duration
	recounted     func()
}

var (
	_ backend.Backend     = (*Backend)(nil)
	_ backend.Hybrider    = (*Backend)(nil)
	_ backend.Updater     = (*Backend)(nil)
	_ backend.Describer   = (*Backend)(nil)
	_ backend.Tallier     = (*Backend)(nil)
	_ backend.Pinger      = (*Backend)(nil)
	_ backend.StatsScoper = (*Backend)(nil)
	_ backend.Completer   = (*Backend)(nil)
	_ backend.Merger      = (*Backend)(nil)
	_ backend.Neighbourer = (*Backend)(nil)
	_ backend.KeyDeleter  = (*Backend)(nil)
)

// modelsTTL is how long Models trusts what it last counted when this process
// has not written since: other processes' new vectors are seen within it.
// Up to modelsMaxStale, an older count is still answered while a new one is
// made in the background. The count is an aggregate over every memory (a
// median of 16–24 ms at 5,000 and 37–54 ms at 10,000 on one node here:
// TestIngest), and every search asks for it: an agent searching every few
// seconds would wait for one each time.
const (
	modelsTTL      = time.Second
	modelsMaxStale = time.Minute
)

// OpenBackend opens (creating if need be) the class cfg names as a backend.
func OpenBackend(ctx context.Context, cfg Config) (*Backend, error) {
	s, err := Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return &Backend{s: s}, nil
}

// OpenURL opens the store a weaviate:// URL names (ParseURL documents it).
func OpenURL(ctx context.Context, raw string) (*Backend, error) {
	cfg, err := ParseURL(raw)
	if err != nil {
		return nil, err
	}
	return OpenBackend(ctx, cfg)
}

// IsURL reports whether a store location is a weaviate:// URL.
func IsURL(location string) bool {
	return strings.HasPrefix(strings.TrimSpace(location), "weaviate://")
}

// Store is the class the backend runs on, for its lower-level calls.
func (b *Backend) Store() *Store { return b.s }

// Close releases idle connections.
func (b *Backend) Close() error {
	b.modelsMu.Lock()
	b.closed = true
	b.modelsMu.Unlock()
	b.bg.Wait() // a background count of the models
	return b.s.Close()
}

// Ping asks the server's readiness probe (for /readyz).
func (b *Backend) Ping(ctx context.Context) error { return b.s.Ready(ctx) }

// Kind names the backend.
func (b *Backend) Kind() string { return "weaviate" }

// StatsKey is the scope key whose values hold separate BM25 statistics: the
// tenant key (one Weaviate shard per value). Every other scope key is a
// filter inside a tenant, whose memories all count in its statistics.
func (b *Backend) StatsKey() string { return b.s.cfg.TenantKey }

// Location is the store's URL without secrets.
func (b *Backend) Location() string {
	c := b.s.cfg
	u, err := url.Parse(c.Endpoint)
	host := c.Endpoint
	if err == nil {
		host = u.Host
	}
	q := url.Values{"class": {c.Class}}
	if c.TenantKey != "" {
		q.Set("tenant", c.TenantKey)
	}
	if err == nil && u.Scheme == "https" {
		q.Set("tls", "true")
	}
	return "weaviate://" + host + "?" + q.Encode()
}

// Describe reports the store's URL and how many memories it holds.
func (b *Backend) Describe(ctx context.Context) (backend.Description, error) {
	n, err := b.s.Count(ctx, memory.Filter{})
	if err != nil {
		return backend.Description{}, err
	}
	return backend.Description{Path: b.Location(), Memories: n, Kind: b.Kind()}, nil
}

// changed forgets the counted models after a write of this process, and
// makes a count begun before it unkept.
func (b *Backend) changed() {
	b.modelsMu.Lock()
	b.models = nil
	b.modelsGen++
	b.modelsMu.Unlock()
}

// inScope refuses a memory outside the caller's scope.
func inScope(scope map[string]string, mems []*memory.Memory) error {
	for i, m := range mems {
		if m == nil {
			return fmt.Errorf("%w: memory %d is nil", memory.ErrInvalid, i+1)
		}
		if !memory.Inside(m.Scope, scope) {
			return fmt.Errorf("%w: memory %s: scope %s lies outside the caller's scope %s", memory.ErrInvalid, m.ID,
				memory.ScopeJSON(m.Scope), memory.ScopeJSON(scope))
		}
	}
	return nil
}

// Put stores memories in batches. Weaviate's batch is not a transaction:
// every memory is checked before anything is sent, so an invalid one stores
// nothing, but a server that fails half-way leaves each memory either as it
// was or as given (a *BatchError or ErrUnavailable says so), and Put of the
// same memories again completes it: object UUIDs derive from id and scope.
func (b *Backend) Put(ctx context.Context, scope map[string]string, mems []*memory.Memory) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := inScope(scope, mems); err != nil {
		return err
	}
	defer b.changed()
	return b.s.Put(ctx, mems)
}

// PutMerging stores the memories that repeat none already stored: a
// mergeable memory whose text key (memory.TextKey) and exact scope a stored
// memory has is not stored, and existing names that memory's id (the least,
// when several have them); merge, when not nil, gives what that memory
// becomes, written with the memories stored. The check, the merge and the
// write are one step among this process's calls (its lock), not against
// other processes' writes.
func (b *Backend) PutMerging(ctx context.Context, scope map[string]string, mems []*memory.Memory, mergeable []bool, merge backend.MergeFunc) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := inScope(scope, mems); err != nil {
		return nil, err
	}
	b.rmw.Lock()
	defer b.rmw.Unlock()
	existing := make([]string, len(mems))
	byTenant := map[string][]string{}
	keys := make([]string, len(mems))
	for i, m := range mems {
		if i < len(mergeable) && mergeable[i] {
			keys[i] = memory.TextKey(m.Text)
			t := b.s.tenantOf(m.Scope)
			byTenant[t] = append(byTenant[t], keys[i])
		}
	}
	stored := map[string]string{} // text key NUL scope JSON -> least id
	for tenant, tks := range byTenant {
		for start := 0; start < len(tks); start += maxIDsPerRequest {
			chunk := tks[start:min(start+maxIDsPerRequest, len(tks))]
			objs, err := b.s.get(ctx, tenant, "where:"+string(cond(pTextKey, "ContainsAny", "valueText", gqlStrings(chunk)))+
				",limit:"+strconv.Itoa(MaxK), pID+" "+pScope+" "+pTextKey+" _additional{id}")
			if err != nil {
				return nil, fmt.Errorf("look for duplicates: %w", err)
			}
			for _, o := range objs {
				m := &memory.Memory{}
				if len(o.Scope) > 0 {
					m.Scope = map[string]string{}
					for _, kv := range o.Scope {
						k, v, _ := strings.Cut(kv, "=")
						m.Scope[k] = v
					}
				}
				k := o.TextKey + "\x00" + memory.ScopeJSON(m.Scope)
				if id, ok := stored[k]; !ok || o.ID < id {
					stored[k] = o.ID
				}
			}
		}
	}
	var rest []*memory.Memory
	merged := map[string]int{} // key -> index in rest of a stored memory merged into
	for i, m := range mems {
		if i < len(mergeable) && mergeable[i] {
			if id, ok := stored[keys[i]+"\x00"+memory.ScopeJSON(m.Scope)]; ok {
				existing[i] = id
				if merge == nil {
					continue
				}
				key := memory.Key(id, m.Scope)
				var old *memory.Memory
				if j, ok := merged[key]; ok {
					old = rest[j]
				} else {
					got, err := b.resolve(ctx, m.Scope, []string{id}, true)
					if err != nil {
						return nil, fmt.Errorf("read the memory %s a repeat merges into: %w", id, err)
					}
					if old = got[id]; old == nil {
						return nil, fmt.Errorf("the memory %s a repeat merges into is gone", id)
					}
				}
				upd, err := merge(i, old)
				if err != nil {
					return nil, fmt.Errorf("merge memory %d into %s: %w", i+1, id, err)
				}
				if upd == nil {
					continue
				}
				if j, ok := merged[key]; ok {
					rest[j] = upd
				} else {
					merged[key] = len(rest)
					rest = append(rest, upd)
				}
				continue
			}
		}
		rest = append(rest, m)
	}
	if len(rest) == 0 {
		return existing, nil
	}
	defer b.changed()
	if err := b.s.Put(ctx, rest); err != nil {
		return nil, err
	}
	return existing, nil
}

// pick resolves one id among the memories in scope that have it by the id
// rule (memory.Pick); nil when there is none.
func pick(scope map[string]string, id string, ms []*memory.Memory) (*memory.Memory, error) {
	scopes := make([]map[string]string, len(ms))
	for i, m := range ms {
		scopes[i] = m.Scope
	}
	i, err := memory.Pick(id, scope, scopes)
	if i < 0 {
		return nil, err
	}
	return ms[i], nil
}

// resolve reads the memories the ids name in scope (pick), by id, with
// their stored fields only (no derived Superseded), as the built-in
// backend's Get returns them: a migration compares the two.
func (b *Backend) resolve(ctx context.Context, scope map[string]string, ids []string, withVectors bool) (map[string]*memory.Memory, error) {
	out := map[string]*memory.Memory{}
	if len(ids) == 0 {
		return out, nil
	}
	found, err := b.s.getMany(ctx, scope, ids, withVectors)
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		if _, done := out[id]; done {
			continue
		}
		m, err := pick(scope, id, found[id])
		if err != nil {
			return nil, err
		}
		if m != nil {
			m.Superseded = nil
			out[id] = m
		}
	}
	return out, nil
}

// Get reads memories by id in scope, vectors included.
func (b *Backend) Get(ctx context.Context, scope map[string]string, ids []string) (map[string]*memory.Memory, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return b.resolve(ctx, scope, ids, true)
}

// Delete removes the memories the ids name in scope. An ambiguous id fails
// the call before anything is deleted.
func (b *Backend) Delete(ctx context.Context, scope map[string]string, ids []string) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	found, err := b.resolve(ctx, scope, ids, false)
	if err != nil {
		return 0, err
	}
	defer b.changed()
	return b.deleteMems(ctx, found)
}

// DeleteKeys removes the memories named exactly by keys that lie inside
// scope (backend.KeyDeleter): each key is an object's UUID in its tenant, so
// no id is resolved and none is ambiguous. Weaviate has no transaction: the
// objects go tenant by tenant, as Delete's do.
func (b *Backend) DeleteKeys(ctx context.Context, scope map[string]string, keys []string) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	mems := make(map[string]*memory.Memory, len(keys))
	for _, k := range keys {
		id, raw := memory.SplitKey(k)
		var sc map[string]string
		if json.Unmarshal([]byte(raw), &sc) != nil || memory.ScopeJSON(sc) != raw || !memory.Inside(sc, scope) {
			continue
		}
		mems[k] = &memory.Memory{ID: id, Scope: sc}
	}
	if len(mems) == 0 {
		return 0, nil
	}
	defer b.changed()
	return b.deleteMems(ctx, mems)
}

// deleteMems deletes these memories (Store.DeleteMemories).
func (b *Backend) deleteMems(ctx context.Context, mems map[string]*memory.Memory) (int, error) {
	list := make([]*memory.Memory, 0, len(mems))
	for _, m := range mems {
		list = append(list, m)
	}
	return b.s.DeleteMemories(ctx, list)
}

// Neighbours returns the memories next to one in its episode
// (Store.Neighbours).
func (b *Backend) Neighbours(ctx context.Context, scope map[string]string, id string, k int) (before, after []*memory.Memory, err error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	return b.s.Neighbours(ctx, scope, id, k)
}

// RecordUse counts one use of each memory the ids name in scope. The counters
// are read and patched under this process's lock: two processes recording a
// use of one memory at the same instant may count it once.
func (b *Backend) RecordUse(ctx context.Context, scope map[string]string, ids []string, now time.Time, strict bool) ([]backend.Usage, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	b.rmw.Lock()
	defer b.rmw.Unlock()
	found, err := b.s.getMany(ctx, scope, ids, false)
	if err != nil {
		return nil, err
	}
	var mems []*memory.Memory
	for _, id := range ids {
		m, err := pick(scope, id, found[id])
		if err != nil {
			if strict {
				return nil, err
			}
			continue
		}
		if m == nil {
			if strict {
				return nil, fmt.Errorf("memory %s: %w", id, memory.ErrNotFound)
			}
			continue
		}
		mems = append(mems, m)
	}
	out := make([]backend.Usage, 0, len(mems))
	at := now.UTC()
	for _, m := range mems { // an id given twice counts twice, as on SQLite
		m.Uses, m.Demand = memory.Use(m.Uses, m.Demand, m.DemandAt, at)
		m.DemandAt = &at
		if err := b.s.patchUse(ctx, m); err != nil {
			return nil, err
		}
		out = append(out, backend.Usage{ID: m.ID, Uses: m.Uses, Demand: m.Demand, At: &at})
	}
	return out, nil
}

// SetEmbeddings stores vectors for memories whose content hash is still the
// update's: each such memory is read whole and written back with its new
// embedding (a Weaviate object's vectors change with a whole-object write).
func (b *Backend) SetEmbeddings(ctx context.Context, scope map[string]string, ups []backend.EmbeddingUpdate) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	b.rmw.Lock()
	defer b.rmw.Unlock()
	ids := make([]string, len(ups))
	for i, u := range ups {
		ids[i] = u.ID
	}
	found, err := b.s.getMany(ctx, scope, ids, true)
	if err != nil {
		return 0, err
	}
	byKey := map[string]*memory.Memory{}
	var order []string
	for _, u := range ups {
		m, err := pick(scope, u.ID, found[u.ID])
		if err != nil || m == nil || m.ContentHash != u.Hash {
			continue
		}
		if u.Embedding != nil {
			e := *u.Embedding
			e.Vector = slices.Clone(u.Embedding.Vector)
			m.Embedding = &e
		} else {
			m.Embedding = nil
		}
		k := m.Key()
		if _, ok := byKey[k]; !ok {
			order = append(order, k)
		}
		byKey[k] = m
	}
	if len(order) == 0 {
		return 0, nil
	}
	mems := make([]*memory.Memory, len(order))
	for i, k := range order {
		mems[i] = byKey[k]
	}
	defer b.changed()
	if err := b.s.Put(ctx, mems); err != nil {
		return 0, err
	}
	return len(mems), nil
}

// Update changes one memory: read, fn, write, under this process's lock
// (other processes' writes to the same memory in between can be lost: there
// is no conditional write in Weaviate). A memory moved to another scope is
// written there first and then deleted from its old one, so a failure in
// between leaves both, never neither.
func (b *Backend) Update(ctx context.Context, scope map[string]string, id string, fn func(*memory.Memory) (*memory.Memory, error)) (*memory.Memory, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	b.rmw.Lock()
	defer b.rmw.Unlock()
	found, err := b.resolve(ctx, scope, []string{id}, true)
	if err != nil {
		return nil, err
	}
	old := found[id]
	if old == nil {
		return nil, fmt.Errorf("memory %s: %w", id, memory.ErrNotFound)
	}
	oldKey := old.Key()
	oldScope := old.Scope
	res, err := fn(cloneMemory(old))
	if err != nil {
		return nil, err
	}
	if res == nil {
		return old, nil
	}
	if !memory.Inside(res.Scope, scope) {
		return nil, fmt.Errorf("%w: memory %s: scope %s lies outside the caller's scope %s", memory.ErrInvalid, id,
			memory.ScopeJSON(res.Scope), memory.ScopeJSON(scope))
	}
	moved := res.Key() != oldKey || res.ID != id
	if moved {
		taken, err := b.s.getMany(ctx, res.Scope, []string{res.ID}, false)
		if err != nil {
			return nil, err
		}
		for _, m := range taken[res.ID] {
			if m.Key() == res.Key() {
				return nil, fmt.Errorf("%w: memory %s: scope %s already has a memory with this id", memory.ErrInvalid, res.ID, memory.ScopeJSON(res.Scope))
			}
		}
	}
	out := cloneMemory(res)
	defer b.changed()
	if err := b.s.Put(ctx, []*memory.Memory{res}); err != nil {
		return nil, err
	}
	if moved {
		if _, err := b.deleteMems(ctx, map[string]*memory.Memory{id: {ID: id, Scope: oldScope}}); err != nil {
			return nil, fmt.Errorf("memory %s moved, but its old copy remains: %w", id, err)
		}
	}
	return out, nil
}

func cloneMemory(m *memory.Memory) *memory.Memory {
	c := *m
	c.Scope = maps.Clone(m.Scope)
	c.Tags = slices.Clone(m.Tags)
	c.Metadata = slices.Clone(m.Metadata)
	if m.DemandAt != nil {
		t := *m.DemandAt
		c.DemandAt = &t
	}
	if m.Embedding != nil {
		e := *m.Embedding
		e.Vector = slices.Clone(m.Embedding.Vector)
		c.Embedding = &e
	}
	return &c
}

// listPage is how many memories one listing request reads.
const listPage = 500

// List visits the memories q.Filter admits in key order: every page is read
// first (Weaviate pages by tenant and UUID), then sorted.
func (b *Backend) List(ctx context.Context, q backend.ListQuery, fn func(*memory.Memory) error) error {
	var all []*memory.Memory
	cursor := ""
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		page, err := b.s.List(ctx, q.Filter, cursor, listPage, q.Vectors)
		if err != nil {
			return err
		}
		all = append(all, page.Memories...)
		if page.Next == "" {
			break
		}
		cursor = page.Next
	}
	keys := make([]string, len(all))
	for i, m := range all {
		keys[i] = m.Key()
	}
	idx := make([]int, len(all))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(i, j int) int { return strings.Compare(keys[i], keys[j]) })
	for _, i := range idx {
		if err := fn(all[i]); err != nil {
			return err
		}
	}
	return nil
}

// Models counts the stored vectors per model (one aggregate over the
// tenants, and one lookup of each model's dimension). A count younger than
// modelsTTL is trusted unless this process wrote since; one younger than
// modelsMaxStale is answered while a new count runs in the background; an
// older one, or none, is counted now.
func (b *Backend) Models(ctx context.Context) (map[string]backend.ModelInfo, error) {
	ttl, maxStale := cmp.Or(b.ttl, modelsTTL), cmp.Or(b.maxStale, modelsMaxStale)
	b.modelsMu.Lock()
	if age := time.Since(b.modelsAt); b.models != nil && age < maxStale {
		if age >= ttl && !b.refreshing && !b.closed {
			b.refreshing = true
			gen := b.modelsGen
			b.bg.Add(1)
			go b.recountModels(gen)
		}
		out := maps.Clone(b.models)
		b.modelsMu.Unlock()
		return out, nil
	}
	gen := b.modelsGen
	b.modelsMu.Unlock()
	out, err := b.countModels(ctx)
	if err != nil {
		return nil, err
	}
	b.keepModels(out, gen)
	return maps.Clone(out), nil
}

// recountModels is Models' background count, under the store's own timeout.
func (b *Backend) recountModels(gen uint64) {
	defer b.bg.Done()
	ctx, cancel := context.WithTimeout(context.Background(), b.s.cfg.Timeout)
	defer cancel()
	out, err := b.countModels(ctx)
	if b.recounted != nil {
		b.recounted()
	}
	b.modelsMu.Lock()
	b.refreshing = false
	b.modelsMu.Unlock()
	if err == nil { // else the next search after modelsTTL tries again
		b.keepModels(out, gen)
	}
}

// keepModels keeps a count begun at write generation gen, unless this
// process wrote since: then it may miss that write.
func (b *Backend) keepModels(models map[string]backend.ModelInfo, gen uint64) {
	b.modelsMu.Lock()
	defer b.modelsMu.Unlock()
	if gen == b.modelsGen {
		b.models, b.modelsAt = models, time.Now()
	}
}

// countModels asks the server for Models' answer.
func (b *Backend) countModels(ctx context.Context) (map[string]backend.ModelInfo, error) {
	counts, err := b.s.CountBy(ctx, memory.Filter{}, pModel)
	if err != nil {
		return nil, err
	}
	out := make(map[string]backend.ModelInfo, len(counts))
	for model, n := range counts {
		dim, err := b.s.modelDim(ctx, model)
		if err != nil {
			return nil, err
		}
		if dim > 0 {
			out[model] = backend.ModelInfo{Dim: dim, Count: n}
		}
	}
	return out, nil
}

// Tally counts the memories in scope with aggregates.
func (b *Backend) Tally(ctx context.Context, scope map[string]string) (backend.Tally, error) {
	f := memory.Filter{Scope: scope}
	n, err := b.s.Count(ctx, f)
	if err != nil {
		return backend.Tally{}, err
	}
	types, err := b.s.CountBy(ctx, f, pType)
	if err != nil {
		return backend.Tally{}, err
	}
	favs, err := b.s.CountBy(ctx, f, pFavorite)
	if err != nil {
		return backend.Tally{}, err
	}
	emb, err := b.s.CountBy(ctx, f, pModel)
	if err != nil {
		return backend.Tally{}, err
	}
	return backend.Tally{Memories: n, Favorites: favs["true"], Types: types, Embedded: emb}, nil
}
