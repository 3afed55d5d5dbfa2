package engram

import (
	"errors"
	"fmt"

	"github.com/engram-memory/engram/memory"
)

// ErrScope is returned when a request names a scope outside the caller's.
var ErrScope = errors.New("outside the caller's scope")

// view is the one implementation of the API: the engine confined to a scope.
// DB is the view with no scope (the whole store), Scoped a tenant's. Every
// read and write passes the scope to the backend, which enforces it in the
// store query itself (the filter both legs apply before ranking), and a memory
// outside the scope is indistinguishable from a missing one.
type view struct {
	e     *engine
	scope map[string]string // nil: the whole store
}

// Scoped is a view of a DB confined to a scope (a tenant, such as an API key's
// "team=t1,user=u7"). It has the DB's methods for memories, recall and bulk
// transfer, each acting only inside the scope.
type Scoped struct {
	view
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
	return &Scoped{view{e: db.e, scope: cloneMap(scope)}}, nil
}

// Scope is the view's scope.
func (s *Scoped) Scope() map[string]string { return cloneMap(s.scope) }

// Within returns the view narrowed to scope too: memories must carry both
// the view's scope and scope. It is how a caller whose scope holds several
// memories with one id (in different scopes below it) names one of them: by
// id, a view addresses the memory in its own scope first. A key of scope
// that names another value than the view's is refused (ErrScope).
func (v view) Within(scope map[string]string) (*Scoped, error) {
	f := Filter{Scope: scope}
	if err := v.narrow(&f); err != nil {
		return nil, err
	}
	if len(f.Scope) == 0 {
		return nil, fmt.Errorf("%w: a scoped view needs at least one key=value", ErrInvalid)
	}
	if err := memory.ValidateScope(f.Scope); err != nil {
		return nil, err
	}
	return &Scoped{view{e: v.e, scope: f.Scope}}, nil
}

// narrow merges the view's scope into a filter's; a conflicting key is
// refused. The whole store's view leaves the filter as it is.
func (v view) narrow(f *Filter) error {
	if len(v.scope) == 0 {
		return nil
	}
	merged := cloneMap(f.Scope)
	if merged == nil {
		merged = map[string]string{}
	}
	for k, val := range v.scope {
		if old, ok := merged[k]; ok && old != val {
			return fmt.Errorf("%w: scope %s=%s", ErrScope, k, old)
		}
		merged[k] = val
	}
	f.Scope = merged
	return nil
}

func cloneMap(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
