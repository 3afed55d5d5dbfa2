package e5

import (
	"math"
	"sync"
	"sync/atomic"

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
	scores                  [][]float32 // one attention-score matrix per worker
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
	rows, longest := 0, 0
	starts := make([]int, len(seqs))
	for i, s := range seqs {
		starts[i] = rows
		rows += len(s)
		longest = max(longest, len(s))
	}
	ws := workPool.Get().(*work)
	defer workPool.Put(ws)
	ws.x, ws.qkv = grow(ws.x, rows*h), grow(ws.qkv, rows*3*h)
	ws.ctx, ws.tmp, ws.inter = grow(ws.ctx, rows*h), grow(ws.tmp, rows*h), grow(ws.inter, rows*in)
	for len(ws.scores) < workers {
		ws.scores = append(ws.scores, nil)
	}
	for i := range ws.scores[:workers] {
		ws.scores[i] = grow(ws.scores[i], longest*longest)
	}
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
		w.attention(ws, seqs, starts, workers)
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

// attention fills ws.ctx from ws.qkv: softmax(Q·Kᵀ/√d)·V for every sequence
// and head, the (sequence, head) pairs shared out to the workers.
func (w *weights) attention(ws *work, seqs [][]int32, starts []int, workers int) {
	h, heads := w.cfg.Hidden, w.cfg.Heads
	dh, ld := h/heads, 3*h
	scale := float32(1 / math.Sqrt(float64(dh)))
	tasks := len(seqs) * heads
	var next atomic.Int64
	run := func(scores []float32) {
		for t := int(next.Add(1) - 1); t < tasks; t = int(next.Add(1) - 1) {
			si, hd := t/heads, t%heads
			n := len(seqs[si])
			at := starts[si]*ld + hd*dh
			s := scores[:n*n]
			linalg.MatMulTStrided(s, n, ws.qkv[at:], ld, ws.qkv[at+h:], ld, n, n, dh)
			linalg.Softmax(s, n, scale)
			linalg.MatMulStrided(ws.ctx[starts[si]*h+hd*dh:], h, s, n, ws.qkv[at+2*h:], ld, n, dh, n)
		}
	}
	linalg.Parallel(min(workers, tasks), func(slot int) { run(ws.scores[slot]) })
}
