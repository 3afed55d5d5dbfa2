package embed

import (
	"context"
	"fmt"
	"strings"
)

// embedBatches embeds texts batchSize at a time through call, keeping order
// across batches. Blank texts are not sent (servers reject them) and get nil
// vectors, as the Embedder contract allows. Each batch must return one vector
// per text, and every vector of the call must have the same, non-zero length.
func embedBatches(ctx context.Context, texts []string, batchSize int,
	call func(ctx context.Context, batch []string) ([][]float32, error)) ([][]float32, error) {
	out := make([][]float32, len(texts))
	send := make([]int, 0, len(texts)) // positions of the texts to send
	for i, t := range texts {
		if strings.TrimSpace(t) != "" {
			send = append(send, i)
		}
	}
	if batchSize < 1 {
		batchSize = DefaultBatchSize
	}
	dim := 0
	batch := make([]string, 0, min(batchSize, len(send)))
	for start := 0; start < len(send); start += batchSize {
		end := min(start+batchSize, len(send))
		batch = batch[:0]
		for _, i := range send[start:end] {
			batch = append(batch, texts[i])
		}
		vecs, err := call(ctx, batch)
		if err != nil {
			return nil, fmt.Errorf("texts %d-%d of %d: %w", start+1, end, len(send), err)
		}
		if len(vecs) != len(batch) {
			return nil, fmt.Errorf("%w: texts %d-%d of %d: got %d vectors for %d texts",
				ErrBadResponse, start+1, end, len(send), len(vecs), len(batch))
		}
		for j, v := range vecs {
			if len(v) == 0 {
				return nil, fmt.Errorf("%w: text %d: empty vector", ErrBadResponse, start+j+1)
			}
			if dim == 0 {
				dim = len(v)
			} else if len(v) != dim {
				return nil, fmt.Errorf("%w: text %d: vector has %d dimensions, earlier ones %d",
					ErrBadResponse, start+j+1, len(v), dim)
			}
			out[send[start+j]] = v
		}
	}
	return out, nil
}
