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
// store-wide figures (path, file size, change sequence) and counts the vectors
// the vector leg can compare, per model; a scoped view leaves the store-wide
// figures empty (they describe other tenants too) and counts its memories'
// embeddings.
func (v view) Stats(ctx context.Context) (Stats, error) {
	e := v.e
	if err := e.sync(ctx); err != nil {
		return Stats{}, err
	}
	st := Stats{Types: map[string]int{}, Embedded: map[string]int{}, Embedder: "none"}
	whole := len(v.scope) == 0
	err := e.be.List(ctx, backend.ListQuery{Filter: memory.Filter{Scope: v.scope}}, func(m *memory.Memory) error {
		st.Memories++
		st.Types[m.Type]++
		if m.Favorite {
			st.Favorites++
		}
		if emb := m.Embedding; !whole && emb != nil && emb.Dim > 0 {
			st.Embedded[emb.Model]++
		}
		return nil
	})
	if err != nil {
		return Stats{}, fmt.Errorf("stats: %w", err)
	}
	if whole {
		models, err := e.be.Models(ctx)
		if err != nil {
			return Stats{}, fmt.Errorf("stats: %w", err)
		}
		for model, info := range models {
			if info.Count > 0 {
				st.Embedded[model] = info.Count
			}
		}
		st.Path = e.path
		if d, ok := e.be.(backend.Describer); ok {
			desc, err := d.Describe(ctx)
			if err != nil {
				return Stats{}, fmt.Errorf("stats: %w", err)
			}
			st.Path, st.FileBytes, st.ChangeSeq, st.BadRows = desc.Path, desc.Bytes, desc.ChangeSeq, desc.Bad
		}
	}
	if e.embedder != nil {
		st.Embedder = e.embedder.Model()
		st.VectorWeight, st.WeightSource = e.vectorWeight()
	}
	return st, nil
}
