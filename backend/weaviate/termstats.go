package weaviate

import (
	"context"
	"sync"
	"time"
)

// The keyword relevance bound needs a tenant's memory count and each query
// term's document frequency: one gRPC search (a probe, termdf.go) or
// Aggregate each (termStats), run beside every keyword or hybrid search. A
// termCache keeps what was counted, per
// tenant, so that a term an agent searches again (its project's names, the
// words of its domain) is not counted again:
//
//   - a write of this process to a tenant drops the tenant's counts, when it
//     starts and again when it ends, and counts read across a write are not
//     kept (a generation per tenant says so);
//   - a write of another process is seen within termStatsTTL, after which
//     the tenant's counts are read again. Until then the bound may be that
//     of a few memories ago: it scales keyword relevance, never a rank.
//
// Tenants are separate entries: no tenant's counts are ever read or dropped
// for another's search or write.
type termCache struct {
	mu      sync.Mutex // guards tenants, gens and epoch
	tenants map[string]*tenantTerms
	gens    map[string]uint64 // bumped by each write's start and end
	epoch   uint64            // bumped when every tenant's counts are dropped
}

// termStatsTTL is how long a tenant's counts are used before they are read
// again; other processes' writes are seen within it.
const termStatsTTL = 10 * time.Second

// termCacheMaxTerms bounds the terms kept per tenant: past it the tenant's
// entry starts again from empty.
const termCacheMaxTerms = 1 << 16

type tenantTerms struct {
	n  int            // the tenant's memories
	df map[string]int // documents holding each term
	at time.Time      // when n was read: the entry's age
}

// invalidate drops the counts of these tenants and makes counts read before
// now unfit to keep.
func (c *termCache) invalidate(tenants []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gens == nil {
		c.gens = map[string]uint64{}
	}
	for _, t := range tenants {
		delete(c.tenants, t)
		c.gens[t]++
	}
}

// invalidateAll drops every tenant's counts (the class was dropped or
// rewritten) and makes counts read before now unfit to keep.
func (c *termCache) invalidateAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tenants = nil
	c.epoch++
}

// stats is the tenant's memory count and the document frequency of each of
// terms (distinct), from the cache where it is fresh at now, else from
// fetch, which finds the given terms' among the tenant's n memories (n
// negative: it counts them too) and returns n with them.
func (c *termCache) stats(ctx context.Context, tenant string, terms []string, now time.Time,
	fetch func(ctx context.Context, n int, terms []string) (int, map[string]int, error)) (int, map[string]int, error) {
	c.mu.Lock()
	gen, epoch := c.gens[tenant], c.epoch
	e := c.tenants[tenant]
	if e != nil && now.Sub(e.at) >= termStatsTTL {
		delete(c.tenants, tenant)
		e = nil
	}
	df := make(map[string]int, len(terms))
	var missing []string
	n := 0
	if e != nil {
		n = e.n
		for _, t := range terms {
			if f, ok := e.df[t]; ok {
				df[t] = f
			} else {
				missing = append(missing, t)
			}
		}
	} else {
		missing = terms
	}
	c.mu.Unlock()
	if e != nil && len(missing) == 0 {
		return n, df, nil
	}
	known := -1
	if e != nil {
		known = n
	}
	got, gotDF, err := fetch(ctx, known, missing)
	if err != nil {
		return 0, nil, err
	}
	if e == nil {
		n = got
	}
	for t, f := range gotDF {
		df[t] = f
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gens[tenant] != gen || c.epoch != epoch {
		return n, df, nil // a write began or ended meanwhile: answer, keep nothing
	}
	cur := c.tenants[tenant]
	if cur != e {
		return n, df, nil // dropped, replaced or added meanwhile
	}
	if cur == nil {
		cur = &tenantTerms{n: n, df: map[string]int{}, at: now}
	}
	if len(cur.df)+len(gotDF) > termCacheMaxTerms {
		cur = &tenantTerms{n: cur.n, df: map[string]int{}, at: cur.at}
	}
	for t, f := range gotDF {
		cur.df[t] = f
	}
	if c.tenants == nil {
		c.tenants = map[string]*tenantTerms{}
	}
	c.tenants[tenant] = cur
	return n, df, nil
}
