package engram

import "context"

// Stats counts what the scope holds. The store-wide figures (path, file size,
// change sequence) are left empty: they describe other tenants too.
func (s *Scoped) Stats(ctx context.Context) (Stats, error) {
	db := s.db
	if err := db.sync(ctx); err != nil {
		return Stats{}, err
	}
	st := Stats{Types: map[string]int{}, Embedded: map[string]int{}, Embedder: "none"}
	f := Filter{Scope: s.scope}
	db.mu.RLock()
	db.ix.Each(db.ix.Allowed(&f), func(m *Memory) bool {
		st.Memories++
		st.Types[m.Type]++
		if m.Favorite {
			st.Favorites++
		}
		if e := m.Embedding; e != nil && e.Dim > 0 {
			st.Embedded[e.Model]++
		}
		return true
	})
	db.mu.RUnlock()
	if db.embedder != nil {
		st.Embedder = db.embedder.Model()
		st.VectorWeight, st.WeightSource = db.vectorWeight()
	}
	return st, nil
}
