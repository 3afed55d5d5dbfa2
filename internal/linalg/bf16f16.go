package linalg

import (
	"fmt"
	"unsafe"
)

// The bf16 path over float16 panels: a weight held as PackedF16 holds it
// (built ahead, used in place from the binary) multiplied in bf16 by the
// AVX512_BF16 kernels. A product rounds each block of panels the kernel
// reads (nr columns, every k step) to bf16 pairs into the goroutine's
// scratch as it reaches it, once for all the row tiles it multiplies, so a
// process pays nothing to make the weight ready, as with float16 panels,
// and the products are bit for bit those of PackBF16 over the decoded
// weight (the float16 values are exact in float32, and both round to
// nearest even).

// PackedF16BF16 is a constant n×k weight in float16 panels (PackedF16's
// layout), multiplied in bf16.
type PackedF16BF16 struct {
	bf16Tiles
	data []uint16
}

// NewPackedF16BF16 wraps data, laid out as PackedF16 describes, without
// copying it. It fails where products do not run in hardware (HasBF16).
func NewPackedF16BF16(data []uint16, n, k int) (*PackedF16BF16, error) {
	if err := checkF16Panels(data, n, k); err != nil {
		return nil, err
	}
	t := newBF16Tiles(n, k)
	if t.kern == bgeneric || t.kern.nr%F16Panel != 0 {
		return nil, fmt.Errorf("linalg: this CPU multiplies in bf16 in software only")
	}
	return &PackedF16BF16{bf16Tiles: t, data: data}, nil
}

// MatMulT sets c (m×n) to a (m×k), rounded to bf16, times the transpose of
// the weight, summed in float32: PackBF16(UnpackF16(data, n, k), n, k).MatMulT.
func (p *PackedF16BF16) MatMulT(c, a []float32, m int) {
	checkProduct("PackedF16BF16.MatMulT", c, a, m, p.n, p.k)
	lowMul(p, c, a, nil, m, 2)
}

// MatMulTBias is PackedF16BF16.MatMulT plus bias (n values) added to every row.
func (p *PackedF16BF16) MatMulTBias(c, a, bias []float32, m int) {
	checkProduct("PackedF16BF16.MatMulTBias", c, a, m, p.n, p.k)
	checkLen("PackedF16BF16.MatMulTBias", "bias", bias, 1, p.n)
	lowMul(p, c, a, bias, m, 2)
}

// Prefault is PackedF16.Prefault.
func (p *PackedF16BF16) Prefault() uint16 { return prefaultF16(p.data) }

func (p *PackedF16BF16) tile(pa, own *lowWorkspace, t, jp int, c []float32, ldc int, bias []float32) {
	mr, nr, kp := p.kern.mr, p.kern.nr, p.kp
	if own.bFrom != unsafe.Pointer(p) || own.bPanel != jp {
		p.round(growU16(&own.b16, nr*kp), jp)
		own.bFrom, own.bPanel = unsafe.Pointer(p), jp
	}
	mode := modeStore
	if bias != nil {
		mode = modeBias
	}
	p.kern.fn(kp/2, pa.a16[t*mr*kp:(t+1)*mr*kp], own.b16[:nr*kp], c, ldc, mode, bias)
}

// round writes block jp of the weight (columns jp·nr…, every k step) as
// the bf16 kernel reads B, PackBF16's panel jp: per pair of k steps nr
// dwords, each a column's two values rounded to bf16.
func (p *PackedF16BF16) round(dst []uint16, jp int) {
	nr, k, kp := p.kern.nr, p.k, p.kp
	np := panels(p.n, F16Panel)
	pairs := k / 2
	stride := 2 * nr // values from one pair's dwords to the next's
	for v := range nr / F16Panel {
		q := jp*nr/F16Panel + v
		out := dst[2*F16Panel*v:]
		if q >= np { // past the weight's last panel: zero columns
			for pr := range kp / 2 {
				clear(out[pr*stride : pr*stride+2*F16Panel])
			}
			continue
		}
		src := p.data[q*k*F16Panel : (q+1)*k*F16Panel]
		if pairs > 0 {
			_ = out[(pairs-1)*stride+2*F16Panel-1] // bounds, for the assembly
			f16PairsBF16(&out[0], &src[0], pairs, 2*stride)
		}
		if k%2 == 1 { // the last k step, paired with a zero
			last := src[(k-1)*F16Panel:]
			o := out[pairs*stride:]
			for j := range F16Panel {
				o[2*j], o[2*j+1] = toBF16(halfToFloat(last[j])), 0
			}
		}
	}
}

// Pack returns the weight packed as PackBF16 packs its decoded values, bit
// for bit (TestF16BF16Pack): its products are this one's, without rounding
// a block of panels per product (about 0.4 ms of a 12-token query's 2.3),
// for 2 bytes a value of memory of its own.
func (p *PackedF16BF16) Pack() *PackedBF16 {
	nr, kp := p.kern.nr, p.kp
	np := panels(p.n, nr)
	q := &PackedBF16{bf16Tiles: p.bf16Tiles, data: make([]uint16, np*nr*kp)}
	for jp := range np {
		p.round(q.data[jp*nr*kp:(jp+1)*nr*kp], jp)
	}
	return q
}
