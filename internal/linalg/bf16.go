package linalg

import (
	"math"
	"unsafe"
)

// The bf16 path: weights and, on the fly, activations rounded to bfloat16
// (8-bit mantissa, round to nearest even), products summed in float32 by
// AVX512_BF16's VDPBF16PS, two k steps per instruction. Only the rounding of
// the operands differs from the float32 product.

// PackedBF16 is a constant n×k weight rounded to bf16 and packed for
// PackedBF16.MatMulT.
type PackedBF16 struct {
	bf16Tiles
	data []uint16 // ⌈n/nr⌉ panels of kp/2 pairs × nr columns × 2 values
}

// bf16Tiles is what the bf16 weights (PackedBF16, PackedF16BF16) share:
// the shape, the kernel, and A packed for it.
type bf16Tiles struct {
	n, k, kp int // kp: k rounded up to even
	kern     *bkernel
}

func newBF16Tiles(n, k int) bf16Tiles {
	return bf16Tiles{n: n, k: k, kp: (k + 1) &^ 1, kern: activeBF16}
}

// N is the number of rows of the weight (the product's columns).
func (b *bf16Tiles) N() int { return b.n }

// K is the number of columns of the weight (the inner dimension).
func (b *bf16Tiles) K() int { return b.k }

func (b *bf16Tiles) shape() (n, k, mr, nr int) { return b.n, b.k, b.kern.mr, b.kern.nr }

// A bkernel is a bf16 micro-kernel: kc2 pairs of k steps of an mr-row tile
// of packed A times an nr-column panel of B into c (mode 0 store, mode 2
// store plus bias).
type bkernel struct {
	name   string
	mr, nr int
	fn     func(kc2 int, a, b []uint16, c []float32, ldc, mode int, bias []float32)
}

// activeBF16 is the bf16 kernel new packings use; tests switch it.
var activeBF16 = bkernels()[0]

// HasBF16 reports whether PackedBF16 products run in hardware (AVX512_BF16).
// Without it they are computed in portable Go, correct but slow: use
// PackedB instead.
func HasBF16() bool { return activeBF16 != bgeneric }

// PackBF16 rounds b (n×k, row-major: PyTorch's [out×in] weight layout) to
// bf16 and packs it.
func PackBF16(b []float32, n, k int) *PackedBF16 {
	checkDims("PackBF16", 1, n, k)
	checkLen("PackBF16", "b", b, n, k)
	t := newBF16Tiles(n, k)
	kern, kp := t.kern, t.kp
	np := panels(n, kern.nr)
	p := &PackedBF16{bf16Tiles: t, data: make([]uint16, np*kern.nr*kp)}
	row := make([]uint16, kp)
	for j := range n {
		for q, v := range b[j*k : (j+1)*k] {
			row[q] = toBF16(v)
		}
		jp, jj := j/kern.nr, j%kern.nr
		panel := p.data[jp*kern.nr*kp : (jp+1)*kern.nr*kp]
		interleave(unsafe.Slice((*uint32)(unsafe.Pointer(&panel[0])), kern.nr*kp/2),
			unsafe.Slice((*uint32)(unsafe.Pointer(&row[0])), kp/2), kern.nr, jj)
	}
	return p
}

// MatMulT sets c (m×n) to a (m×k), rounded to bf16, times the transpose of
// the packed matrix, summed in float32.
func (p *PackedBF16) MatMulT(c, a []float32, m int) {
	checkProduct("PackedBF16.MatMulT", c, a, m, p.n, p.k)
	lowMul(p, c, a, nil, m, 2)
}

// MatMulTBias is PackedBF16.MatMulT plus bias (n values) added to every row.
func (p *PackedBF16) MatMulTBias(c, a, bias []float32, m int) {
	checkProduct("PackedBF16.MatMulTBias", c, a, m, p.n, p.k)
	checkLen("PackedBF16.MatMulTBias", "bias", bias, 1, p.n)
	lowMul(p, c, a, bias, m, 2)
}

// packA rounds rows [i0, i0+rows) of a (m×k) to bf16 into ws, tiles of
// mr rows, per pair of k steps mr dwords; rows past the end are zero.
func (b *bf16Tiles) packA(ws *lowWorkspace, a []float32, i0, rows int) {
	mr, k, kp := b.kern.mr, b.k, b.kp
	nt := (rows + mr - 1) / mr
	dst := growU16(&ws.a16, nt*mr*kp)
	row := growU16(&ws.row16, kp)
	if kp > k {
		row[k] = 0
	}
	for r := range nt * mr {
		t, i := r/mr, r%mr
		tile := unsafe.Slice((*uint32)(unsafe.Pointer(&dst[t*mr*kp])), mr*kp/2)
		if r >= rows {
			for g := range kp / 2 {
				tile[g*mr+i] = 0
			}
			continue
		}
		toBF16Row(row[:k], a[(i0+r)*k:(i0+r+1)*k])
		interleave(tile, unsafe.Slice((*uint32)(unsafe.Pointer(&row[0])), kp/2), mr, i)
	}
}

func (p *PackedBF16) tile(ws, _ *lowWorkspace, t, jp int, c []float32, ldc int, bias []float32) {
	mr, nr, kp := p.kern.mr, p.kern.nr, p.kp
	mode := modeStore
	if bias != nil {
		mode = modeBias
	}
	p.kern.fn(kp/2, ws.a16[t*mr*kp:(t+1)*mr*kp], p.data[jp*nr*kp:(jp+1)*nr*kp], c, ldc, mode, bias)
}

func growU16(buf *[]uint16, n int) []uint16 {
	if cap(*buf) < n {
		*buf = make([]uint16, n)
	}
	*buf = (*buf)[:n]
	return *buf
}

// toBF16 rounds f to the nearest bfloat16 (ties to even); NaN stays NaN.
func toBF16(f float32) uint16 {
	b := math.Float32bits(f)
	if b&0x7fffffff > 0x7f800000 {
		return uint16(b>>16) | 0x40
	}
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}

func fromBF16(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// toBF16RowGeneric rounds src to bf16 into dst.
func toBF16RowGeneric(dst []uint16, src []float32) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = toBF16(v)
	}
}

// bgeneric is the portable bf16 kernel (4×4): bf16 products summed in float32.
var bgeneric = &bkernel{name: "bf16-generic", mr: 4, nr: 4, fn: bkernGeneric}

func bkernGeneric(kc2 int, a, b []uint16, c []float32, ldc, mode int, bias []float32) {
	const mr, nr = 4, 4
	var acc [mr][nr]float32
	a, b = a[:kc2*mr*2], b[:kc2*nr*2]
	for g := range kc2 {
		for i := range mr {
			a0, a1 := fromBF16(a[(g*mr+i)*2]), fromBF16(a[(g*mr+i)*2+1])
			for j := range nr {
				acc[i][j] += a0*fromBF16(b[(g*nr+j)*2]) + a1*fromBF16(b[(g*nr+j)*2+1])
			}
		}
	}
	for i := range mr {
		row := c[i*ldc : i*ldc+nr]
		for j := range nr {
			v := acc[i][j]
			if mode == modeBias {
				v += bias[j]
			}
			row[j] = v
		}
	}
}
