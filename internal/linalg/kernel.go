package linalg

// A kernel is a register-tiled micro-kernel: it multiplies an mr×kc sliver of
// A, read in place (row i at a[i·lda]), by a kc×nr sliver of packed B (row of
// nr values per k step) and stores the mr×nr result into c with row stride
// ldc. mode is one of the store modes below; bias (nr values) is read only in
// modeBias. a, b and c must hold (mr-1)·lda+kc, kc·nr and (mr-1)·ldc+nr values.
type kernel struct {
	name   string
	mr, nr int
	fn     func(kc int, a []float32, lda int, b, c []float32, ldc, mode int, bias []float32)
	// fn16, when set, is fn for a B packed in float16 (see PackedF16); such
	// a kernel has no fn.
	fn16 func(kc int, a []float32, lda int, b []uint16, c []float32, ldc, mode int, bias []float32)

	// Cache blocking: kc steps of k per pass, mc rows of A at a time (a
	// multiple of mr; the mc×kc block stays in L2 while every panel of B
	// passes), nc panels of B per outer block. Measured on Zen 4 at the
	// model's shapes, summing all of k (≤ 2048) in registers beat keeping a
	// kc×nr sliver of B in L1 (kc 256: 98, kc 1536: 112 GFLOP/s at
	// 1280×384×1536), and nc made no difference.
	kc, mc, nc int

	// short[i], when set, is a kernel with the same nr and order of sums
	// but fewer rows (at least i+1), for the last row tile of a product
	// whose rows do not fill mr: a padded full tile would do the padding
	// rows' work too.
	short []*kernel
}

// forRows is the kernel for a row tile of n ≤ mr rows.
func (k *kernel) forRows(n int) *kernel {
	if n-1 < len(k.short) && k.short[n-1] != nil {
		return k.short[n-1]
	}
	return k
}

// Store modes of a micro-kernel.
const (
	modeStore = 0 // c = tile
	modeAdd   = 1 // c += tile
	modeBias  = 2 // c = tile + bias, bias broadcast down the rows
)

// generic is the portable micro-kernel, used without assembly (the purego
// tag, other architectures) and as the tested fallback.
var generic = &kernel{name: "generic", mr: 4, nr: 4, fn: kernGeneric4x4, kc: 2048, mc: 64, nc: 1 << 20}

// kernGeneric4x4 keeps the 4×4 tile in sixteen local accumulators; Go keeps
// them in registers on amd64 and arm64.
func kernGeneric4x4(kc int, a []float32, lda int, b, c []float32, ldc, mode int, bias []float32) {
	a0s := a[:kc]
	a1s := a[lda : lda+kc]
	a2s := a[2*lda : 2*lda+kc]
	a3s := a[3*lda : 3*lda+kc]
	b = b[:kc*4]
	var c00, c01, c02, c03, c10, c11, c12, c13 float32
	var c20, c21, c22, c23, c30, c31, c32, c33 float32
	for p := 0; p < kc; p++ {
		bv := b[p*4 : p*4+4 : p*4+4]
		b0, b1, b2, b3 := bv[0], bv[1], bv[2], bv[3]
		a0 := a0s[p]
		c00 += a0 * b0
		c01 += a0 * b1
		c02 += a0 * b2
		c03 += a0 * b3
		a1 := a1s[p]
		c10 += a1 * b0
		c11 += a1 * b1
		c12 += a1 * b2
		c13 += a1 * b3
		a2 := a2s[p]
		c20 += a2 * b0
		c21 += a2 * b1
		c22 += a2 * b2
		c23 += a2 * b3
		a3 := a3s[p]
		c30 += a3 * b0
		c31 += a3 * b1
		c32 += a3 * b2
		c33 += a3 * b3
	}
	t := [4][4]float32{
		{c00, c01, c02, c03},
		{c10, c11, c12, c13},
		{c20, c21, c22, c23},
		{c30, c31, c32, c33},
	}
	c = c[:3*ldc+4]
	for i := range 4 {
		row := c[i*ldc : i*ldc+4 : i*ldc+4]
		switch mode {
		case modeStore:
			row[0], row[1], row[2], row[3] = t[i][0], t[i][1], t[i][2], t[i][3]
		case modeAdd:
			row[0] += t[i][0]
			row[1] += t[i][1]
			row[2] += t[i][2]
			row[3] += t[i][3]
		case modeBias:
			bias = bias[:4]
			row[0], row[1], row[2], row[3] = t[i][0]+bias[0], t[i][1]+bias[1], t[i][2]+bias[2], t[i][3]+bias[3]
		}
	}
}
