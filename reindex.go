package engram

import (
	"context"
	"fmt"
	"os"
	"sort"

	"github.com/engram-memory/engram/embed"
	"github.com/engram-memory/engram/internal/store"
	"github.com/engram-memory/engram/memory"
)

// ReindexResult says what Reindex did.
type ReindexResult struct {
	Model    string `json:"model"`
	Checked  int    `json:"checked"`
	Embedded int    `json:"embedded"`
	// NoVector counts memories the model has no vector for (no known word):
	// keyword search still finds them.
	NoVector int `json:"no_vector"`
}

// Reindex embeds every memory that has no vector from the current model: those
// added while the embedder was down, or all of them after a model change.
// With force it re-embeds everything.
func (db *DB) Reindex(ctx context.Context, force bool, progress func(done, total int)) (ReindexResult, error) {
	res := ReindexResult{}
	if db.embedder == nil {
		return res, embed.ErrNoEmbedder
	}
	if err := db.sync(ctx); err != nil {
		return res, err
	}
	model := db.embedder.Model()
	res.Model = model
	// Copies carrying what the embedder and SetEmbeddings need: the indexed
	// memories themselves are never modified.
	var todo []*memory.Memory
	db.mu.RLock()
	db.ix.Each(nil, func(m *memory.Memory) bool {
		res.Checked++
		if force || m.Embedding == nil || m.Embedding.Model != model {
			todo = append(todo, &memory.Memory{ID: m.ID, Name: m.Name, Description: m.Description, Text: m.Text, ContentHash: m.ContentHash})
		}
		return true
	})
	db.mu.RUnlock()
	sort.Slice(todo, func(i, j int) bool { return todo[i].ID < todo[j].ID })
	err := batches(todo, func(start int, batch []*memory.Memory) error {
		if _, err := embedBatch(ctx, db.memEmbedder, batch, 0); err != nil {
			return fmt.Errorf("reindex with %s after %d of %d: %w", model, start, len(todo), err)
		}
		ups := make([]store.EmbeddingUpdate, 0, len(batch))
		for _, m := range batch {
			if m.Embedding == nil {
				res.NoVector++
				continue
			}
			ups = append(ups, store.EmbeddingUpdate{ID: m.ID, Hash: m.ContentHash, Embedding: m.Embedding})
		}
		n, err := db.st.SetEmbeddings(ctx, ups)
		if err != nil {
			return fmt.Errorf("reindex: %w", err)
		}
		res.Embedded += n
		if progress != nil {
			progress(start+len(batch), len(todo))
		}
		return nil
	})
	if err != nil {
		return res, err
	}
	return res, db.sync(ctx)
}

// Embed returns the current embedder's vector for text and the model id.
func (db *DB) Embed(ctx context.Context, text string) ([]float32, string, error) {
	if db.embedder == nil {
		return nil, "", embed.ErrNoEmbedder
	}
	vecs, err := db.embedder.Embed(ctx, []string{text})
	if err != nil {
		return nil, db.embedder.Model(), fmt.Errorf("embedder %s: %w", db.embedder.Model(), err)
	}
	if len(vecs) != 1 {
		return nil, db.embedder.Model(), fmt.Errorf("embedder %s returned %d vectors for one text", db.embedder.Model(), len(vecs))
	}
	return vecs[0], db.embedder.Model(), nil
}

// Stats describes a store.
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
}

// Stats counts what the store holds.
func (db *DB) Stats(ctx context.Context) (Stats, error) {
	if err := db.sync(ctx); err != nil {
		return Stats{}, err
	}
	s := Stats{Path: db.Path(), Types: map[string]int{}, Embedder: "none"}
	if fi, err := os.Stat(db.Path()); err == nil {
		s.FileBytes = fi.Size()
	}
	if fi, err := os.Stat(db.Path() + "-wal"); err == nil {
		s.FileBytes += fi.Size()
	}
	db.mu.RLock()
	db.ix.Each(nil, func(m *memory.Memory) bool {
		s.Memories++
		s.Types[m.Type]++
		if m.Favorite {
			s.Favorites++
		}
		return true
	})
	s.Embedded = db.ix.Models()
	s.ChangeSeq = db.seq
	db.mu.RUnlock()
	if db.embedder != nil {
		s.Embedder = db.embedder.Model()
		s.VectorWeight, s.WeightSource = db.vectorWeight()
	}
	return s, nil
}
