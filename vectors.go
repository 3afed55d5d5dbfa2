package engram

import (
	"context"
	"fmt"
	"time"

	"github.com/engram-memory/engram/backend"
	"github.com/engram-memory/engram/memory"
)

// checkVectors refuses vectors given with memories whose dimension
// contradicts their model's: the dimension of that model's vectors in the
// store, or, for the current embedder's model, the dimension it makes. Such a
// vector could never be compared with a query's, and, as the first of its
// model, would shut out every correct one. (Zero and non-finite vectors are
// refused with the memory's other fields, by memory.CheckStored.)
func (e *engine) checkVectors(ctx context.Context, mems []*memory.Memory) error {
	var models map[string]backend.ModelInfo
	dims := map[string]int{}
	for i, m := range mems {
		emb := m.Embedding
		if emb == nil {
			continue
		}
		want, known := dims[emb.Model]
		if !known {
			if models == nil {
				var err error
				if models, err = e.be.Models(ctx); err != nil {
					return fmt.Errorf("check vectors: %w", err)
				}
			}
			if info, ok := models[emb.Model]; ok && info.Count > 0 {
				want = info.Dim
			} else if e.embedder != nil && emb.Model == e.embedder.Model() {
				want = e.embedderDim(ctx)
			}
			if want == 0 {
				want = emb.Dim // the first vector of an unknown model sets it
			}
			dims[emb.Model] = want
		}
		if emb.Dim != want {
			err := fmt.Errorf("%w: field \"embedding\": vectors of model %q have dimension %d here, this one has %d", ErrInvalid, emb.Model, want, emb.Dim)
			if len(mems) > 1 {
				return fmt.Errorf("memory %d: %w", i+1, err)
			}
			return err
		}
	}
	return nil
}

// embedderDim is the dimension of the current embedder's vectors, learnt by
// embedding a probe once; 0 if it cannot tell now (the embedder failed).
func (e *engine) embedderDim(ctx context.Context) int {
	if d := e.embedDim.Load(); d > 0 {
		return int(d)
	}
	ctx, cancel := context.WithTimeout(ctx, e.writeEmbedTimeout())
	defer cancel()
	vecs, err := e.embedder.Embed(ctx, []string{"dimension probe"})
	if err != nil || len(vecs) != 1 || len(vecs[0]) == 0 {
		return 0
	}
	e.embedDim.Store(int64(len(vecs[0])))
	return len(vecs[0])
}

// writeEmbedTimeout bounds embedding one batch of memories being written.
func (e *engine) writeEmbedTimeout() time.Duration {
	if t := e.opts.WriteEmbedTimeout; t > 0 {
		return t
	}
	return DefaultWriteEmbedTimeout
}
