package linalg

import (
	"fmt"
	"math"
)

// GELU replaces every x[i] with GELU(x[i]) = x·Φ(x), the exact (erf) form
// BERT uses, Φ being the standard normal CDF. With AVX2 it is within 1e-6
// relative of the exact value (8e-7 the worst seen) wherever the result is a
// normal float32; the portable path computes it in float64.
func GELU(x []float32) {
	if len(x) > 0 {
		runRows(opGELU, x, nil, nil, nil, min(len(x), 1024), 0, 0)
	}
}

// geluGeneric is the portable GELU: x·½·erfc(−x/√2) in float64 (erfc rather
// than 1+erf keeps the relative error small where GELU is tiny).
func geluGeneric(x []float32) {
	for i, v := range x {
		f := float64(v)
		x[i] = float32(0.5 * f * math.Erfc(-f/math.Sqrt2))
	}
}

// Softmax replaces each row of x (consecutive runs of cols values) with the
// softmax of scale times that row: x[j] = e^(s·x[j]−m)/Σₗ e^(s·x[l]−m), m the
// row's maximum of s·x. Attention passes scale = 1/√(head dim). It panics
// unless len(x) is a multiple of cols.
func Softmax(x []float32, cols int, scale float32) {
	if cols <= 0 || len(x)%cols != 0 {
		panic(fmt.Sprintf("linalg.Softmax: len(x) = %d is not a multiple of cols = %d", len(x), cols))
	}
	if len(x) > 0 {
		runRows(opSoftmax, x, nil, nil, nil, cols, scale, 0)
	}
}

// softmaxGeneric is the portable softmax of one row, in float64.
func softmaxGeneric(x []float32, scale float32) {
	s := float64(scale)
	m := math.Inf(-1)
	for _, v := range x {
		m = max(m, s*float64(v))
	}
	var sum float64
	for i, v := range x {
		e := math.Exp(s*float64(v) - m)
		sum += e
		x[i] = float32(e)
	}
	inv := 1 / sum
	for i, v := range x {
		x[i] = float32(float64(v) * inv)
	}
}

// LayerNorm normalises each row of x (runs of cols values) in place to zero
// mean and unit variance, then scales by gamma and shifts by beta (cols
// values each): x = (x−μ)/√(σ²+eps)·γ + β, σ² the biased variance (BERT's
// eps is 1e-12). It panics on mismatched lengths.
func LayerNorm(x []float32, cols int, gamma, beta []float32, eps float32) {
	checkNorm("LayerNorm", x, nil, cols, gamma, beta)
	if len(x) > 0 {
		runRows(opLayerNorm, x, nil, gamma, beta, cols, 0, eps)
	}
}

// AddLayerNorm is LayerNorm(x + res): BERT's residual connection and norm in
// one pass over memory. res has the shape of x and is not changed.
func AddLayerNorm(x, res []float32, cols int, gamma, beta []float32, eps float32) {
	checkNorm("AddLayerNorm", x, res, cols, gamma, beta)
	if len(x) > 0 {
		runRows(opLayerNorm, x, res, gamma, beta, cols, 0, eps)
	}
}

func checkNorm(fn string, x, res []float32, cols int, gamma, beta []float32) {
	switch {
	case cols <= 0 || len(x)%cols != 0:
		panic(fmt.Sprintf("linalg.%s: len(x) = %d is not a multiple of cols = %d", fn, len(x), cols))
	case res != nil && len(res) != len(x):
		panic(fmt.Sprintf("linalg.%s: len(res) = %d, want len(x) = %d", fn, len(res), len(x)))
	case len(gamma) != cols || len(beta) != cols:
		panic(fmt.Sprintf("linalg.%s: len(gamma) = %d, len(beta) = %d, want cols = %d", fn, len(gamma), len(beta), cols))
	}
}

// layerNormGeneric normalises one row after adding res (nil: none). The
// mean and the variance are summed in float64; the variance is the mean of
// (x−μ)², μ rounded to float32 as the normalisation uses it (the two-pass
// form, which does not cancel), exactly as the assembly does.
func layerNormGeneric(x, res, gamma, beta []float32, eps float32) {
	gamma, beta = gamma[:len(x)], beta[:len(x)]
	if res != nil {
		res = res[:len(x)]
		for i, v := range res {
			x[i] += v
		}
	}
	var s float64
	for _, v := range x {
		s += float64(v)
	}
	m := float32(s / float64(len(x)))
	var ss float64
	for _, v := range x {
		d := float64(v - m)
		ss += d * d
	}
	iv := float32(1 / math.Sqrt(ss/float64(len(x))+float64(eps)))
	for i, v := range x {
		x[i] = (v-m)*iv*gamma[i] + beta[i]
	}
}

// AddBias adds bias (cols values) to every row of x (runs of cols values).
// PackedB.MatMulTBias does this inside the product, for free.
func AddBias(x, bias []float32) {
	cols := len(bias)
	if cols == 0 || len(x)%cols != 0 {
		panic(fmt.Sprintf("linalg.AddBias: len(x) = %d is not a multiple of len(bias) = %d", len(x), cols))
	}
	for r := 0; r < len(x); r += cols {
		row := x[r : r+cols : r+cols]
		for i, b := range bias {
			row[i] += b
		}
	}
}
