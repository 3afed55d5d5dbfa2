package bert

import (
	"math"
	"runtime"
	"sync"

	"github.com/engram-memory/engram/internal/linalg"
)

// The BERT encoder over a packed batch: the rows of all sequences one after
// another, no padding. Every row-wise step (embeddings, the linear layers,
// LayerNorm, GELU) treats the batch as one matrix, through internal/linalg's
// kernels with the weights packed once at load; attention runs per sequence
// and head, so a token only ever sees its own sequence's tokens, which is
// what BERT's attention mask does for a padded batch.

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

// forward embeds the sequences (each already with [CLS] … [SEP]) into out,
// one unit vector of length Hidden each.
func (w *weights) forward(seqs [][]int32, out [][]float32, workers int) {
	defer linalg.Hold()() // the products follow each other: keep the workers at hand
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	c := w.m.Bert
	h, in := c.Hidden, c.Intermediate
	rows := 0
	starts, lens := make([]int, len(seqs)), make([]int, len(seqs))
	for i, s := range seqs {
		starts[i], lens[i] = rows, len(s)
		rows += len(s)
	}
	ws := workPool.Get().(*work)
	defer workPool.Put(ws)
	ws.x = grow(ws.x, rows*h)
	ws.qkv = grow(ws.qkv, rows*3*h)
	ws.ctx = grow(ws.ctx, rows*h)
	ws.tmp = grow(ws.tmp, rows*h)
	ws.inter = grow(ws.inter, rows*in)

	// Embeddings: word + position + token type 0, then LayerNorm.
	eps := float32(c.LayerNormEps)
	for si, s := range seqs {
		for p, id := range s {
			row := ws.x[(starts[si]+p)*h : (starts[si]+p+1)*h]
			w.setPosition(row, p)
			w.addWord(row, id)
		}
	}
	linalg.LayerNorm(ws.x, h, w.embG, w.embB, eps)

	for li := range w.layers {
		l := &w.layers[li]
		l.qkv.MatMulTBias(ws.qkv, ws.x, l.qkvB, rows)
		linalg.MultiHeadAttention(ws.ctx, ws.qkv, starts, lens, h, c.Heads, workers)
		l.out.MatMulTBias(ws.tmp, ws.ctx, l.outB, rows)
		linalg.AddLayerNorm(ws.x, ws.tmp, h, l.ln1G, l.ln1B, eps)
		l.ffIn.MatMulTBias(ws.inter, ws.x, l.ffInB, rows)
		linalg.GELU(ws.inter)
		l.ffOut.MatMulTBias(ws.tmp, ws.inter, l.ffOutB, rows)
		linalg.AddLayerNorm(ws.x, ws.tmp, h, l.ln2G, l.ln2B, eps)
	}

	for si, s := range seqs {
		v := out[si][:h]
		x := ws.x[starts[si]*h : (starts[si]+len(s))*h]
		switch w.m.Pooling {
		case "cls":
			copy(v, x[:h])
		default: // mean over every token of the sequence (the attention mask's tokens)
			sum := make([]float64, h)
			for r := 0; r < len(s); r++ {
				for d, e := range x[r*h : (r+1)*h] {
					sum[d] += float64(e)
				}
			}
			for d := range v {
				v[d] = float32(sum[d] / float64(len(s)))
			}
		}
		if w.m.Normalize {
			normalize(v)
		}
	}
}

// normalize scales v to unit length (a zero vector stays zero).
func normalize(v []float32) {
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	if ss == 0 {
		return
	}
	inv := float32(1 / math.Sqrt(ss))
	for i := range v {
		v[i] *= inv
	}
}
