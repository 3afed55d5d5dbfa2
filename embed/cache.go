package embed

import (
	"context"
	"fmt"
	"slices"

	"github.com/engram-memory/engram/memory"
)

// Cache stores vectors by model id and content hash (memory.ContentHash of the
// embedded text). It may be persistent (a table in the store) or in memory (LRU).
// Implementations must be safe for concurrent use.
type Cache interface {
	// GetEmbedding returns the vector stored for (model, hash) and whether there was one.
	GetEmbedding(ctx context.Context, model, hash string) ([]float32, bool, error)
	// PutEmbedding stores v for (model, hash), replacing any earlier vector.
	PutEmbedding(ctx context.Context, model, hash string, v []float32) error
}

// BatchCache is a Cache that stores many vectors in one call (a persistent
// cache: in one transaction). Cached uses PutEmbeddings when its cache has it.
type BatchCache interface {
	Cache
	// PutEmbeddings stores vecs[i] for (model, hashes[i]).
	PutEmbeddings(ctx context.Context, model string, hashes []string, vecs [][]float32) error
}

// Cached wraps e so that every text is looked up in c by (e.Model(),
// memory.ContentHash(text)) first; only the misses, each distinct text once,
// go to e in a single call, and their vectors are stored in c. Nil vectors
// (texts the model cannot embed) are returned but not stored. A cache error
// fails the call. A repeated text gets its own copy of the vector. The result
// is safe for concurrent use when e and c are. A nil c returns e unchanged.
func Cached(e Embedder, c Cache) Embedder {
	if c == nil && e != nil {
		return e
	}
	return &cached{e: e, c: c}
}

type cached struct {
	e Embedder
	c Cache
}

// Model returns the wrapped embedder's model.
func (c *cached) Model() string {
	if c.e == nil {
		return ""
	}
	return c.e.Model()
}

// Warm warms the wrapped embedder when it is a Warmer (see Warmer).
func (c *cached) Warm(ctx context.Context) error {
	if w, ok := c.e.(Warmer); ok {
		return w.Warm(ctx)
	}
	return nil
}

// Scripts are the wrapped embedder's (Reader).
func (c *cached) Scripts() Scripts {
	if c.e == nil {
		return nil
	}
	return ScriptsOf(c.e)
}

// EmbedQuery embeds queries: by the wrapped embedder's EmbedQuery, past the
// cache, when it embeds queries its own way (the cache holds memories'
// vectors); as Embed does otherwise.
func (c *cached) EmbedQuery(ctx context.Context, texts []string) ([][]float32, error) {
	if q, ok := c.e.(Querier); ok {
		return q.EmbedQuery(ctx, texts)
	}
	return c.Embed(ctx, texts)
}

// Embed returns one vector per text, embedding only what the cache lacks.
func (c *cached) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if c.e == nil || c.c == nil {
		return nil, fmt.Errorf("cached embed: %w", ErrNoEmbedder)
	}
	out := make([][]float32, len(texts))
	if len(texts) == 0 {
		return out, nil
	}
	model := c.e.Model()

	// One slot per distinct text; pos maps each text to its slot.
	type slot struct {
		hash, text string
		vec        []float32
		handedOut  bool
	}
	var (
		slots  []slot
		byHash = make(map[string]int, len(texts))
		pos    = make([]int, len(texts))
		misses []int // slot numbers to embed
	)
	for i, t := range texts {
		h := memory.ContentHash(t)
		if s, ok := byHash[h]; ok {
			pos[i] = s
			continue
		}
		v, ok, err := c.c.GetEmbedding(ctx, model, h)
		if err != nil {
			return nil, fmt.Errorf("cached embed %s: get %s: %w", model, h, err)
		}
		byHash[h] = len(slots)
		pos[i] = len(slots)
		if !ok {
			misses = append(misses, len(slots))
		}
		slots = append(slots, slot{hash: h, text: t, vec: v})
	}

	if len(misses) > 0 {
		batch := make([]string, len(misses))
		for j, s := range misses {
			batch[j] = slots[s].text
		}
		vecs, err := c.e.Embed(ctx, batch)
		if err != nil {
			return nil, fmt.Errorf("cached embed: %w", err)
		}
		if len(vecs) != len(batch) {
			return nil, fmt.Errorf("cached embed %s: %w: got %d vectors for %d texts", model, ErrBadResponse, len(vecs), len(batch))
		}
		var hashes []string
		var keep [][]float32
		for j, s := range misses {
			slots[s].vec = vecs[j]
			if vecs[j] != nil {
				hashes, keep = append(hashes, slots[s].hash), append(keep, vecs[j])
			}
		}
		if err := c.put(ctx, model, hashes, keep); err != nil {
			return nil, err
		}
	}

	for i, s := range pos {
		sl := &slots[s]
		if sl.handedOut && sl.vec != nil {
			out[i] = slices.Clone(sl.vec) // repeated text: its own copy
			continue
		}
		out[i] = sl.vec
		sl.handedOut = true
	}
	return out, nil
}

// put stores the new vectors: in one call when the cache takes batches.
func (c *cached) put(ctx context.Context, model string, hashes []string, vecs [][]float32) error {
	if len(hashes) == 0 {
		return nil
	}
	if bc, ok := c.c.(BatchCache); ok {
		if err := bc.PutEmbeddings(ctx, model, hashes, vecs); err != nil {
			return fmt.Errorf("cached embed %s: put %d vectors: %w", model, len(hashes), err)
		}
		return nil
	}
	for i, h := range hashes {
		if err := c.c.PutEmbedding(ctx, model, h, vecs[i]); err != nil {
			return fmt.Errorf("cached embed %s: put %s: %w", model, h, err)
		}
	}
	return nil
}
