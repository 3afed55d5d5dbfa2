package glove

// Pooling computes a text's vector as Σ c(w)·u(w) over its known words, then
// removes the common component k (v -= (v·k)k) and L2-normalises. c(w) is 1
// for Mean (0 for stopwords) and a/(a+p(w)) for SIF, with p(w) a Zipf
// estimate from w's frequency rank: weights are static, so a stored vector
// never goes stale as a store grows. Dividing by the word count is skipped:
// both the removal and the normalisation are scale-invariant.

import (
	"fmt"
	"math"
	"sync"

	"github.com/engram-memory/engram/embed/glove/vecfile"
)

// table is a file prepared for one Options: coef[i] = c(word i) × its scale,
// so that pooling reads each int8 row once and multiplies by one number.
type table struct {
	dim   int
	vecs  string
	coef  []float32
	comp  []float32 // nil: nothing to remove
	index map[string]int32
}

func newTable(f *vecfile.File, index map[string]int32, o Options) (*table, error) {
	w := weights(f, o)
	t := &table{dim: f.Dim, vecs: f.Vectors, coef: make([]float32, len(w)), index: index}
	for i, c := range w {
		t.coef[i] = float32(c) * f.Scales[i]
	}
	if o.KeepCommon {
		return t, nil
	}
	comp, ok := f.Components[componentKey(o)]
	if !ok {
		var err error
		if comp, err = commonComponent(f, w); err != nil {
			return nil, err
		}
	}
	if len(comp) != f.Dim {
		return nil, fmt.Errorf("glove: component has length %d, want %d", len(comp), f.Dim)
	}
	t.comp = comp
	return t, nil
}

// componentKey names the component a file stores for o ("sif", "mean"); a
// non-default a has none stored and is fitted on load.
func componentKey(o Options) string {
	if o.Pooling == SIF && o.SIFA != DefaultSIFA {
		return ""
	}
	return o.Pooling.String()
}

// zipfP estimates the probability of the word at 1-based rank r in a
// vocabulary of v words by Zipf's law with exponent 1: p = 1/(r·H_v).
func zipfP(r uint32, v uint32) float64 {
	n := float64(max(v, r, 1))
	h := math.Log(n) + 0.5772156649015329 + 1/(2*n) // harmonic number H_n
	return 1 / (float64(max(r, 1)) * h)
}

// weights returns c(w) for every word of f under o (without the row scales).
func weights(f *vecfile.File, o Options) []float64 {
	w := make([]float64, len(f.Words))
	for i := range w {
		switch o.Pooling {
		case Mean:
			if !isStopword(f.Words[i]) {
				w[i] = 1
			}
		default:
			w[i] = o.SIFA / (o.SIFA + zipfP(f.Ranks[i], f.SourceWords))
		}
	}
	return w
}

// scratch is per-call working space, pooled to keep Embed allocation-free
// apart from its result.
type scratch struct {
	acc    []float32
	buf    []byte
	splits []int
}

var scratchPool sync.Pool

func getScratch(dim int) *scratch {
	sc, _ := scratchPool.Get().(*scratch)
	if sc == nil {
		sc = &scratch{buf: make([]byte, 0, 64), splits: make([]int, 0, 8)}
	}
	if cap(sc.acc) < dim {
		sc.acc = make([]float32, dim)
	}
	sc.acc = sc.acc[:dim]
	return sc
}

func putScratch(sc *scratch) { scratchPool.Put(sc) }

// pool writes text's vector into out (len dim) and reports whether the text
// had any contributing word; out is left zero when not.
func (t *table) pool(text string, out []float32, sc *scratch) bool {
	acc := sc.acc
	clear(acc)
	n := 0
	add := func(i int32) {
		c := t.coef[i]
		if c == 0 {
			return
		}
		row := t.vecs[int(i)*t.dim : int(i+1)*t.dim]
		a := acc[:len(row)]
		for j := range a {
			a[j] += c * float32(int8(row[j]))
		}
		n++
	}
	sc.buf, sc.splits = scanRuns(text, sc.buf, sc.splits, func(r run) {
		if i, ok := t.index[string(r.word)]; ok || len(r.splits) == 0 {
			if ok {
				add(i)
			}
			return
		}
		start := 0
		for k := 0; k <= len(r.splits); k++ {
			end := len(r.word)
			if k < len(r.splits) {
				end = r.splits[k]
			}
			if i, ok := t.index[string(r.word[start:end])]; ok {
				add(i)
			}
			start = end
		}
	})
	if n == 0 {
		return false
	}
	if t.comp != nil {
		var d float32
		for j, k := range t.comp {
			d += acc[j] * k
		}
		for j, k := range t.comp {
			acc[j] -= d * k
		}
	}
	var ss float64
	for _, x := range acc {
		ss += float64(x) * float64(x)
	}
	if ss == 0 || math.IsNaN(ss) || math.IsInf(ss, 0) {
		return false
	}
	inv := float32(1 / math.Sqrt(ss))
	for j, x := range acc {
		out[j] = x * inv
	}
	return true
}
