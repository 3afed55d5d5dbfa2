package engram

import (
	"context"
	"fmt"

	"github.com/engram-memory/engram/backend"
	"github.com/engram-memory/engram/memory"
)

// Stats describes a store, or a scoped view's share of it.
type Stats struct {
	Path         string         `json:"path"`
	FileBytes    int64          `json:"file_bytes"`
	Memories     int            `json:"memories"`
	Favorites    int            `json:"favorites"`
	Types        map[string]int `json:"types"`
	Embedded     map[string]int `json:"embedded"`
	Embedder     string         `json:"embedder"`
	VectorWeight float64        `json:"vector_weight"`
	WeightSource string         `json:"weight_source,omitempty"`
	ChangeSeq    int64          `json:"change_seq"`
	// BadRows lists stored memories the store could not read as they are:
	// skipped (not searchable, not exported) or read without a damaged part
	// (engram doctor explains and repairs). Whole store only.
	BadRows []BadRow `json:"bad_rows,omitempty"`
}

// BadRow is a stored memory the store could not read as it is.
type BadRow = backend.BadRow

// Stats counts what the view holds. For the whole store it adds the
// store-wide figures (path, file size, change sequence); a scoped view leaves
// them empty (they describe other tenants too). Embedded counts the memories
// with a stored vector, per model. A backend that can tally (the SQLite file)
// counts without loading its index.
func (v view) Stats(ctx context.Context) (Stats, error) {
	e := v.e
	st := Stats{Types: map[string]int{}, Embedded: map[string]int{}, Embedder: "none"}
	whole := len(v.scope) == 0
	if t, ok := e.be.(backend.Tallier); ok {
		if err := e.loadSettings(ctx); err != nil { // as a sync would: another process may have calibrated
			return Stats{}, err
		}
		tally, err := t.Tally(ctx, v.scope)
		if err != nil {
			return Stats{}, fmt.Errorf("stats: %w", err)
		}
		st.Memories, st.Favorites = tally.Memories, tally.Favorites
		for k, n := range tally.Types {
			st.Types[k] = n
		}
		for k, n := range tally.Embedded {
			st.Embedded[k] = n
		}
	} else {
		if err := e.sync(ctx); err != nil {
			return Stats{}, err
		}
		err := e.be.List(ctx, backend.ListQuery{Filter: memory.Filter{Scope: v.scope}}, func(m *memory.Memory) error {
			st.Memories++
			st.Types[m.Type]++
			if m.Favorite {
				st.Favorites++
			}
			if emb := m.Embedding; emb != nil && emb.Dim > 0 {
				st.Embedded[emb.Model]++
			}
			return nil
		})
		if err != nil {
			return Stats{}, fmt.Errorf("stats: %w", err)
		}
	}
	if whole {
		st.Path = e.path
		if d, ok := e.be.(backend.Describer); ok {
			desc, err := d.Describe(ctx)
			if err != nil {
				return Stats{}, fmt.Errorf("stats: %w", err)
			}
			st.Path, st.FileBytes, st.ChangeSeq = desc.Path, desc.Bytes, desc.ChangeSeq
		}
		if d, ok := e.be.(backend.Diagnoser); ok {
			// Catch up first: another process (doctor --repair) may have
			// rewritten rows the index still lists as bad.
			if err := e.sync(ctx); err != nil {
				return Stats{}, err
			}
			bad, err := d.BadRows(ctx)
			if err != nil {
				return Stats{}, fmt.Errorf("stats: %w", err)
			}
			st.BadRows = bad
		}
	}
	if e.embedder != nil {
		st.Embedder = e.embedder.Model()
		st.VectorWeight, st.WeightSource = e.vectorWeight()
	}
	return st, nil
}
