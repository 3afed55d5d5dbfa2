package bert

import (
	"math"
	"runtime"
	"sync"
	"sync/atomic"
)

// The BERT encoder over a packed batch: the rows of all sequences one after
// another, no padding. Every row-wise step (embeddings, the linear layers,
// LayerNorm, GELU) treats the batch as one matrix; attention runs per
// sequence and head, so a token only ever sees its own sequence's tokens,
// which is what BERT's attention mask does for a padded batch.

// work is the scratch of one forward pass, reused across calls.
type work struct {
	x, qkv, ctx, tmp, inter []float32
	att                     []attScratch
}

type attScratch struct{ q, k, vt, s, o []float32 }

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
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	c := w.m.Bert
	h, in := c.Hidden, c.Intermediate
	rows, longest := 0, 0
	for _, s := range seqs {
		rows += len(s)
		longest = max(longest, len(s))
	}
	ws := workPool.Get().(*work)
	defer workPool.Put(ws)
	ws.x = grow(ws.x, rows*h)
	ws.qkv = grow(ws.qkv, rows*3*h)
	ws.ctx = grow(ws.ctx, rows*h)
	ws.tmp = grow(ws.tmp, rows*h)
	ws.inter = grow(ws.inter, rows*in)
	for len(ws.att) < workers {
		ws.att = append(ws.att, attScratch{})
	}
	dh := h / c.Heads
	for i := range ws.att[:workers] {
		a := &ws.att[i]
		a.q = grow(a.q, longest*dh)
		a.k = grow(a.k, longest*dh)
		a.vt = grow(a.vt, dh*longest)
		a.s = grow(a.s, longest*longest)
		a.o = grow(a.o, longest*dh)
	}
	starts := make([]int, len(seqs))
	for i, r := 1, 0; i < len(seqs); i++ {
		r += len(seqs[i-1])
		starts[i] = r
	}

	// Embeddings: word + position + token type 0, then LayerNorm.
	eps := c.LayerNormEps
	parallel(workers, len(seqs), 1, func(lo, hi int) {
		for si := lo; si < hi; si++ {
			for p, id := range seqs[si] {
				row := ws.x[(starts[si]+p)*h : (starts[si]+p+1)*h]
				pos := w.pos[p*h : (p+1)*h]
				for d := range row {
					row[d] = pos[d] + w.typ0[d]
				}
				w.addWord(row, id)
				layerNorm(row, w.embG, w.embB, eps)
			}
		}
	})

	for li := range w.layers {
		l := &w.layers[li]
		mulT(workers, ws.qkv, ws.x, l.qkvW, rows, 3*h, h)
		addBias(workers, ws.qkv, l.qkvB)
		w.attention(ws, seqs, starts, workers)
		mulT(workers, ws.tmp, ws.ctx, l.outW, rows, h, h)
		residualNorm(workers, ws.x, ws.tmp, l.outB, l.ln1G, l.ln1B, eps)
		mulT(workers, ws.inter, ws.x, l.ffInW, rows, in, h)
		biasGELU(workers, ws.inter, l.ffInB)
		mulT(workers, ws.tmp, ws.inter, l.ffOutW, rows, h, in)
		residualNorm(workers, ws.x, ws.tmp, l.ffOutB, l.ln2G, l.ln2B, eps)
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

// attention fills ws.ctx from ws.qkv: softmax(Q·Kᵀ/√d)·V for every sequence
// and head, the (sequence, head) pairs shared out to the workers.
func (w *weights) attention(ws *work, seqs [][]int32, starts []int, workers int) {
	h := w.m.Bert.Hidden
	heads := w.m.Bert.Heads
	dh := h / heads
	scale := float32(1 / math.Sqrt(float64(dh)))
	tasks := len(seqs) * heads
	var next atomic.Int64
	run := func(a *attScratch) {
		for {
			t := int(next.Add(1) - 1)
			if t >= tasks {
				return
			}
			si, hd := t/heads, t%heads
			n := len(seqs[si])
			base := starts[si]
			q, k, vt, s, o := a.q[:n*dh], a.k[:n*dh], a.vt[:dh*n], a.s[:n*n], a.o[:n*dh]
			for i := 0; i < n; i++ {
				row := ws.qkv[(base+i)*3*h:]
				copy(q[i*dh:(i+1)*dh], row[hd*dh:(hd+1)*dh])
				copy(k[i*dh:(i+1)*dh], row[h+hd*dh:h+(hd+1)*dh])
				for d, x := range row[2*h+hd*dh : 2*h+(hd+1)*dh] {
					vt[d*n+i] = x
				}
			}
			matMulT(s, q, k, n, n, dh)
			for i := 0; i < n; i++ {
				softmax(s[i*n:(i+1)*n], scale)
			}
			matMulT(o, s, vt, n, dh, n)
			for i := 0; i < n; i++ {
				copy(ws.ctx[(base+i)*h+hd*dh:(base+i)*h+(hd+1)*dh], o[i*dh:(i+1)*dh])
			}
		}
	}
	workers = min(workers, tasks)
	var wg sync.WaitGroup
	for i := 1; i < workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run(&ws.att[i])
		}()
	}
	run(&ws.att[0])
	wg.Wait()
}

// softmax replaces row by softmax(row × scale).
func softmax(row []float32, scale float32) {
	m := float32(math.Inf(-1))
	for _, x := range row {
		m = max(m, x)
	}
	var sum float32
	for i, x := range row {
		e := expf((x - m) * scale)
		row[i] = e
		sum += e
	}
	inv := 1 / sum
	for i := range row {
		row[i] *= inv
	}
}

// addBias adds b to every row of x.
func addBias(workers int, x, b []float32) {
	n := len(b)
	parallel(workers, len(x)/n, 16, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			row := x[r*n : (r+1)*n]
			for i := range row {
				row[i] += b[i]
			}
		}
	})
}

// biasGELU sets every row of x to GELU(x + b), the erf form BERT uses.
func biasGELU(workers int, x, b []float32) {
	n := len(b)
	parallel(workers, len(x)/n, 16, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			row := x[r*n : (r+1)*n]
			for i := range row {
				row[i] = gelu(row[i] + b[i])
			}
		}
	})
}

// residualNorm sets x = LayerNorm(x + y + b) row by row.
func residualNorm(workers int, x, y, b, g, beta []float32, eps float64) {
	n := len(b)
	parallel(workers, len(x)/n, 16, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			row, yr := x[r*n:(r+1)*n], y[r*n:(r+1)*n]
			for i := range row {
				row[i] += yr[i] + b[i]
			}
			layerNorm(row, g, beta, eps)
		}
	})
}

// layerNorm normalises row to zero mean and unit variance (the biased
// variance, as PyTorch), then scales by g and shifts by b.
func layerNorm(row, g, b []float32, eps float64) {
	var sum float64
	for _, x := range row {
		sum += float64(x)
	}
	mean := sum / float64(len(row))
	var ss float64
	for _, x := range row {
		d := float64(x) - mean
		ss += d * d
	}
	inv := 1 / math.Sqrt(ss/float64(len(row))+eps)
	m32, i32 := float32(mean), float32(inv)
	for i, x := range row {
		row[i] = (x-m32)*i32*g[i] + b[i]
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
