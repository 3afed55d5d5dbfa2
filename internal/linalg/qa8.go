package linalg

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Int8 activations over block-quantised weights: an approximate product
// for a caller that has measured its error and accepted it. Each row of A
// is quantised per block of 32 values as Q8_0 quantises a weight (scale
// d = max|a|/127, q = round-half-even(a/d)), each block's integer dot
// product with the weight's block is exact, and it is scaled by both
// blocks' scales: c[i][j] = Σ_b float32(Σ_p qa·qw) · (dw[j]·da[i]), summed
// over b in order, then the bias. Per block, not per row, because BERT's
// activations have a few outlier dimensions; with a row's scale set by
// them the rest round to a handful of levels (per row: median cosine 0.997
// to float32 on all-MiniLM-L6-v2, precision.py).
//
// On amd64 with AVX-512 VNNI the integer products run on
// VPDPBUSD, 64 multiply-adds an instruction (float32's FMA does 16):
// weights as unsigned bytes (Q4_0's q+8 as stored, Q8_0's q+128), A as
// signed, and a per-row correction (−8·Σqa or −128·Σqa, made when A is
// packed) undoes the offset exactly. Elsewhere the portable kernel
// computes the same sums.

// QA8 is a PackedQ multiplied with int8 activations (PackedQ.Int8Activations).
type QA8 struct {
	*PackedQ
	kern *qa8Kernel
}

// A qa8Fn is an int8-activation micro-kernel: a tile of h rows of A packed
// by QA8.packA (per block: h rows' 32 signed bytes, then their h float32
// scales, then their h int32 corrections), times kb blocks of one panel
// (b), stored to c (row stride ldc) with bias (16 values) added unless it
// is nil.
type qa8Fn func(kb int, a []byte, b []byte, c []float32, ldc int, bias []float32)

// qa8Kernel is a set of int8-activation kernels: fns[f][h/2−1] for Q4_0
// and Q8_0 and tiles of h = 2, 4, … 16 rows.
type qa8Kernel struct {
	name string
	fns  [2][8]qa8Fn
}

// A QA8's products split like the other low-precision ones (lowMul): its
// kernels run about 3× float32's rate.
const qa8Speed = 3

// qa8Generic is the portable kernel set, the reference of the others.
var qa8Generic = func() *qa8Kernel {
	k := &qa8Kernel{name: "int8a-generic"}
	for f := range 2 {
		for t := range 8 {
			h, f := 2*(t+1), QFormat(f)
			k.fns[f][t] = func(kb int, a, b []byte, c []float32, ldc int, bias []float32) {
				qa8TileGeneric(f, h, kb, a, b, c, ldc, bias)
			}
		}
	}
	return k
}()

// activeQA8 is the kernel set new int8-activation products use; tests
// switch it.
var activeQA8 = func() *qa8Kernel {
	if ks := qa8Kernels(); len(ks) > 0 {
		return ks[0]
	}
	return qa8Generic
}()

// HasInt8Activations reports whether PackedQ.Int8Activations products
// run on an integer kernel (AVX-512 VNNI) rather than in
// portable Go.
func HasInt8Activations() bool { return activeQA8 != qa8Generic }

// Int8Activations returns the weight multiplied with A quantised to int8
// per block of 32 values (see qa8.go): approximate, about 2–2.5× faster
// than the float32 products where HasInt8Activations, many times slower
// elsewhere. It shares the weight's panels.
func (p *PackedQ) Int8Activations() *QA8 {
	return &QA8{PackedQ: p, kern: activeQA8}
}

// MatMulT sets c (m×n) to approximately a (m×k) times the transpose of
// the weight.
func (q *QA8) MatMulT(c, a []float32, m int) {
	checkProduct("PackedQ.Int8Activations.MatMulT", c, a, m, q.n, q.k)
	lowMul(q, c, a, nil, m, qa8Speed)
}

// MatMulTBias is QA8.MatMulT plus bias (n values) added to every row.
func (q *QA8) MatMulTBias(c, a, bias []float32, m int) {
	checkProduct("PackedQ.Int8Activations.MatMulTBias", c, a, m, q.n, q.k)
	checkLen("PackedQ.Int8Activations.MatMulTBias", "bias", bias, 1, q.n)
	lowMul(q, c, a, bias, m, qa8Speed)
}

func (q *QA8) String() string {
	return fmt.Sprintf("PackedQ(%d×%d, %v, int8 activations, %s)", q.n, q.k, q.f, q.kern.name)
}

const qa8MR = 16

func (q *QA8) shape() (n, k, mr, nr int) { return q.n, q.k, qa8MR, 16 }

func (q *QA8) shortTiles() {}

// qa8BlockBytes is the bytes of one block of a packed tile of h rows.
func qa8BlockBytes(h int) int { return h * (QBlockLen + 8) }

// packA quantises rows [i0, i0+rows) of a into ws.a8: tiles of 16 rows and
// a last one of the next even height, block by block (see qa8Fn); rows
// past the end are zero with scale 0. ws.rows keeps rows, for tile.
func (q *QA8) packA(ws *lowWorkspace, a []float32, i0, rows int) {
	k, blocks := q.k, q.k/QBlockLen
	corr := int32(128)
	if q.f == Q4_0 {
		corr = 8
	}
	nt := (rows + qa8MR - 1) / qa8MR
	dst := growBytes(&ws.a8, nt*qa8MR*blocks*qa8BlockBytes(1))
	ws.rows = rows
	off := 0
	for t := range nt {
		n := min(qa8MR, rows-t*qa8MR)
		h := (n + 1) &^ 1
		bb := qa8BlockBytes(h)
		for b := range blocks {
			blk := dst[off+b*bb : off+(b+1)*bb]
			for r := range h {
				qs := blk[r*QBlockLen:]
				sOff, cOff := h*QBlockLen+4*r, h*(QBlockLen+4)+4*r
				var d float32
				var sum int32
				if r < n {
					row := (i0+t*qa8MR+r)*k + b*QBlockLen
					src := a[row : row+QBlockLen]
					if quantBlock8Fast(qs, src, sOff-r*QBlockLen, cOff-r*QBlockLen, corr) {
						continue
					}
					d, sum = quantizeBlock8(qs, src)
				} else {
					clear(qs[:QBlockLen])
				}
				binary.LittleEndian.PutUint32(blk[sOff:], math.Float32bits(d))
				binary.LittleEndian.PutUint32(blk[cOff:], uint32(-corr*sum))
			}
		}
		off += blocks * bb
	}
}

// quantizeBlock8 quantises 32 values as Q8_0 does, into dst as signed
// bytes; it returns the scale and the integers' sum. A block with a NaN or
// an infinity gets scale NaN (its products are NaN, as float32's would be);
// one whose scale would be below 2⁻¹²⁶ (1/d overflows) is zero.
func quantizeBlock8(dst []byte, src []float32) (d float32, sum int32) {
	var amax float32
	for _, v := range src {
		amax = max(amax, float32(math.Abs(float64(v))))
	}
	d = amax / 127
	switch {
	case !(d <= math.MaxFloat32): // a NaN or an infinity: the block's products are NaN
		clear(dst[:len(src)])
		return float32(math.NaN()), 0
	case d < 0x1p-126: // zero, or too small for 1/d: zero
		clear(dst[:len(src)])
		return 0, 0
	}
	inv := 1 / d
	for p, v := range src {
		x := int32(math.RoundToEven(float64(v * inv)))
		x = min(max(x, -127), 127)
		dst[p] = byte(int8(x))
		sum += x
	}
	return d, sum
}

// tile computes row tile t of ws's packed rows times panel jp into c.
func (q *QA8) tile(ws, _ *lowWorkspace, t, jp int, c []float32, ldc int, bias []float32) {
	blocks := q.k / QBlockLen
	n := min(qa8MR, ws.rows-t*qa8MR)
	h := (n + 1) &^ 1
	off := t * qa8MR * blocks * qa8BlockBytes(1)
	a := ws.a8[off : off+blocks*qa8BlockBytes(h)]
	pb := q.f.panelBlock()
	b := q.data[jp*blocks*pb : (jp+1)*blocks*pb]
	q.kern.fns[q.f][h/2-1](blocks, a, b, c, ldc, bias)
}

// qa8TileGeneric is the portable int8-activation kernel.
func qa8TileGeneric(f QFormat, h, kb int, a, b []byte, c []float32, ldc int, bias []float32) {
	pb, bb := f.panelBlock(), qa8BlockBytes(h)
	var acc [qa8MR][16]float32
	var w [16][QBlockLen]int32
	var dw [16]float32
	for blk := range kb {
		wb := b[blk*pb : (blk+1)*pb]
		panelScales(&dw, wb)
		for j := range 16 {
			for p := range QBlockLen {
				if f == Q8_0 {
					w[j][p] = int32(int8(wb[32+p*16+j]))
				} else if x := wb[32+(p%16)*16+j]; p < 16 {
					w[j][p] = int32(x&0x0f) - 8
				} else {
					w[j][p] = int32(x>>4) - 8
				}
			}
		}
		ab := a[blk*bb : (blk+1)*bb]
		for i := range h {
			qa := ab[i*QBlockLen : (i+1)*QBlockLen]
			da := math.Float32frombits(binary.LittleEndian.Uint32(ab[h*QBlockLen+4*i:]))
			for j := range 16 {
				var dot int32
				for p, x := range qa {
					dot += int32(int8(x)) * w[j][p]
				}
				acc[i][j] += float32(float32(dot) * float32(dw[j]*da))
			}
		}
	}
	for i := range h {
		row := c[i*ldc : i*ldc+16]
		for j := range 16 {
			v := acc[i][j]
			if bias != nil {
				v += bias[j]
			}
			row[j] = v
		}
	}
}
