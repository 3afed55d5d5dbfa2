package linalg

import (
	"encoding/binary"
	"math"
	"slices"
	"testing"
)

// FuzzMatMulT checks every entry point of every kernel against the float64
// reference on fuzzer-chosen shapes and values (finite float32s decoded from
// the data, cycled to fill the operands), serial and split across cores.
func FuzzMatMulT(f *testing.F) {
	f.Add(uint8(1), uint8(1), uint8(1), uint8(0), false, []byte{0, 0, 128, 63})
	f.Add(uint8(13), uint8(33), uint8(17), uint8(1), true, []byte{1, 2, 3, 4, 5, 6, 7, 8})
	f.Add(uint8(40), uint8(65), uint8(9), uint8(2), false, []byte{0xff, 0xff, 0x7f, 0x7f, 0, 0, 0, 0x80})
	f.Fuzz(func(t *testing.T, m, n, k, kernIdx uint8, parallel bool, data []byte) {
		ks := testKernels()
		useKernel(t, ks[int(kernIdx)%len(ks)])
		if parallel {
			forceParallel(t)
		}
		mm, nn, kk := int(m)%48+1, int(n)%80+1, int(k)%48+1
		vals := decodeFloats(data)
		fill := func(n, off int) []float32 {
			s := make([]float32, n)
			for i := range s {
				s[i] = vals[(i+off)%len(vals)]
			}
			return s
		}
		a, b, bias := fill(mm*kk, 0), fill(nn*kk, 7), fill(nn, 3)
		ref, refBias := newReference(a, b, nil, mm, nn, kk), newReference(a, b, bias, mm, nn, kk)
		if ref.overflows() || refBias.overflows() {
			return // float32 cannot hold the product; nothing to compare
		}
		c := make([]float32, mm*nn)
		MatMulT(c, a, b, mm, nn, kk)
		ref.check(t, "MatMulT", c, 0)
		PackB(b, nn, kk).MatMulTBias(c, a, bias, mm)
		refBias.check(t, "PackedB.MatMulTBias", c, 0)
		MatMul(c, a, transpose(b, nn, kk), mm, nn, kk)
		ref.check(t, "MatMul", c, 0)
	})
}

// decodeFloats reads little-endian float32s from data, replacing NaN and
// ±Inf with 1 so that sums are comparable; empty data gives {1}.
func decodeFloats(data []byte) []float32 {
	var vals []float32
	for i := 0; i+4 <= len(data); i += 4 {
		v := math.Float32frombits(binary.LittleEndian.Uint32(data[i:]))
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			v = 1
		}
		vals = append(vals, v)
	}
	if len(vals) == 0 {
		vals = []float32{1}
	}
	return vals
}

// overflows reports whether some term or partial sum leaves float32's range,
// where the float32 product is legitimately Inf or NaN.
func (r *reference) overflows() bool {
	for i, w := range r.want {
		if math.Abs(w) > math.MaxFloat32/4 || r.bound[i] > math.MaxFloat32/(4*0x1p-24*float64(r.k+2)) {
			return true
		}
	}
	return false
}

// FuzzVector checks the assembly GELU, Softmax and LayerNorm against the
// portable float64 ones on fuzzer-chosen values (any float32 bits) and row
// lengths.
func FuzzVector(f *testing.F) {
	f.Add(uint8(3), []byte{0, 0, 128, 63, 0, 0, 128, 191, 0, 0, 0, 0})
	f.Add(uint8(17), []byte{0xff, 0xff, 0x7f, 0x7f, 1, 0, 0, 0, 0, 0, 0xc0, 0x7f})
	f.Fuzz(func(t *testing.T, cols uint8, data []byte) {
		var x []float32
		for i := 0; i+4 <= len(data); i += 4 {
			x = append(x, math.Float32frombits(binary.LittleEndian.Uint32(data[i:])))
		}
		if len(x) == 0 {
			return
		}
		paths := vecPaths()
		if len(paths) < 2 {
			return
		}
		run := func(path string, f func([]float32)) []float32 {
			useVec(t, path)
			y := append([]float32(nil), x...)
			f(y)
			return y
		}
		same := func(what string, got, want []float32, ok func(g, w float64) bool) {
			for i := range got {
				g, w := float64(got[i]), float64(want[i])
				if math.IsNaN(w) && math.IsNaN(g) {
					continue
				}
				if !ok(g, w) {
					t.Fatalf("%s of %v: [%d] = %g, want %g", what, x, i, g, w)
				}
			}
		}
		same("GELU", run("avx2", GELU), run("generic", GELU), func(g, w float64) bool {
			return g == w || geluOK(g, w)
		})
		if slices.Contains(paths, "avx512") {
			same("AVX-512 GELU", run("avx512", GELU), run("avx2", GELU), func(g, w float64) bool { return g == w })
		}
		c := int(cols)%len(x) + 1
		for len(x)%c != 0 {
			c--
		}
		for _, v := range x {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) || math.Abs(float64(v)) > 1e30 {
				return // softmax and layer norm of such rows are NaN/Inf on both paths in ways not worth matching
			}
		}
		sm := func(y []float32) { Softmax(y, c, 1) }
		same("Softmax", run("avx2", sm), run("generic", sm), func(g, w float64) bool {
			return math.Abs(g-w) <= 1e-5*w+0x1p-126
		})
		gamma, beta := make([]float32, c), make([]float32, c)
		for i := range gamma {
			gamma[i] = 1
		}
		ln := func(y []float32) { LayerNorm(y, c, gamma, beta, 1e-5) }
		same("LayerNorm", run("avx2", ln), run("generic", ln), func(g, w float64) bool {
			return math.Abs(g-w) <= 1e-4*(1+math.Abs(w))
		})
	})
}
