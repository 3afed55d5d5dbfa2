// Package linalg holds the dense kernels of the transformer encoder: float32
// matrix products (cache-blocked, register-tiled, assembly micro-kernels on
// amd64, parallel across cores), bf16 and int8 products for weights packed
// at load, and the row-wise vector operations around them.
package linalg

import "fmt"

// active is the micro-kernel new products and packings use: the best this
// CPU runs. Tests switch it to cover every kernel and the fallback.
var active = kernels()[0]

// MatMulT sets c (m×n) to a (m×k) times the transpose of b (n×k), all
// row-major and contiguous: c[i][j] = Σₚ a[i][p]·b[j][p]. This is a linear
// layer with a weight in PyTorch's [out×in] layout, and Q·Kᵀ. For a constant
// b, PackB once and use PackedB.MatMulT. It panics if a slice length is not
// exactly the product of its dimensions.
func MatMulT(c, a, b []float32, m, n, k int) {
	checkDims("MatMulT", m, n, k)
	checkLen("MatMulT", "a", a, m, k)
	checkLen("MatMulT", "b", b, n, k)
	checkLen("MatMulT", "c", c, m, n)
	matMulT(c, n, a, k, b, k, nil, m, n, k)
}

// MatMulTBias is MatMulT plus bias (n values) added to every row of c.
func MatMulTBias(c, a, b, bias []float32, m, n, k int) {
	checkDims("MatMulTBias", m, n, k)
	checkLen("MatMulTBias", "a", a, m, k)
	checkLen("MatMulTBias", "b", b, n, k)
	checkLen("MatMulTBias", "c", c, m, n)
	checkLen("MatMulTBias", "bias", bias, 1, n)
	matMulT(c, n, a, k, b, k, bias, m, n, k)
}

// MatMul sets c (m×n) to a (m×k) times b (k×n), all row-major and
// contiguous: c[i][j] = Σₚ a[i][p]·b[p][j] (attention probabilities · V).
func MatMul(c, a, b []float32, m, n, k int) {
	checkDims("MatMul", m, n, k)
	checkLen("MatMul", "a", a, m, k)
	checkLen("MatMul", "b", b, k, n)
	checkLen("MatMul", "c", c, m, n)
	matMul(c, n, a, k, b, n, m, n, k)
}

// MatMulTStrided is MatMulT on sub-matrices: row i of a starts at a[i·lda],
// row j of b at b[j·ldb], row i of c at c[i·ldc]. It lets one attention head
// (a column range of the Q, K and V projections) be used in place.
func MatMulTStrided(c []float32, ldc int, a []float32, lda int, b []float32, ldb int, m, n, k int) {
	checkDims("MatMulTStrided", m, n, k)
	checkStrided("MatMulTStrided", "a", a, m, k, lda)
	checkStrided("MatMulTStrided", "b", b, n, k, ldb)
	checkStrided("MatMulTStrided", "c", c, m, n, ldc)
	matMulT(c, ldc, a, lda, b, ldb, nil, m, n, k)
}

// MatMulStrided is MatMul on sub-matrices with row strides lda, ldb, ldc.
func MatMulStrided(c []float32, ldc int, a []float32, lda int, b []float32, ldb int, m, n, k int) {
	checkDims("MatMulStrided", m, n, k)
	checkStrided("MatMulStrided", "a", a, m, k, lda)
	checkStrided("MatMulStrided", "b", b, k, n, ldb)
	checkStrided("MatMulStrided", "c", c, m, n, ldc)
	matMul(c, ldc, a, lda, b, ldb, m, n, k)
}

func matMulT(c []float32, ldc int, a []float32, lda int, b []float32, ldb int, bias []float32, m, n, k int) {
	kern := active
	ws := workspaces.Get().(*workspace)
	bp := grow(&ws.b, panels(n, kern.nr)*k*kern.nr)
	packBT(bp, b, ldb, n, k, kern.nr)
	product(ws, kern, c, ldc, a, lda, bp, bias, m, n, k)
	workspaces.Put(ws)
}

func matMul(c []float32, ldc int, a []float32, lda int, b []float32, ldb int, m, n, k int) {
	kern := active
	ws := workspaces.Get().(*workspace)
	bp := grow(&ws.b, panels(n, kern.nr)*k*kern.nr)
	packBN(bp, b, ldb, k, n, kern.nr)
	product(ws, kern, c, ldc, a, lda, bp, nil, m, n, k)
	workspaces.Put(ws)
}

// product runs one gemm with B packed for kern; ws is the caller's scratch.
func product(ws *workspace, kern *kernel, c []float32, ldc int, a []float32, lda int, bp, bias []float32, m, n, k int) {
	g := gemmPool.Get().(*gemm)
	g.kern, g.m, g.n, g.k = kern, m, n, k
	g.a, g.lda, g.b, g.c, g.ldc, g.bias = a, lda, bp, c, ldc, bias
	g.run(ws)
	g.a, g.b, g.c, g.bias = nil, nil, nil, nil
	gemmPool.Put(g)
}

func panels(n, nr int) int { return (n + nr - 1) / nr }

// PackedB is a constant n×k right-hand matrix (a weight) packed once into
// the panel layout the micro-kernel reads, so products skip the packing.
type PackedB struct {
	n, k int
	kern *kernel
	data []float32
}

// PackB packs b (n×k, row-major: PyTorch's [out×in] weight layout) for
// repeated PackedB.MatMulT calls. The result does not alias b.
func PackB(b []float32, n, k int) *PackedB {
	checkDims("PackB", 1, n, k)
	checkLen("PackB", "b", b, n, k)
	kern := active
	p := &PackedB{n: n, k: k, kern: kern, data: make([]float32, panels(n, kern.nr)*k*kern.nr)}
	packBT(p.data, b, k, n, k, kern.nr)
	return p
}

// N is the number of rows of the packed matrix (the product's columns).
func (p *PackedB) N() int { return p.n }

// K is the number of columns of the packed matrix (the inner dimension).
func (p *PackedB) K() int { return p.k }

// MatMulT sets c (m×n) to a (m×k) times the transpose of the packed matrix,
// exactly as MatMulT(c, a, b, m, n, k) with the b that was packed.
func (p *PackedB) MatMulT(c, a []float32, m int) {
	checkProduct("PackedB.MatMulT", c, a, m, p.n, p.k)
	p.mul(c, a, nil, m)
}

// MatMulTBias is PackedB.MatMulT plus bias (n values) added to every row.
func (p *PackedB) MatMulTBias(c, a, bias []float32, m int) {
	checkProduct("PackedB.MatMulTBias", c, a, m, p.n, p.k)
	checkLen("PackedB.MatMulTBias", "bias", bias, 1, p.n)
	p.mul(c, a, bias, m)
}

func (p *PackedB) mul(c, a, bias []float32, m int) {
	ws := workspaces.Get().(*workspace)
	product(ws, p.kern, c, p.n, a, p.k, p.data, bias, m, p.n, p.k)
	workspaces.Put(ws)
}

func checkDims(fn string, m, n, k int) {
	if m < 0 || n < 0 || k < 0 {
		panic(fmt.Sprintf("linalg.%s: negative dimension m=%d n=%d k=%d", fn, m, n, k))
	}
}

// checkProduct checks the arguments of a product of a (m×k) with a packed
// operand of n rows of k into c (m×n).
func checkProduct(fn string, c, a []float32, m, n, k int) {
	checkDims(fn, m, n, k)
	checkLen(fn, "a", a, m, k)
	checkLen(fn, "c", c, m, n)
}

func checkLen(fn, name string, s []float32, rows, cols int) {
	if len(s) != rows*cols {
		panic(fmt.Sprintf("linalg.%s: len(%s) = %d, want %d×%d = %d", fn, name, len(s), rows, cols, rows*cols))
	}
}

func checkStrided(fn, name string, s []float32, rows, cols, ld int) {
	if ld < cols {
		panic(fmt.Sprintf("linalg.%s: stride of %s is %d, less than its %d columns", fn, name, ld, cols))
	}
	if rows == 0 || cols == 0 {
		return
	}
	if need := (rows-1)*ld + cols; len(s) < need {
		panic(fmt.Sprintf("linalg.%s: len(%s) = %d, want at least (%d-1)×%d+%d = %d", fn, name, len(s), rows, ld, cols, need))
	}
}
