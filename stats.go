package engram

import (
	"context"
	"fmt"

	"github.com/engram-memory/engram/backend"
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
// with a stored vector, per model, as the backend tallies them (the SQLite
// file counts without loading its index).
func (v view) Stats(ctx context.Context) (Stats, error) {
	e := v.e
	st := Stats{Types: map[string]int{}, Embedded: map[string]int{}, Embedder: "none"}
	whole := len(v.scope) == 0
	tally, err := e.be.Tally(ctx, v.scope)
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
	if whole {
		desc, err := e.be.Describe(ctx)
		if err != nil {
			return Stats{}, fmt.Errorf("stats: %w", err)
		}
		st.Path, st.FileBytes, st.ChangeSeq = desc.Path, desc.Bytes, desc.ChangeSeq
		if e.diag != nil {
			bad, err := e.diag.BadRows(ctx)
			if err != nil {
				return Stats{}, fmt.Errorf("stats: %w", err)
			}
			st.BadRows = bad
		}
	}
	if e.embedder != nil {
		st.Embedder = e.embedder.Model()
		if st.VectorWeight, st.WeightSource, err = e.vectorWeight(ctx); err != nil {
			return Stats{}, fmt.Errorf("stats: %w", err)
		}
	}
	return st, nil
}
