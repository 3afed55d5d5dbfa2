package engram

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/engram-memory/engram/memory"
)

// ErrScope is returned when a request names a scope outside the caller's.
var ErrScope = errors.New("outside the caller's scope")

// Scoped is a view of a DB confined to a scope (a tenant, such as an API key's
// "team=t1,user=u7"): every read and write it makes carries the scope, enforced
// in the store query itself (the filter both legs apply before ranking), and a
// memory outside the scope is indistinguishable from a missing one.
type Scoped struct {
	db    *DB
	scope map[string]string
}

// WithScope returns a view confined to scope. An empty scope is refused: a
// tenant without one could read and delete everyone's memories.
func (db *DB) WithScope(scope map[string]string) (*Scoped, error) {
	if len(scope) == 0 {
		return nil, fmt.Errorf("%w: a scoped view needs at least one key=value", ErrInvalid)
	}
	if err := memory.ValidateScope(scope); err != nil {
		return nil, err
	}
	return &Scoped{db: db, scope: cloneMap(scope)}, nil
}

// Scope is the view's scope.
func (s *Scoped) Scope() map[string]string { return cloneMap(s.scope) }

// within reports whether m carries every key=value of the scope.
func (s *Scoped) within(m *Memory) bool {
	for k, v := range s.scope {
		if m.Scope[k] != v {
			return false
		}
	}
	return true
}

// narrow merges the view's scope into a filter's; a conflicting key is refused.
func (s *Scoped) narrow(f *Filter) error {
	merged := cloneMap(f.Scope)
	if merged == nil {
		merged = map[string]string{}
	}
	for k, v := range s.scope {
		if old, ok := merged[k]; ok && old != v {
			return fmt.Errorf("%w: scope %s=%s", ErrScope, k, old)
		}
		merged[k] = v
	}
	f.Scope = merged
	return nil
}

// Add stores memories in the scope: each gets the scope's keys; a memory that
// names another value for one of them is refused.
func (s *Scoped) Add(ctx context.Context, mems ...*Memory) (AddResult, error) {
	out := make([]*Memory, len(mems))
	var ids []string
	for i, in := range mems {
		if in == nil {
			return AddResult{}, fmt.Errorf("%w: nil memory", ErrInvalid)
		}
		m := *in
		f := Filter{Scope: in.Scope}
		if err := s.narrow(&f); err != nil {
			return AddResult{}, fmt.Errorf("memory %d: %w", i+1, err)
		}
		m.Scope = f.Scope
		if m.ID != "" {
			ids = append(ids, m.ID)
		}
		out[i] = &m
	}
	// An id may not be taken over from another scope (one read for all).
	existing, err := s.db.st.GetMany(ctx, ids)
	if err != nil {
		return AddResult{}, err
	}
	for _, id := range ids {
		if old, ok := existing[id]; ok && !s.within(old) {
			return AddResult{}, fmt.Errorf("%w: id %q is taken", ErrInvalid, id)
		}
	}
	return s.db.Add(ctx, out...)
}

// Get returns a memory in the scope; one outside it is ErrNotFound.
func (s *Scoped) Get(ctx context.Context, id string) (*Memory, error) {
	m, err := s.db.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if !s.within(m) {
		return nil, fmt.Errorf("memory %s: %w", id, ErrNotFound)
	}
	return m, nil
}

// Update changes a memory in the scope; the patch may not move it out.
func (s *Scoped) Update(ctx context.Context, id string, p Patch) (*Memory, error) {
	if _, err := s.Get(ctx, id); err != nil {
		return nil, err
	}
	if p.Scope != nil {
		f := Filter{Scope: *p.Scope}
		if err := s.narrow(&f); err != nil {
			return nil, err
		}
		p.Scope = &f.Scope
	}
	return s.db.Update(ctx, id, p)
}

// Favorite marks a memory in the scope.
func (s *Scoped) Favorite(ctx context.Context, id string, on bool) (*Memory, error) {
	return s.Update(ctx, id, Patch{Favorite: &on})
}

// Delete removes memories in the scope; ids outside it count as missing.
func (s *Scoped) Delete(ctx context.Context, ids ...string) (int, error) {
	var mine []string
	for _, id := range ids {
		if _, err := s.Get(ctx, id); err == nil {
			mine = append(mine, id)
		}
	}
	if len(mine) == 0 {
		if len(ids) == 1 {
			return 0, fmt.Errorf("memory %s: %w", ids[0], ErrNotFound)
		}
		return 0, nil
	}
	return s.db.Delete(ctx, mine...)
}

// Touch records uses of memories in the scope.
func (s *Scoped) Touch(ctx context.Context, ids ...string) error {
	for _, id := range ids {
		if _, err := s.Get(ctx, id); err != nil {
			return err
		}
	}
	return s.db.Touch(ctx, ids...)
}

// Search searches inside the scope only.
func (s *Scoped) Search(ctx context.Context, q Query) (*Response, error) {
	if err := s.narrow(&q.Filter); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidQuery, err)
	}
	return s.db.Search(ctx, q)
}

// Brief briefs from the scope only.
func (s *Scoped) Brief(ctx context.Context, opt BriefOptions) (*Brief, error) {
	if err := s.narrow(&opt.Filter); err != nil {
		return nil, err
	}
	return s.db.Brief(ctx, opt)
}

// Inject recalls from the scope only.
func (s *Scoped) Inject(ctx context.Context, prompt string, opt InjectOptions) (*Injection, error) {
	if err := s.narrow(&opt.Filter); err != nil {
		return nil, err
	}
	return s.db.Inject(ctx, prompt, opt)
}

// Import loads JSONL into the scope.
func (s *Scoped) Import(ctx context.Context, r io.Reader, opt ImportOptions) (ImportResult, error) {
	var res ImportResult
	mems, bad, err := ParseJSONL(r)
	if err != nil {
		return res, err
	}
	if len(bad) > 0 && !opt.SkipInvalid {
		return res, fmt.Errorf("%w: %w (nothing imported; %d invalid line(s))", ErrInvalid, bad[0], len(bad))
	}
	res.Skipped = bad
	if len(mems) == 0 {
		return res, nil
	}
	res.AddResult, err = s.Add(ctx, mems...)
	return res, err
}

// Export writes the scope's memories as JSONL.
func (s *Scoped) Export(ctx context.Context, w io.Writer) error {
	return s.db.export(ctx, w, s.within)
}
