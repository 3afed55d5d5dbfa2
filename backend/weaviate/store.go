// Package weaviate keeps Engram memories in a Weaviate collection, one object
// per memory with every field, one named vector per embedding model, one
// Weaviate tenant per value of a chosen scope key, and runs the BM25, vector
// and native hybrid legs there with every filter pushed down.
package weaviate

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/engram-memory/engram/internal/index"
	"github.com/engram-memory/engram/internal/tokenize"
)

// Store is an open Weaviate class. It is safe for concurrent use; several
// processes may use the same class at once.
type Store struct {
	cfg Config
	c   *client
	tok *tokenize.Tokenizer // nil with TokenizerWord

	mu         sync.Mutex      // guards vectors and replicated
	vectors    map[string]bool // named vectors the class has
	replicated bool            // replication factor above 1
	// schemaMu serialises this process's schema changes.
	schemaMu sync.Mutex
	// writeMu keeps this process's class updates (write lock) apart from its
	// object writes (read lock): Weaviate loses the index entries of objects
	// written while the class changes (see sendChecked).
	writeMu sync.RWMutex
	repairs atomic.Int64 // objects re-sent because their index entries were lost

	// context is what pContext and pDay hold: index.DefaultContext, as the
	// built-in backend indexes it, so both backends search the same words.
	context index.ContextOptions
	// tenantMu serialises this process's writes per tenant: a write reads
	// the memories around the ones it changes (their episode, what they
	// supersede) and writes what it derives from them (episode.go,
	// supersede.go), with no other write of this process in between.
	// Contexts and supersessions never cross a tenant (they stay inside one
	// exact scope).
	tenantMu sync.Mutex
	tenantLk map[string]*sync.Mutex
	// termCounts keeps the counts of the keyword bound (termstats.go); each
	// write drops its tenants' counts as it starts and as it ends.
	termCounts termCache
}

// Open checks that the server is ready and creates the class if it does not
// exist; an existing class must have been made with the same tokenizer and
// tenant key. The server must answer within cfg.Timeout per attempt, with
// cfg.Retries retries.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	if err := cfg.withDefaults(); err != nil {
		return nil, err
	}
	s := &Store{cfg: cfg, c: newClient(cfg), vectors: map[string]bool{}, context: index.DefaultContext}
	s.context.Neighbours = max(s.context.Neighbours, 0)
	if cfg.Tokenizer == TokenizerEngram {
		s.tok = tokenize.New(tokenize.DefaultOptions())
	}
	if err := s.Ready(ctx); err != nil {
		s.c.close()
		return nil, fmt.Errorf("open %s: %w", cfg, err)
	}
	if err := s.ensureClass(ctx); err != nil {
		s.c.close()
		return nil, fmt.Errorf("open %s: %w", cfg, err)
	}
	return s, nil
}

// Config is the store's configuration, defaults filled.
func (s *Store) Config() Config { return s.cfg }

// Close releases idle connections. The Store must not be used afterwards.
func (s *Store) Close() error {
	s.c.close()
	return nil
}

// Ready reports whether the server answers its readiness probe
// (GET /v1/.well-known/ready).
func (s *Store) Ready(ctx context.Context) error {
	if err := s.c.do(ctx, http.MethodGet, "/v1/.well-known/ready", nil, nil, nil); err != nil {
		return fmt.Errorf("readiness: %w", err)
	}
	return nil
}

// terms renders text as Engram's BM25 terms, space-separated.
func (s *Store) terms(text string) string {
	if text == "" {
		return ""
	}
	return strings.Join(s.tok.Tokens(text), " ")
}

func (s *Store) termsFunc() termsOf {
	if s.tok == nil {
		return nil
	}
	return s.terms
}

// enc is how this store encodes memories.
func (s *Store) enc() encoder {
	return encoder{class: s.cfg.Class, terms: s.termsFunc(), dates: s.context.Dates}
}

// lockTenants takes this process's write locks of the tenants, in name
// order (so two writes never wait for each other), and returns their
// release.
func (s *Store) lockTenants(tenants []string) func() {
	tenants = slices.Clone(tenants)
	slices.Sort(tenants)
	tenants = slices.Compact(tenants)
	s.tenantMu.Lock()
	if s.tenantLk == nil {
		s.tenantLk = map[string]*sync.Mutex{}
	}
	locks := make([]*sync.Mutex, len(tenants))
	for i, t := range tenants {
		if s.tenantLk[t] == nil {
			s.tenantLk[t] = &sync.Mutex{}
		}
		locks[i] = s.tenantLk[t]
	}
	s.tenantMu.Unlock()
	for _, l := range locks {
		l.Lock()
	}
	s.termCounts.invalidate(tenants)
	return func() {
		s.termCounts.invalidate(tenants)
		for _, l := range slices.Backward(locks) {
			l.Unlock()
		}
	}
}

// tenantOf is the tenant holding a memory with this scope ("" when the class
// has no tenants).
func (s *Store) tenantOf(scope map[string]string) string {
	if s.cfg.TenantKey == "" {
		return ""
	}
	return TenantName(scope[s.cfg.TenantKey])
}

// tenantsFor lists the tenants a read with this scope must visit: the one
// its tenant key names, or every tenant when it names none (an unscoped,
// administrative read). A scope without the key visits noTenant too.
func (s *Store) tenantsFor(ctx context.Context, scope map[string]string) ([]string, error) {
	if s.cfg.TenantKey == "" {
		return []string{""}, nil
	}
	if v, ok := scope[s.cfg.TenantKey]; ok {
		return []string{TenantName(v)}, nil
	}
	return s.Tenants(ctx)
}

// Tenants lists the class's tenants (nil for a class without multi-tenancy).
func (s *Store) Tenants(ctx context.Context) ([]string, error) {
	if s.cfg.TenantKey == "" {
		return nil, nil
	}
	var ts []struct {
		Name string `json:"name"`
	}
	if err := s.c.do(ctx, http.MethodGet, "/v1/schema/"+s.cfg.Class+"/tenants", nil, nil, &ts); err != nil {
		return nil, fmt.Errorf("list tenants: %w", err)
	}
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Name
	}
	return out, nil
}

// tenantArg is the GraphQL tenant argument, or "".
func tenantArg(tenant string) string {
	if tenant == "" {
		return ""
	}
	return "tenant:" + gqlString(tenant) + ","
}

// consistencyArg is the GraphQL consistency argument. Weaviate offers it only
// on replicated classes: with one copy every level is the same.
func (s *Store) consistencyArg() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.replicated {
		return ""
	}
	return "consistencyLevel:" + s.cfg.Consistency + ","
}

// eachTenant runs fn for every tenant concurrently (at most fanOut at once)
// and returns the first error.
func eachTenant(ctx context.Context, tenants []string, fn func(ctx context.Context, i int, tenant string) error) error {
	return eachParallel(ctx, len(tenants), fanOut, func(ctx context.Context, i int) error { return fn(ctx, i, tenants[i]) })
}

// eachParallel runs fn for 0..n-1, at most limit at once, and returns the
// first error (which cancels the calls still running).
func eachParallel(ctx context.Context, n, limit int, fn func(ctx context.Context, i int) error) error {
	if n == 1 {
		return fn(ctx, 0)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sem := make(chan struct{}, limit)
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	for i := range n {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := fn(ctx, i); err != nil {
				once.Do(func() { first = err; cancel() })
			}
		}()
	}
	wg.Wait()
	return first
}

// fanOut bounds the concurrent requests of a read over many tenants.
const fanOut = 4
