package engram

import (
	"context"
	"fmt"
	"time"

	"github.com/engram-memory/engram/embed"
	"github.com/engram-memory/engram/memory"
)

// embedBatchSize is how many memories go to the embedder in one call.
const embedBatchSize = 256

// embedBatch gives each memory of one batch the embedder's vector of its
// EmbedText, within timeout (0: the context's own deadline). A memory whose
// text has no vector (no known word) keeps none. It returns how many got one.
func embedBatch(ctx context.Context, e embed.Embedder, batch []*memory.Memory, timeout time.Duration) (int, error) {
	texts := make([]string, len(batch))
	for i, m := range batch {
		texts[i] = m.EmbedText()
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	vecs, err := e.Embed(ctx, texts)
	if err == nil && len(vecs) != len(texts) {
		err = fmt.Errorf("returned %d vectors for %d texts", len(vecs), len(texts))
	}
	if err != nil {
		return 0, err
	}
	n := 0
	for i, m := range batch {
		if vecs[i] != nil {
			m.Embedding = &memory.Embedding{Model: e.Model(), Dim: len(vecs[i]), Vector: vecs[i]}
			n++
		}
	}
	return n, nil
}

// batches calls fn on consecutive slices of at most embedBatchSize memories,
// with the index of the first, until fn fails.
func batches(mems []*memory.Memory, fn func(start int, batch []*memory.Memory) error) error {
	for start := 0; start < len(mems); start += embedBatchSize {
		if err := fn(start, mems[start:min(start+embedBatchSize, len(mems))]); err != nil {
			return err
		}
	}
	return nil
}
