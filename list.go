package engram

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"strings"

	"github.com/engram-memory/engram/backend"
	"github.com/engram-memory/engram/memory"
)

// Listing orders: a field, ascending, or with a leading "-" descending; ties
// are broken by id, ascending, then by scope (memory.ScopeJSON), so the
// order is total even where one id names memories in several scopes.
const (
	OrderNewest  = "-created_at" // the default
	OrderOldest  = "created_at"
	OrderUpdated = "-updated_at"
	OrderUsed    = "-uses"
	OrderID      = "id"
	// OrderSeq lists an episode in its order (with Filter.Episode).
	OrderSeq = "seq"
)

// ListOrders are the orders List accepts.
var ListOrders = []string{"-created_at", "created_at", "-updated_at", "updated_at", "-uses", "uses", "id", "-id",
	"seq", "-seq", "occurred_at", "-occurred_at"}

// Listing bounds.
const (
	DefaultListLimit = 50
	MaxListLimit     = 1000
)

// ListOptions select one page of a listing.
type ListOptions struct {
	Filter
	// Order is one of ListOrders; empty means OrderNewest.
	Order string `json:"order,omitempty"`
	// Limit is the page size; 0 means DefaultListLimit, at most MaxListLimit.
	Limit int `json:"limit,omitempty"`
	// Cursor continues a listing from the page that returned it (NextCursor),
	// with the same order.
	Cursor string `json:"cursor,omitempty"`
}

// ListPage is one page of memories, without their vectors (Embedding names
// the model and dimension), and the cursor of the next page ("" after the
// last).
type ListPage struct {
	Memories   []*Memory `json:"memories"`
	NextCursor string    `json:"next_cursor,omitempty"`
}

// listCursor is what a cursor encodes: the order it belongs to and the sort
// key, id and scope (memory.ScopeJSON) of the last memory of its page. The
// next page is every memory after it in that order, which is total (no two
// memories share an id and a scope), so a listing neither repeats nor skips
// a memory that stays put while it is paged (one whose key changes may move).
// A cursor without a scope (made before scopes were in it) continues after
// every memory with its key and id.
type listCursor struct {
	Order string  `json:"o"`
	Key   int64   `json:"k"`
	ID    string  `json:"id"`
	Scope *string `json:"s,omitempty"`
}

// List returns one page of the memories the filter admits (in the view's
// scope), in the order asked for. It costs one pass over the memories in
// scope, keeping only the page.
func (v view) List(ctx context.Context, opt ListOptions) (*ListPage, error) {
	if err := v.narrow(&opt.Filter); err != nil {
		return nil, err
	}
	if err := opt.Filter.Validate(); err != nil {
		return nil, err
	}
	if opt.Order == "" {
		opt.Order = OrderNewest
	}
	key, desc, err := orderKey(opt.Order)
	if err != nil {
		return nil, err
	}
	switch {
	case opt.Limit < 0 || opt.Limit > MaxListLimit:
		return nil, fmt.Errorf("%w: limit %d: want 1 to %d", ErrInvalid, opt.Limit, MaxListLimit)
	case opt.Limit == 0:
		opt.Limit = DefaultListLimit
	}
	var c *listCursor
	if opt.Cursor != "" {
		dc, err := decodeCursor(opt.Cursor)
		if err != nil {
			return nil, err
		}
		if dc.Order != opt.Order {
			return nil, fmt.Errorf("%w: cursor: it continues a listing in order %q, not %q", ErrInvalid, dc.Order, opt.Order)
		}
		c = &dc
	}
	// compare orders memories by key, then by id, then by scope text (both
	// descending only for "-id" itself); a scope's text is computed only on
	// a tie of key and id.
	idDesc := opt.Order == "-id"
	compare := func(a, b listPos) int {
		if a.key != b.key {
			if (a.key < b.key) != desc {
				return -1
			}
			return 1
		}
		c := strings.Compare(a.id, b.id)
		if c == 0 {
			c = strings.Compare(a.scopeText(), b.scopeText())
		}
		if idDesc {
			return -c
		}
		return c
	}
	pos := func(m *memory.Memory) listPos { return listPos{key: key(m), id: m.ID, m: m} }
	var from listPos // the cursor's memory
	if c != nil {
		from = listPos{key: c.Key, id: c.ID, scope: c.Scope}
		if c.Scope == nil { // an old cursor: after every memory with its key and id
			from.scope = new(string)
		}
	}
	oldCursor := c != nil && c.Scope == nil
	// One more than a page: whether it exists says if there is a next page.
	page := topK[*memory.Memory]{k: opt.Limit + 1, better: func(a, b *memory.Memory) bool {
		return compare(pos(a), pos(b)) < 0
	}}
	err = v.e.be.List(ctx, backend.ListQuery{Filter: opt.Filter}, func(m *memory.Memory) error {
		if c == nil {
			page.add(m)
			return nil
		}
		p := pos(m)
		if oldCursor && p.key == from.key && p.id == from.id {
			return nil
		}
		if compare(from, p) < 0 {
			page.add(m)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list: %w", err)
	}
	out := &ListPage{Memories: make([]*Memory, 0, min(len(page.items), opt.Limit))}
	for i, m := range page.items {
		if i == opt.Limit {
			last := page.items[i-1]
			scope := memory.ScopeJSON(last.Scope)
			out.NextCursor = encodeCursor(listCursor{Order: opt.Order, Key: key(last), ID: last.ID, Scope: &scope})
			break
		}
		c := *m
		c.Scope = maps.Clone(m.Scope) // the index shares one map among a scope's memories
		if e := m.Embedding; e != nil {
			c.Embedding = &memory.Embedding{Model: e.Model, Dim: e.Dim}
		}
		out.Memories = append(out.Memories, &c)
	}
	return out, nil
}

// listPos is a memory's place in a listing order: its sort key, id and
// scope text (from m, or given by a cursor).
type listPos struct {
	key   int64
	id    string
	m     *memory.Memory
	scope *string
}

func (p listPos) scopeText() string {
	if p.m != nil {
		return memory.ScopeJSON(p.m.Scope)
	}
	return *p.scope
}

// orderKey is an order's sort key and direction.
func orderKey(order string) (func(*memory.Memory) int64, bool, error) {
	desc := strings.HasPrefix(order, "-")
	switch strings.TrimPrefix(order, "-") {
	case "created_at":
		return func(m *memory.Memory) int64 { return m.CreatedAt.UnixNano() }, desc, nil
	case "updated_at":
		return func(m *memory.Memory) int64 { return m.UpdatedAt.UnixNano() }, desc, nil
	case "uses":
		return func(m *memory.Memory) int64 { return m.Uses }, desc, nil
	case "seq":
		return func(m *memory.Memory) int64 { return m.Seq }, desc, nil
	case "occurred_at":
		return func(m *memory.Memory) int64 { return m.OccurredAt.UnixNano() }, desc, nil
	case "id":
		return func(*memory.Memory) int64 { return 0 }, desc, nil
	}
	return nil, false, fmt.Errorf("%w: order %q: want one of %s", ErrInvalid, order, strings.Join(ListOrders, ", "))
}

func encodeCursor(c listCursor) string {
	b, _ := json.Marshal(c) // a struct of plain fields: encodes
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeCursor(s string) (listCursor, error) {
	var c listCursor
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err == nil {
		err = json.Unmarshal(b, &c)
	}
	if err != nil || c.ID == "" {
		return c, fmt.Errorf("%w: cursor %q is not one a listing returned", ErrInvalid, s)
	}
	return c, nil
}

// DeleteScope deletes every memory whose scope holds all of scope's
// key=value pairs (and the view's), whatever their ids (one id may name
// memories in several scopes inside it), in one write that names each memory
// by its key, and returns how many it deleted: forgetting a user or a session
// in one call. An empty scope is refused, so that nothing is deleted by
// mistake.
func (v view) DeleteScope(ctx context.Context, scope map[string]string) (int, error) {
	if len(scope) == 0 {
		return 0, fmt.Errorf("%w: delete by scope needs at least one key=value", ErrInvalid)
	}
	if err := memory.ValidateScope(scope); err != nil {
		return 0, err
	}
	f := Filter{Scope: scope}
	if err := v.narrow(&f); err != nil {
		return 0, err
	}
	var mems []*memory.Memory
	err := v.e.be.List(ctx, backend.ListQuery{Filter: f}, func(m *memory.Memory) error {
		mems = append(mems, &memory.Memory{ID: m.ID, Scope: m.Scope})
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("delete by scope: %w", err)
	}
	if len(mems) == 0 {
		return 0, nil
	}
	// The merged scope goes to the backend, which deletes only what still
	// lies inside it when its write runs.
	keys := make([]string, len(mems))
	for i, m := range mems {
		keys[i] = m.Key()
	}
	return v.e.be.DeleteKeys(ctx, f.Scope, keys)
}
