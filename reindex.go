package engram

import (
	"context"
	"fmt"

	"github.com/engram-memory/engram/backend"
	"github.com/engram-memory/engram/embed"
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
// With force it re-embeds everything. It first records the model as the
// store's (a store setting): opened with no embedder named, the store keeps
// it if it is a built-in model, even when the reindex is cut short.
func (db *DB) Reindex(ctx context.Context, force bool, progress func(done, total int)) (ReindexResult, error) {
	res := ReindexResult{}
	e := db.e
	if e.embedder == nil {
		return res, embed.ErrNoEmbedder
	}
	model := e.embedder.Model()
	res.Model = model
	if e.settings != nil {
		if err := e.settings.SetSetting(ctx, settingModel, model); err != nil {
			return res, fmt.Errorf("reindex: %w", err)
		}
	}
	// Copies carrying what the embedder and SetEmbeddings need: the listed
	// memories themselves are never modified. List visits them in id order.
	var todo []*memory.Memory
	err := e.be.List(ctx, backend.ListQuery{}, func(m *memory.Memory) error {
		res.Checked++
		if force || m.Embedding == nil || m.Embedding.Model != model {
			todo = append(todo, &memory.Memory{ID: m.ID, Scope: m.Scope, Name: m.Name, Description: m.Description, Text: m.Text, ContentHash: m.ContentHash})
		}
		return nil
	})
	if err != nil {
		return res, fmt.Errorf("reindex: %w", err)
	}
	err = batches(todo, func(start int, batch []*memory.Memory) error {
		if _, err := embedBatch(ctx, e.memEmbedder, batch, 0); err != nil {
			return fmt.Errorf("reindex with %s after %d of %d: %w", model, start, len(todo), err)
		}
		// One write per scope in the batch: each update names its memory
		// exactly, by its id in its own scope (ids are per-scope namespaces).
		var order []string
		ups := map[string][]backend.EmbeddingUpdate{}
		scopes := map[string]map[string]string{}
		for _, m := range batch {
			if m.Embedding == nil {
				res.NoVector++
				continue
			}
			sj := memory.ScopeJSON(m.Scope)
			if _, ok := ups[sj]; !ok {
				order = append(order, sj)
				scopes[sj] = m.Scope
			}
			ups[sj] = append(ups[sj], backend.EmbeddingUpdate{ID: m.ID, Hash: m.ContentHash, Embedding: m.Embedding})
		}
		for _, sj := range order {
			n, err := e.be.SetEmbeddings(ctx, scopes[sj], ups[sj])
			if err != nil {
				return fmt.Errorf("reindex: %w", err)
			}
			res.Embedded += n
		}
		if progress != nil {
			progress(start+len(batch), len(todo))
		}
		return nil
	})
	if err != nil {
		return res, err
	}
	return res, nil
}

// Embed returns the current embedder's vector for text and the model id.
func (db *DB) Embed(ctx context.Context, text string) ([]float32, string, error) {
	emb := db.e.embedder
	if emb == nil {
		return nil, "", embed.ErrNoEmbedder
	}
	vecs, err := emb.Embed(ctx, []string{text})
	if err != nil {
		return nil, emb.Model(), fmt.Errorf("embedder %s: %w", emb.Model(), err)
	}
	if len(vecs) != 1 {
		return nil, emb.Model(), fmt.Errorf("embedder %s returned %d vectors for one text", emb.Model(), len(vecs))
	}
	return vecs[0], emb.Model(), nil
}
