package glove

// The common component is the direction shared by almost every pooled vector
// (for GloVe, mostly frequency); SIF removes the first singular vector of the
// pooled vectors. Fitting it on a store's own texts would make vectors change
// as the store grows, so it is fitted once, on the vocabulary: model a text as
// L words drawn from q (the Zipf probabilities of contributing words,
// renormalised) and pooled as v = (1/L) Σ c(w)u(w). Then
//
//	E[v vᵀ] = (1/L) E_q[c² u uᵀ] + (1 − 1/L) μ μᵀ,   μ = E_q[c u],
//
// and the component is that matrix's top eigenvector, found by power
// iteration without forming the matrix (each step is O(words × dim)).

import (
	"fmt"
	"math"

	"github.com/engram-memory/engram/embed/glove/vecfile"
)

// Constants of the fit.
const (
	// TypicalTextWords is L, the words in a typical memory text.
	TypicalTextWords = 10
	powerIterations  = 100
	powerTolerance   = 1e-9
)

// CommonComponent fits the unit vector that pooling under opts removes, over
// f's vocabulary (see the model above). The converter stores its result in
// the file; it is exported for that and for measurement.
func CommonComponent(f *vecfile.File, opts Options) ([]float32, error) {
	opts, err := opts.resolved()
	if err != nil {
		return nil, err
	}
	return commonComponent(f, weights(f, opts))
}

func commonComponent(f *vecfile.File, c []float64) ([]float32, error) {
	dim := f.Dim
	q := make([]float64, len(c))
	var total float64
	for i := range q {
		if c[i] != 0 && f.Scales[i] != 0 {
			q[i] = zipfP(f.Ranks[i], f.SourceWords)
			total += q[i]
		}
	}
	if total == 0 {
		return nil, fmt.Errorf("glove: no contributing word to fit a common component on")
	}
	// Dequantise once, with each word's coefficient folded in.
	u := make([]float32, len(c)*dim)
	mu := make([]float64, dim)
	for i := range c {
		if q[i] == 0 {
			continue
		}
		q[i] /= total
		s := c[i] * float64(f.Scales[i])
		row := f.Row(i)
		ui := u[i*dim : (i+1)*dim]
		for j := range ui {
			ui[j] = float32(s * float64(int8(row[j])))
			mu[j] += q[i] * float64(ui[j])
		}
	}
	const l = TypicalTextWords
	apply := func(dst, x []float64) {
		clear(dst)
		for i := range q {
			if q[i] == 0 {
				continue
			}
			ui := u[i*dim : (i+1)*dim]
			var d float64
			for j, v := range ui {
				d += float64(v) * x[j]
			}
			d *= q[i] / l
			for j, v := range ui {
				dst[j] += d * float64(v)
			}
		}
		d := dot(mu, x) * (1 - 1.0/l)
		for j := range dst {
			dst[j] += d * mu[j]
		}
	}
	x := append([]float64(nil), mu...)
	if normalize(x) == 0 {
		for j := range x {
			x[j] = 1
		}
		normalize(x)
	}
	y := make([]float64, dim)
	for it := 0; it < powerIterations; it++ {
		apply(y, x)
		if normalize(y) == 0 {
			return nil, fmt.Errorf("glove: common component: second moment is zero")
		}
		var diff float64
		for j := range y {
			diff += (y[j] - x[j]) * (y[j] - x[j])
		}
		x, y = y, x
		if diff < powerTolerance {
			break
		}
	}
	// Fix the sign so that the same data always gives the same vector.
	if dot(x, mu) < 0 {
		for j := range x {
			x[j] = -x[j]
		}
	}
	out := make([]float32, dim)
	for j := range x {
		out[j] = float32(x[j])
	}
	return out, nil
}

func dot(a, b []float64) float64 {
	var s float64
	for j := range a {
		s += a[j] * b[j]
	}
	return s
}

func normalize(x []float64) float64 {
	n := math.Sqrt(dot(x, x))
	if n == 0 || math.IsNaN(n) {
		return 0
	}
	for j := range x {
		x[j] /= n
	}
	return n
}
