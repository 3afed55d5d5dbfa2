//go:build amd64 && !purego

package linalg

import (
	"math"
	"math/rand/v2"
	"testing"
)

// vecPaths lists the vector-kernel paths this machine can run: "avx512"
// is AVX2's softmax and layer norm with the AVX-512 GELU.
func vecPaths() []string {
	switch {
	case useVecAVX512:
		return []string{"generic", "avx2", "avx512"}
	case hasAVX2:
		return []string{"generic", "avx2"}
	}
	return []string{"generic"}
}

// useVec makes GELU, Softmax and LayerNorm take the named path until the
// test ends.
func useVec(tb testing.TB, name string) {
	tb.Helper()
	saved, saved512 := useVecAVX2, useVecAVX512
	useVecAVX2 = name == "avx2" || name == "avx512"
	useVecAVX512 = name == "avx512"
	tb.Cleanup(func() { useVecAVX2, useVecAVX512 = saved, saved512 })
}

// TestGELUAVX512: the AVX-512 GELU gives the AVX2 one's result bit for bit
// (the same vectors on every CPU), over every length's tail and values
// across the float32 range, specials included.
func TestGELUAVX512(t *testing.T) {
	if !useVecAVX512 {
		t.Skip("this CPU has no AVX-512 F")
	}
	r := rand.New(rand.NewPCG(7, 8))
	var xs []float32
	for range 100000 {
		switch r.IntN(3) {
		case 0:
			xs = append(xs, float32(r.NormFloat64()*4))
		case 1:
			xs = append(xs, math.Float32frombits(r.Uint32())) // any bits: NaNs, infinities, subnormals
		default:
			xs = append(xs, float32(r.Float64()*60-30))
		}
	}
	xs = append(xs, 0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()))
	for _, n := range []int{0, 1, 7, 15, 16, 17, 31, 33, len(xs)} {
		a := append([]float32(nil), xs[:n]...)
		b := append([]float32(nil), xs[:n]...)
		geluAVX2(a)
		geluAVX512(b)
		for i := range a {
			if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
				t.Fatalf("n=%d: GELU(%g): AVX-512 %g (%#x), AVX2 %g (%#x)", n, xs[i], b[i], math.Float32bits(b[i]), a[i], math.Float32bits(a[i]))
			}
		}
	}
}
