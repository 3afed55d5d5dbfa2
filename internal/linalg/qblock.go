package linalg

import (
	"fmt"
	"unsafe"
)

// Block-quantised weights: a weight kept in GGML's Q4_0 or Q8_0 blocks (per
// 32 values one float16 scale d and 32 integers q, the value q·d) and used
// that way, a quarter or a half of float16's bytes. Where the CPU has a
// fused kernel (AVX-512), it decodes each k step's 16 weights in a register
// as it multiplies; elsewhere a product decodes one panel at a time into a
// worker's scratch and runs the float32 micro-kernel over it, every row
// tile of the chunk against the one decoding. q·d is exact in float32 (a
// 4- or 8-bit integer times a float16 needs at most 19 significant bits), so
// either way a product is bit for bit that of PackB over the decoded weight.

// QFormat is a block format.
type QFormat uint8

const (
	// Q4_0: the scale (float16, little-endian), then 16 bytes whose low
	// nibbles are values 0–15 and high nibbles values 16–31, each q+8.
	Q4_0 QFormat = iota
	// Q8_0: the scale (float16, little-endian), then 32 signed bytes.
	Q8_0

	// f16Panels is PackedF16's panels, for the fused kernels: a "block" is
	// 32 k steps of 16 float16 values, without scales.
	f16Panels
)

// QBlockLen is the values of a block.
const QBlockLen = 32

func (f QFormat) String() string {
	switch f {
	case Q4_0:
		return "Q4_0"
	case Q8_0:
		return "Q8_0"
	case f16Panels:
		return "float16 panels"
	}
	return fmt.Sprintf("QFormat(%d)", uint8(f))
}

// BlockSize is the bytes of one row-major block: 18 (Q4_0) or 34 (Q8_0).
func (f QFormat) BlockSize() int {
	if f == Q4_0 {
		return 2 + QBlockLen/2
	}
	return 2 + QBlockLen
}

// panelBlock is the bytes of one block of a 16-row panel: the rows' scales
// (float16), then their integers: Q4_0, for t = 0…15 the 16 rows' bytes
// q[t] | q[t+16]<<4; Q8_0, for p = 0…31 the 16 rows' q[p].
func (f QFormat) panelBlock() int {
	if f == f16Panels {
		return 2 * QBlockLen * 16
	}
	return 16 * f.BlockSize()
}

// PackedQ is a constant n×k weight (PyTorch's [out×in] layout) of Q4_0 or
// Q8_0 blocks, regrouped in panels of 16 rows (rows past n have scale 0).
type PackedQ struct {
	n, k int
	f    QFormat
	kern *kernel  // the float32 kernel of the decoding path
	qk   *qKernel // or the fused kernel
	data []byte
}

// A qFn is a fused block-quantised micro-kernel: a tile of rows of A,
// packed a block at a time (row i's value p of block b at
// a[(b·rows+i)·32+p]), times kb blocks of one panel (b), each weight decoded
// in a register and its products added in k order, as the float32 kernels
// add theirs; then the rows×16 tile is stored to c (row stride ldc) in mode
// (modeStore, modeAdd, modeBias with bias's 16 values).
type qFn func(kb int, a []float32, b []byte, c []float32, ldc, mode int, bias []float32)

// qKernel is a set of fused kernels: fns[f][h/2−1] for format f (Q4_0,
// Q8_0, or f16Panels for PackedF16's products) and tiles
// of h = 2, 4, … 16 rows (a tile of odd height runs the next, over a zero
// row). Its kernel holds the tile (mr 16, nr 16) and the cache blocking;
// kc is a multiple of 32.
type qKernel struct {
	kernel
	fns [3][8]qFn
}

// activeQ is the fused kernel new PackedQ values use, nil where the CPU has
// none; tests switch it.
var activeQ = func() *qKernel {
	if ks := qKernels(); len(ks) > 0 {
		return ks[0]
	}
	return nil
}()

// NewPackedQ regroups q, n rows of k values as row-major blocks of format f
// (k/32 blocks a row), into panels; k must be a multiple of 32. The result
// does not alias q.
func NewPackedQ(f QFormat, q string, n, k int) (*PackedQ, error) {
	if f != Q4_0 && f != Q8_0 {
		return nil, fmt.Errorf("linalg: unknown block format %v", f)
	}
	if n <= 0 || k <= 0 || k%QBlockLen != 0 {
		return nil, fmt.Errorf("linalg: %v weight of %d×%d (k must be a positive multiple of %d)", f, n, k, QBlockLen)
	}
	bs, blocks := f.BlockSize(), k/QBlockLen
	if want := n * blocks * bs; len(q) != want {
		return nil, fmt.Errorf("linalg: %d bytes for a %d×%d %v weight, want %d", len(q), n, k, f, want)
	}
	const w = 16
	pb := f.panelBlock()
	data := make([]byte, panels(n, w)*blocks*pb)
	for j := range n {
		jp, jj := j/w, j%w
		row := q[j*blocks*bs:]
		for b := range blocks {
			src := row[b*bs : (b+1)*bs]
			dst := data[(jp*blocks+b)*pb:]
			dst[2*jj], dst[2*jj+1] = src[0], src[1]
			for t := range bs - 2 {
				dst[32+t*w+jj] = src[2+t]
			}
		}
	}
	return &PackedQ{n: n, k: k, f: f, kern: active, qk: activeQ, data: data}, nil
}

// QPanelBytes is the size of an n×k weight of format f in PackedQ's panels:
// ⌈n/16⌉·(k/32) panel blocks of 16 blocks' bytes.
func QPanelBytes(f QFormat, n, k int) int { return panels(n, 16) * (k / QBlockLen) * f.panelBlock() }

// NewPackedQPanels wraps data, an n×k weight of format f already regrouped
// into panels (what NewPackedQ makes, and tools/modelconv writes: per panel
// of 16 rows, per block of 32 k steps, the 16 rows' float16 scales, then
// Q4_0's 16 bytes q[t] | q[t+16]<<4 for t = 0…15, or Q8_0's 16 bytes q[p]
// for p = 0…31; rows past n zero), without copying it; it is only ever
// read, so it may be read-only memory (the binary's, say).
func NewPackedQPanels(f QFormat, data string, n, k int) (*PackedQ, error) {
	if f != Q4_0 && f != Q8_0 {
		return nil, fmt.Errorf("linalg: unknown block format %v", f)
	}
	if n <= 0 || k <= 0 || k%QBlockLen != 0 {
		return nil, fmt.Errorf("linalg: %v weight of %d×%d (k must be a positive multiple of %d)", f, n, k, QBlockLen)
	}
	if want := QPanelBytes(f, n, k); len(data) != want {
		return nil, fmt.Errorf("linalg: %d bytes for %d×%d %v panels, want %d", len(data), n, k, f, want)
	}
	b := unsafe.Slice(unsafe.StringData(data), len(data))
	return &PackedQ{n: n, k: k, f: f, kern: active, qk: activeQ, data: b}, nil
}

// Prefault reads one byte of every 4 KiB of the weight, so that its pages
// are mapped in (the weight may lie in a file mapping) before a product
// needs them; it returns their XOR, for the caller to keep so that the
// reads are not optimised away.
func (p *PackedQ) Prefault() uint16 {
	var x byte
	for i := 0; i < len(p.data); i += 4096 {
		x ^= p.data[i]
	}
	return uint16(x)
}

// N is the number of rows of the packed matrix (the product's columns).
func (p *PackedQ) N() int { return p.n }

// K is the number of columns of the packed matrix (the inner dimension).
func (p *PackedQ) K() int { return p.k }

// Format is the weight's block format.
func (p *PackedQ) Format() QFormat { return p.f }

// Panels returns the weight's panels, the bytes NewPackedQPanels takes.
func (p *PackedQ) Panels() []byte { return p.data }

// MatMulT sets c (m×n) to a (m×k) times the transpose of the weight, exactly
// as PackB over the decoded weight does.
func (p *PackedQ) MatMulT(c, a []float32, m int) {
	checkProduct("PackedQ.MatMulT", c, a, m, p.n, p.k)
	p.mul(c, a, nil, m)
}

// MatMulTBias is PackedQ.MatMulT plus bias (n values) added to every row.
func (p *PackedQ) MatMulTBias(c, a, bias []float32, m int) {
	checkProduct("PackedQ.MatMulTBias", c, a, m, p.n, p.k)
	checkLen("PackedQ.MatMulTBias", "bias", bias, 1, p.n)
	p.mul(c, a, bias, m)
}

func (p *PackedQ) mul(c, a, bias []float32, m int) {
	mulQ(p.kern, p.qk, p.f, p.data, c, a, bias, m, p.n, p.k)
}

// mulQ runs c = a·Wᵀ (+ bias) for a weight of panels data in format f: on
// the fused kernel qk if set, else decoding a panel at a time for kern.
func mulQ(kern *kernel, qk *qKernel, f QFormat, data []byte, c, a, bias []float32, m, n, k int) {
	ws := workspaces.Get().(*workspace)
	g := gemmPool.Get().(*gemm)
	g.kern, g.m, g.n, g.k = kern, m, n, k
	g.ap = nil
	if qk != nil {
		g.kern, g.qk = &qk.kernel, qk
		if m <= qk.mc && k <= qk.kc {
			// Few rows: every chunk takes them all, so pack them once.
			g.ap = packQA(&ws.a, a, k, 0, m, 0, k, qk.mr)
		}
	}
	g.a, g.lda, g.qb, g.qf, g.c, g.ldc, g.bias = a, k, data, f, c, n, bias
	g.run(ws)
	g.a, g.ap, g.qb, g.qk, g.c, g.bias = nil, nil, nil, nil, nil, nil
	gemmPool.Put(g)
	workspaces.Put(ws)
}

// Unpack decodes the weight into n×k row-major float32, exactly.
func (p *PackedQ) Unpack() []float32 {
	pb := p.f.panelBlock()
	blocks := p.k / QBlockLen
	out := make([]float32, p.n*p.k)
	panel := make([]float32, p.k*16)
	for jp := range panels(p.n, 16) {
		decodeQ(p.f, panel, p.data[jp*blocks*pb:(jp+1)*blocks*pb])
		for jj := range min(16, p.n-jp*16) {
			row := out[(jp*16+jj)*p.k : (jp*16+jj+1)*p.k]
			for x := range row {
				row[x] = panel[x*16+jj]
			}
		}
	}
	return out
}

// decodeQ decodes panel blocks src of format f (a whole number of them)
// into dst in the float32 kernels' panel order: value x of row jj at
// dst[x·16+jj].
func decodeQ(f QFormat, dst []float32, src []byte) {
	blocks := len(src) / f.panelBlock()
	if len(dst) < blocks*QBlockLen*16 {
		panic(fmt.Sprintf("linalg: decodeQ: %d values for %d blocks", len(dst), blocks))
	}
	switch {
	case blocks == 0:
	case f == Q4_0:
		decodeQ4Blocks(dst, src, blocks)
	case f == Q8_0:
		decodeQ8Blocks(dst, src, blocks)
	default: // float16 panels are only ever read by the fused kernels
		panic(fmt.Sprintf("linalg: decodeQ: %v", f))
	}
}

// panelScales decodes a panel block's 16 scales.
func panelScales(d *[16]float32, blk []byte) {
	for j := range 16 {
		d[j] = halfToFloat(uint16(blk[2*j]) | uint16(blk[2*j+1])<<8)
	}
}

// decodeQ4Generic is decodeQ's portable body for Q4_0, and the reference
// of the assembly one.
func decodeQ4Generic(dst []float32, src []byte, blocks int) {
	const pb = 16 * (2 + QBlockLen/2)
	var d [16]float32
	for b := range blocks {
		blk := src[b*pb : (b+1)*pb]
		panelScales(&d, blk)
		out := dst[b*QBlockLen*16 : (b+1)*QBlockLen*16]
		for t := range 16 {
			qs := blk[32+t*16 : 32+t*16+16]
			lo, hi := out[t*16:t*16+16], out[(t+16)*16:(t+16)*16+16]
			for j, q := range qs {
				lo[j] = float32(int(q&0x0f)-8) * d[j]
				hi[j] = float32(int(q>>4)-8) * d[j]
			}
		}
	}
}

// decodeQ8Generic is decodeQ's portable body for Q8_0, and the reference
// of the assembly one.
func decodeQ8Generic(dst []float32, src []byte, blocks int) {
	const pb = 16 * (2 + QBlockLen)
	var d [16]float32
	for b := range blocks {
		blk := src[b*pb : (b+1)*pb]
		panelScales(&d, blk)
		out := dst[b*QBlockLen*16 : (b+1)*QBlockLen*16]
		for p := range QBlockLen {
			qs := blk[32+p*16 : 32+p*16+16]
			o := out[p*16 : p*16+16]
			for j, q := range qs {
				o[j] = float32(int8(q)) * d[j]
			}
		}
	}
}

// blockQ is gemm.block for a fused kernel: rows [i0, i1) and panels
// [jp0, jp1) of C. Each mc×kc block of A is packed once (packQA), unless
// the product packed all of it ahead (g.ap), and every panel passes it.
func (g *gemm) blockQ(ws *workspace, i0, i1, jp0, jp1 int) {
	kern := g.qk
	fns := &kern.fns[g.qf]
	pb := g.qf.panelBlock()
	mr, nr := kern.mr, kern.nr
	mcb := max(mr, kern.mc/mr*mr)
	tile := grow(&ws.tile, mr*nr)
	blocks := g.k / QBlockLen
	for pc := 0; pc < g.k; pc += kern.kc {
		kc := min(kern.kc, g.k-pc)
		kb := kc / QBlockLen
		for ic := i0; ic < i1; ic += mcb {
			mc := min(mcb, i1-ic)
			ap := g.ap
			if ap == nil {
				ap = packQA(&ws.a, g.a, g.lda, ic, ic+mc, pc, kc, mr)
			}
			for jp := jp0; jp < jp1; jp++ {
				j := jp * nr
				nj := min(nr, g.n-j)
				var bias []float32
				mode := modeAdd
				if pc == 0 {
					mode = modeStore
					if g.bias != nil {
						mode = modeBias
						bias = g.bias[j : j+nj]
					}
				}
				b0 := jp*blocks + pc/QBlockLen
				bq := g.qb[b0*pb : (b0+kb)*pb]
				for i, off := ic, 0; i < ic+mc; i += mr {
					ni := min(mr, ic+mc-i)
					h := (ni + 1) &^ 1
					fn, as := fns[h/2-1], ap[off:off+h*kc]
					off += h * kc
					if ni == h && nj == nr {
						fn(kb, as, bq, g.c[i*g.ldc+j:i*g.ldc+j+(h-1)*g.ldc+nr], g.ldc, mode, bias)
						continue
					}
					fn(kb, as, bq, tile[:h*nr], nr, modeStore, nil)
					g.putTile(tile, nr, i, ni, j, nj, mode, bias)
				}
			}
		}
	}
}

// packQA packs rows [i0, i1) of a (row stride lda), values [pc, pc+kc)
// (kc a multiple of 32), into buf (grown) for blockQ: tiles of mr rows and
// a last one of fewer, each as high as the kernel that takes it (even),
// block by block, row by row (32 values), zeros past i1.
func packQA(buf *[]float32, a []float32, lda, i0, i1, pc, kc, mr int) []float32 {
	ap := grow(buf, (i1-i0+1)*kc)
	off := 0
	for i := i0; i < i1; i += mr {
		n := min(mr, i1-i)
		h := (n + 1) &^ 1
		dst := ap[off : off+h*kc]
		for b := range kc / QBlockLen {
			blk := dst[b*h*QBlockLen : (b+1)*h*QBlockLen]
			for r := range n {
				src := (i+r)*lda + pc + b*QBlockLen
				copy(blk[r*QBlockLen:(r+1)*QBlockLen], a[src:src+QBlockLen])
			}
			clear(blk[n*QBlockLen:])
		}
		off += h * kc
	}
	return ap
}
