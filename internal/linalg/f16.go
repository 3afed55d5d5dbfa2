package linalg

import (
	"fmt"
	"math"
	"unsafe"
)

// The float16 path: a weight converted at build time into the panel layout
// the float32 kernel reads, but in float16, and used in place (from the
// binary's read-only data, say). Its kernel converts each value exactly to
// float32 as it loads it and is otherwise the float32 kernel, so a product
// is bit-for-bit that of PackB over the decoded weight; only the per-process
// decoding and packing are gone.

// F16Panel is the panel width of PackedF16's layout: the nr of the kernels
// that read it.
const F16Panel = 16

// activeF16 is the float16 kernel new PackedF16 values use, nil when this
// CPU has none; tests switch it.
var activeF16 = func() *kernel {
	if ks := f16Kernels(); len(ks) > 0 {
		return ks[0]
	}
	return nil
}()

// HasF16 reports whether this CPU multiplies by float16 panels directly
// (AVX2, FMA and F16C on amd64). Without it, NewPackedF16 refuses; decode
// with UnpackF16 and use PackB.
func HasF16() bool { return activeF16 != nil }

// F16PanelLen is the number of float16 values of an n×k weight in panels:
// ⌈n/16⌉·k·16.
func F16PanelLen(n, k int) int { return panels(n, F16Panel) * k * F16Panel }

// PackedF16 is a constant n×k weight (PyTorch's [out×in] layout) held as
// float16 in panels of F16Panel rows: panel jp holds, for each k step p,
// b[jp·16+j][p] for j = 0…15 at data[(jp·k+p)·16+j], rows past n zero.
type PackedF16 struct {
	n, k int
	kern *kernel
	data []uint16
	// fused is the fused kernel (AVX-512) that multiplies the panels with
	// tiles of up to 16 rows instead, when there is one and k is a multiple
	// of 32 (its blocks): the same sums, bit for bit.
	fused *qKernel
}

// NewPackedF16 wraps data, laid out as PackedF16 describes, without copying
// it; it is only ever read, so it may be read-only memory.
func NewPackedF16(data []uint16, n, k int) (*PackedF16, error) {
	if err := checkF16Panels(data, n, k); err != nil {
		return nil, err
	}
	if activeF16 == nil {
		return nil, fmt.Errorf("linalg: this CPU has no float16 kernel (AVX2, FMA and F16C)")
	}
	p := &PackedF16{n: n, k: k, kern: activeF16, data: data}
	if k%QBlockLen == 0 {
		p.fused = activeQ
	}
	return p, nil
}

// N is the number of rows of the packed matrix (the product's columns).
func (p *PackedF16) N() int { return p.n }

// K is the number of columns of the packed matrix (the inner dimension).
func (p *PackedF16) K() int { return p.k }

// MatMulT sets c (m×n) to a (m×k) times the transpose of the weight, exactly
// as PackB(UnpackF16(data, n, k), n, k).MatMulT does.
func (p *PackedF16) MatMulT(c, a []float32, m int) {
	checkProduct("PackedF16.MatMulT", c, a, m, p.n, p.k)
	p.mul(c, a, nil, m)
}

// MatMulTBias is PackedF16.MatMulT plus bias (n values) added to every row.
func (p *PackedF16) MatMulTBias(c, a, bias []float32, m int) {
	checkProduct("PackedF16.MatMulTBias", c, a, m, p.n, p.k)
	checkLen("PackedF16.MatMulTBias", "bias", bias, 1, p.n)
	p.mul(c, a, bias, m)
}

func (p *PackedF16) mul(c, a, bias []float32, m int) {
	if p.fused != nil {
		b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(p.data))), 2*len(p.data))
		mulQ(p.kern, p.fused, f16Panels, b, c, a, bias, m, p.n, p.k)
		return
	}
	ws := workspaces.Get().(*workspace)
	g := gemmPool.Get().(*gemm)
	g.kern, g.m, g.n, g.k = p.kern, m, p.n, p.k
	g.a, g.lda, g.b16, g.c, g.ldc, g.bias = a, p.k, p.data, c, p.n, bias
	g.run(ws)
	g.a, g.b16, g.c, g.bias = nil, nil, nil, nil
	gemmPool.Put(g)
	workspaces.Put(ws)
}

// Prefault reads one value of every 4 KiB of the weight, so that its pages
// are mapped in (the weight may lie in a file mapping, such as the binary's
// read-only data) before a product needs them; it returns their XOR, for
// the caller to keep so that the reads are not optimised away.
func (p *PackedF16) Prefault() uint16 { return prefaultF16(p.data) }

// prefaultF16 reads one value of every 4 KiB of data and returns their XOR.
func prefaultF16(data []uint16) uint16 {
	var x uint16
	for i := 0; i < len(data); i += 2048 {
		x ^= data[i]
	}
	return x
}

// checkF16Panels says what is wrong with data as the float16 panels of an
// n×k weight (PackedF16's layout), if anything.
func checkF16Panels(data []uint16, n, k int) error {
	if n <= 0 || k <= 0 {
		return fmt.Errorf("linalg: float16 panels of %d×%d", n, k)
	}
	if len(data) != F16PanelLen(n, k) {
		return fmt.Errorf("linalg: %d float16 values for %d×%d panels, want %d", len(data), n, k, F16PanelLen(n, k))
	}
	return nil
}

// UnpackF16 decodes float16 panels (PackedF16's layout) into the n×k
// row-major float32 weight, exactly.
func UnpackF16(data []uint16, n, k int) ([]float32, error) {
	if err := checkF16Panels(data, n, k); err != nil {
		return nil, err
	}
	out := make([]float32, n*k)
	for j := range n {
		jp, jj := j/F16Panel, j%F16Panel
		panel := data[jp*k*F16Panel : (jp+1)*k*F16Panel]
		row := out[j*k : (j+1)*k]
		for p := range row {
			row[p] = halfToFloat(panel[p*F16Panel+jj])
		}
	}
	return out, nil
}

// PackF16 rounds b (n×k, row-major) to float16 (nearest, ties to even) in
// PackedF16's layout: what tools/modelconv writes.
func PackF16(b []float32, n, k int) []uint16 {
	checkDims("PackF16", 1, n, k)
	checkLen("PackF16", "b", b, n, k)
	out := make([]uint16, F16PanelLen(n, k))
	for j := range n {
		jp, jj := j/F16Panel, j%F16Panel
		for p, v := range b[j*k : (j+1)*k] {
			out[(jp*k+p)*F16Panel+jj] = floatToHalf(v)
		}
	}
	return out
}

// halfToFloat converts IEEE 754 binary16 bits to float32 exactly (as
// tensorfile.HalfToFloat).
func halfToFloat(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	frac := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f: // Inf or NaN
		return math.Float32frombits(sign | 0x7f800000 | frac<<13)
	case exp != 0: // normal
		return math.Float32frombits(sign | (exp+112)<<23 | frac<<13)
	case frac == 0: // zero
		return math.Float32frombits(sign)
	}
	f := float32(frac) * (1.0 / (1 << 24)) // subnormal: frac × 2⁻²⁴, exact
	if sign != 0 {
		return -f
	}
	return f
}

// floatToHalf rounds f to binary16 bits, to nearest, ties to even (as
// tensorfile.FloatToHalf).
func floatToHalf(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23) & 0xff
	frac := b & 0x7fffff
	if exp == 0xff {
		if frac != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	}
	e := exp - 127 + 15
	if e >= 0x1f {
		return sign | 0x7c00
	}
	if e <= 0 {
		if e < -10 {
			return sign
		}
		m := frac | 0x800000
		shift := uint32(14 - e)
		half := uint32(1) << (shift - 1)
		v := m >> shift
		rem := m & (1<<shift - 1)
		if rem > half || (rem == half && v&1 == 1) {
			v++
		}
		return sign | uint16(v)
	}
	v := uint32(e)<<10 | frac>>13
	rem := frac & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && v&1 == 1) {
		v++
	}
	return sign | uint16(v)
}
