package e5

import (
	"sync"

	"github.com/engram-memory/engram/internal/linalg"
)

// The XLM-RoBERTa encoder (BERT's post-LayerNorm transformer) over a packed
// batch: the rows of all sequences one after another, no padding. The
// row-wise steps treat the batch as one matrix through internal/linalg's
// kernels; attention runs per sequence and head, so a token sees only its
// own sequence, as the attention mask of a padded batch would have it.

// work is the scratch of one forward pass, reused across calls.
type work struct {
	x, qkv, ctx, tmp, inter []float32
}

var workPool = sync.Pool{New: func() any { return new(work) }}

func grow(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:n]
}

// forward sets out[i] to the mean of sequence i's final hidden states (every
// token, <s> and </s> included), not normalised.
func (w *weights) forward(seqs [][]int32, out [][]float32, workers int) {
	defer linalg.Hold()() // the products follow each other: keep the workers at hand
	h, in := w.cfg.Hidden, w.cfg.Intermediate
	rows := 0
	starts, lens := make([]int, len(seqs)), make([]int, len(seqs))
	for i, s := range seqs {
		starts[i], lens[i] = rows, len(s)
		rows += len(s)
	}
	ws := workPool.Get().(*work)
	defer workPool.Put(ws)
	ws.x, ws.qkv = grow(ws.x, rows*h), grow(ws.qkv, rows*3*h)
	ws.ctx, ws.tmp, ws.inter = grow(ws.ctx, rows*h), grow(ws.tmp, rows*h), grow(ws.inter, rows*in)
	for si, s := range seqs {
		for p, id := range s {
			r := starts[si] + p
			w.embedRow(ws.x[r*h:(r+1)*h], id, p)
		}
	}
	eps := w.cfg.Eps
	linalg.LayerNorm(ws.x, h, w.embG, w.embB, eps)
	for li := range w.layers {
		l := &w.layers[li]
		l.qkv.MatMulTBias(ws.qkv, ws.x, l.qkvB, rows)
		linalg.MultiHeadAttention(ws.ctx, ws.qkv, starts, lens, h, w.cfg.Heads, workers)
		l.out.MatMulTBias(ws.tmp, ws.ctx, l.outB, rows)
		linalg.AddLayerNorm(ws.x, ws.tmp, h, l.ln1G, l.ln1B, eps)
		l.ffIn.MatMulTBias(ws.inter, ws.x, l.ffInB, rows)
		linalg.GELU(ws.inter)
		l.ffOut.MatMulTBias(ws.tmp, ws.inter, l.ffOutB, rows)
		linalg.AddLayerNorm(ws.x, ws.tmp, h, l.ln2G, l.ln2B, eps)
	}
	sum := make([]float64, h)
	for si, s := range seqs {
		clear(sum)
		for r := starts[si]; r < starts[si]+len(s); r++ {
			for d, e := range ws.x[r*h : (r+1)*h] {
				sum[d] += float64(e)
			}
		}
		for d := range sum {
			out[si][d] = float32(sum[d] / float64(len(s)))
		}
	}
}
