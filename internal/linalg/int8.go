package linalg

import (
	"fmt"
	"math"
	"unsafe"
)

// The int8 path: an approximate product for linear layers whose error the
// caller has measured and accepted. The weight is quantised once, per row
// (per output column of the product) with scale max|row|/127; each product
// quantises the rows of A the same way, multiplies the integers exactly
// (VNNI on amd64: VPDPBUSD, u8·s8 summed four at a time into int32) and
// scales back. The error is that of rounding both operands to 8 bits.

// QuantizedB is a constant n×k weight quantised to int8 for QuantizedB.MatMulT.
type QuantizedB struct {
	n, k, kp int // kp: k rounded up to a multiple of 4
	kern     *qkernel
	data     []int8    // ⌈n/nr⌉ panels of kp/4 groups × nr columns × 4 bytes
	scale    []float32 // per column of the product, padded to the panels
	comp     []int32   // 128·Σₚ q[j][p]: undoes A's +128 shift
}

// A qkernel is an int8 micro-kernel: kc4 groups of four k steps of an mr-row
// tile of packed, shifted A times an nr-column panel of B, dequantised into
// c: c[i][j] = (acc[i][j] − comp[j])·colScale[j]·rowScale[i] (+ bias[j]).
type qkernel struct {
	name   string
	mr, nr int
	fn     func(kc4 int, a []uint8, b []int8, c []float32, ldc int, rowScale, colScale []float32, comp []int32, bias []float32)
}

// activeInt8 is the int8 kernel new quantisations use; tests switch it.
var activeInt8 = qkernels()[0]

// QuantizeB quantises b (n×k, row-major: PyTorch's [out×in] weight layout)
// to int8 with one scale per row. Without AVX-512 VNNI the products run in
// portable Go, correct but slow.
func QuantizeB(b []float32, n, k int) *QuantizedB {
	checkDims("QuantizeB", 1, n, k)
	checkLen("QuantizeB", "b", b, n, k)
	kern := activeInt8
	kp := (k + 3) &^ 3
	np := panels(n, kern.nr)
	q := &QuantizedB{
		n: n, k: k, kp: kp, kern: kern,
		data:  make([]int8, np*kern.nr*kp),
		scale: make([]float32, np*kern.nr),
		comp:  make([]int32, np*kern.nr),
	}
	row := make([]int8, kp)
	for j := range n {
		src := b[j*k : (j+1)*k]
		s := maxAbs(src) / 127
		q.scale[j] = s
		inv := float32(0)
		if s > 0 {
			inv = 1 / s
		}
		var sum int32
		for p, v := range src {
			row[p] = int8(math.RoundToEven(float64(v * inv)))
			sum += int32(row[p])
		}
		q.comp[j] = 128 * sum
		jp, jj := j/kern.nr, j%kern.nr
		panel := q.data[jp*kern.nr*kp : (jp+1)*kern.nr*kp]
		for g := range kp / 4 {
			copy(panel[(g*kern.nr+jj)*4:(g*kern.nr+jj)*4+4], row[g*4:g*4+4])
		}
	}
	return q
}

// N is the number of rows of the quantised matrix (the product's columns).
func (q *QuantizedB) N() int { return q.n }

// K is the number of columns of the quantised matrix (the inner dimension).
func (q *QuantizedB) K() int { return q.k }

// MatMulT sets c (m×n) to approximately a (m×k) times the transpose of the
// quantised matrix, each row of a quantised to int8 on the fly.
func (q *QuantizedB) MatMulT(c, a []float32, m int) {
	checkProduct("QuantizedB.MatMulT", c, a, m, q.n, q.k)
	q.mul(c, a, nil, m)
}

// MatMulTBias is QuantizedB.MatMulT plus bias (n values) added to every row.
func (q *QuantizedB) MatMulTBias(c, a, bias []float32, m int) {
	checkProduct("QuantizedB.MatMulTBias", c, a, m, q.n, q.k)
	checkLen("QuantizedB.MatMulTBias", "bias", bias, 1, q.n)
	q.mul(c, a, bias, m)
}

func (q *QuantizedB) mul(c, a, bias []float32, m int) {
	lowMul(q, c, a, bias, m, 4) // VNNI runs ~4× the float32 rate
}

func maxAbs(s []float32) float32 {
	var m float32
	for _, v := range s {
		m = max(m, float32(math.Abs(float64(v))))
	}
	return m
}

func growBytes(buf *[]uint8, n int) []uint8 {
	if cap(*buf) < n {
		*buf = make([]uint8, n)
	}
	*buf = (*buf)[:n]
	return *buf
}

func (q *QuantizedB) shape() (n, k, mr, nr int) { return q.n, q.k, q.kern.mr, q.kern.nr }

// packA quantises rows [i0, i0+rows) of a (m×k) into ws: tiles of mr rows,
// per group of four k steps mr dwords; rows past the end are zero (128
// after the shift) with scale 0.
func (q *QuantizedB) packA(ws *lowWorkspace, a []float32, i0, rows int) {
	mr, kp, k := q.kern.mr, q.kp, q.k
	nt := (rows + mr - 1) / mr
	dst := growBytes(&ws.a8, nt*mr*kp)
	scale := grow(&ws.scale, nt*mr)
	row := growBytes(&ws.row8, kp)
	for r := range nt * mr {
		t, i := r/mr, r%mr
		tile := dst[t*mr*kp : (t+1)*mr*kp]
		if r >= rows {
			scale[r] = 0
			for g := range kp / 4 {
				d := tile[(g*mr+i)*4 : (g*mr+i)*4+4]
				d[0], d[1], d[2], d[3] = 128, 128, 128, 128
			}
			continue
		}
		scale[r] = quantizeRow(row[:k], a[(i0+r)*k:(i0+r+1)*k])
		for p := k; p < kp; p++ {
			row[p] = 128
		}
		interleave(unsafe.Slice((*uint32)(unsafe.Pointer(&tile[0])), mr*kp/4),
			unsafe.Slice((*uint32)(unsafe.Pointer(&row[0])), kp/4), mr, i)
	}
}

// tile computes row tile t of ws times panel jp into c.
func (q *QuantizedB) tile(ws, _ *lowWorkspace, t, jp int, c []float32, ldc int, bias []float32) {
	mr, nr, kp := q.kern.mr, q.kern.nr, q.kp
	j := jp * nr
	q.kern.fn(kp/4, ws.a8[t*mr*kp:(t+1)*mr*kp], q.data[jp*nr*kp:(jp+1)*nr*kp], c, ldc,
		ws.scale[t*mr:(t+1)*mr], q.scale[j:j+nr], q.comp[j:j+nr], bias)
}

// quantizeRowGeneric sets dst[p] = round(src[p]/s) + 128 and returns
// s = max|src|/127.
func quantizeRowGeneric(dst []uint8, src []float32) float32 {
	s := maxAbs(src) / 127
	inv := float32(0)
	if s > 0 {
		inv = 1 / s
	}
	dst = dst[:len(src)]
	for p, v := range src {
		dst[p] = uint8(int32(math.RoundToEven(float64(v*inv))) + 128)
	}
	return s
}

// qgeneric is the portable int8 kernel (4×4), for machines without VNNI.
var qgeneric = &qkernel{name: "int8-generic", mr: 4, nr: 4, fn: qkernGeneric}

func qkernGeneric(kc4 int, a []uint8, b []int8, c []float32, ldc int, rowScale, colScale []float32, comp []int32, bias []float32) {
	const mr, nr = 4, 4
	var acc [mr][nr]int32
	a, b = a[:kc4*mr*4], b[:kc4*nr*4]
	for g := range kc4 {
		for i := range mr {
			av := a[(g*mr+i)*4 : (g*mr+i)*4+4]
			for j := range nr {
				bv := b[(g*nr+j)*4 : (g*nr+j)*4+4]
				acc[i][j] += int32(av[0])*int32(bv[0]) + int32(av[1])*int32(bv[1]) + int32(av[2])*int32(bv[2]) + int32(av[3])*int32(bv[3])
			}
		}
	}
	for i := range mr {
		row := c[i*ldc : i*ldc+nr]
		for j := range nr {
			v := float32(acc[i][j]-comp[j]) * colScale[j] * rowScale[i]
			if len(bias) > 0 {
				v += bias[j]
			}
			row[j] = v
		}
	}
}

func (q *QuantizedB) String() string {
	return fmt.Sprintf("QuantizedB(%d×%d, %s)", q.n, q.k, q.kern.name)
}
