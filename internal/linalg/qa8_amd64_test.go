//go:build amd64 && !purego

package linalg

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestQuantBlock8 holds the assembly quantiser to quantizeBlock8 byte for
// byte on blocks of every kind it takes (ties, outliers, tiny and huge
// scales, subnormals) and checks that it refuses the rest untouched.
func TestQuantBlock8(t *testing.T) {
	if !useQA8Quant {
		t.Skip("no assembly quantiser on this CPU")
	}
	r := rand.New(rand.NewPCG(79, 80))
	blocks := [][]float32{
		{127, 0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 126.5, -126.5, 63.5},
		{1e38, -1e38, 3e38},
		{0x1p-100, -0x1p-101},
	}
	for range 2000 {
		b := randMat(r, QBlockLen)
		scale := float32(math.Pow(2, float64(r.IntN(200)-100)))
		for p := range b {
			b[p] *= scale
		}
		if r.IntN(4) == 0 {
			b[r.IntN(QBlockLen)] *= 1000
		}
		blocks = append(blocks, b)
	}
	// Refused: a NaN, an infinity, all zero, a scale below 2⁻¹²⁶.
	refused := [][]float32{{float32(math.NaN())}, {float32(math.Inf(-1))}, {}, {0x1p-120}, {1e-45}}
	const h, r0 = 4, 1 // row 1 of a 4-row tile
	sOff, cOff := h*QBlockLen+4*r0-r0*QBlockLen, h*(QBlockLen+4)+4*r0-r0*QBlockLen
	for i, blk := range append(blocks, refused...) {
		src := make([]float32, QBlockLen)
		copy(src, blk)
		got, want := make([]byte, cOff+4), make([]byte, cOff+4)
		for j := range got {
			got[j] = 0xa5
		}
		ok := quantBlock8AVX512(got, src, sOff, cOff, 128)
		if i >= len(blocks) {
			if ok || slices.ContainsFunc(got, func(x byte) bool { return x != 0xa5 }) {
				t.Fatalf("%v: taken (%v) or written", blk, ok)
			}
			continue
		}
		d, sum := quantizeBlock8(want, src)
		binary.LittleEndian.PutUint32(want[sOff:], math.Float32bits(d))
		binary.LittleEndian.PutUint32(want[cOff:], uint32(-128*sum))
		if !ok {
			t.Fatalf("block %d (%v…): refused", i, src[:3])
		}
		if !slices.Equal(got[:QBlockLen], want[:QBlockLen]) || !slices.Equal(got[sOff:sOff+4], want[sOff:sOff+4]) || !slices.Equal(got[cOff:], want[cOff:]) {
			t.Fatalf("block %d (%v…): assembly %v, Go %v", i, src[:3], got, want)
		}
	}
}
