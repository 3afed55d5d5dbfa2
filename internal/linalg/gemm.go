package linalg

import (
	"sync"
	"sync/atomic"
)

// gemm is one product C = A·B (+ bias) with B already packed for kern. It is
// split into chunks of rows × panels that the calling goroutine and idle
// workers take in turn, so a busy core never holds the others up.
type gemm struct {
	kern    *kernel
	m, n, k int
	a       []float32 // m×k, row stride lda
	lda     int
	b       []float32 // packed panels
	b16     []uint16  // or float16 panels, for a kernel with fn16
	qb      []byte    // or block-quantised panels (PackedQ): for qk, or decoded a panel at a time for fn
	qf      QFormat   // qb's format
	qk      *qKernel  // the fused kernel, if any
	ap      []float32 // A packed for qk ahead of the chunks, if it was
	c       []float32 // m×n, row stride ldc
	ldc     int
	bias    []float32 // n values, or nil

	// Chunk grid: mChunks row ranges × nChunks panel ranges, taken in order.
	mChunks, nChunks int
	next             atomic.Int64
	crew
}

var gemmPool = sync.Pool{New: func() any { return new(gemm) }}

// workspace is one goroutine's scratch: the padded last row tile of A, the
// packed B of a call that did not pre-pack it, a tile for the ragged edges,
// the same for low-precision products, and an attention head's. Each
// worker owns one; callers take one from a pool.
type workspace struct {
	a, b, tile []float32
	q          []float32 // one decoded block-quantised panel
	attn       []float32 // one attention head's scratch
	low        lowWorkspace
}

var workspaces = sync.Pool{New: func() any { return new(workspace) }}

// grow returns buf resized to n values, reallocating only when it is too short.
func grow(buf *[]float32, n int) []float32 {
	if cap(*buf) < n {
		*buf = make([]float32, n)
	}
	*buf = (*buf)[:n]
	return *buf
}

// run computes the product, in parallel when it is large enough.
func (g *gemm) run(ws *workspace) {
	if g.m == 0 || g.n == 0 {
		return
	}
	if g.k == 0 {
		for i := range g.m {
			row := g.c[i*g.ldc : i*g.ldc+g.n]
			if g.bias != nil {
				copy(row, g.bias)
			} else {
				clear(row)
			}
		}
		return
	}
	mt := (g.m + g.kern.mr - 1) / g.kern.mr
	np := (g.n + g.kern.nr - 1) / g.kern.nr
	threads := threadsFor(2 * g.m * g.n * g.k)
	g.mChunks, g.nChunks = 1, 1
	if threads > 1 {
		// Aim for a few chunks per thread; split rows first (every chunk
		// then streams all of B past its own rows), then panels when there
		// are too few row tiles.
		want := threads * chunksPerThread
		g.mChunks = min(mt, want)
		if g.qb != nil && g.m <= g.kern.mc {
			// Each chunk decodes its panels: split only the panels
			// while the rows are few, so that each is decoded once.
			g.mChunks = 1
		}
		g.nChunks = min(np, (want+g.mChunks-1)/g.mChunks)
		if g.mChunks*g.nChunks < threads {
			threads = g.mChunks * g.nChunks
		}
	}
	g.next.Store(0)
	share(g, threads-1, ws)
}

// work takes chunks until none are left.
func (g *gemm) work(ws *workspace) {
	mr, nr := g.kern.mr, g.kern.nr
	mt := (g.m + mr - 1) / mr
	np := (g.n + nr - 1) / nr
	total := int64(g.mChunks * g.nChunks)
	for {
		ch := g.next.Add(1) - 1
		if ch >= total {
			return
		}
		ci, cj := int(ch)/g.nChunks, int(ch)%g.nChunks
		t0, t1 := ci*mt/g.mChunks, (ci+1)*mt/g.mChunks
		p0, p1 := cj*np/g.nChunks, (cj+1)*np/g.nChunks
		if g.qk != nil {
			g.blockQ(ws, t0*mr, min(t1*mr, g.m), p0, p1)
			continue
		}
		g.block(ws, t0*mr, min(t1*mr, g.m), p0, p1)
	}
}

// block computes rows [i0, i1) and panels [jp0, jp1) of C: the loops of
// Goto and van de Geijn's GEMM (jc, pc, ic, jr, ir) around the micro-kernel.
// A is read in place; only a ragged last row tile is copied, zero-padded,
// into ws.a so that the kernel never reads past the end of a.
func (g *gemm) block(ws *workspace, i0, i1, jp0, jp1 int) {
	kern := g.kern
	mr, nr := kern.mr, kern.nr
	kcb := kern.kc
	mcb := max(mr, kern.mc/mr*mr)
	ncb := kern.nc
	tile := grow(&ws.tile, mr*nr)
	var pad []float32 // the last, short row tile of the current kc block
	for jc := jp0; jc < jp1; jc += ncb {
		jcEnd := min(jc+ncb, jp1)
		for pc := 0; pc < g.k; pc += kcb {
			kc := min(kcb, g.k-pc)
			if short := (i1 - i0) % mr; short != 0 {
				pad = grow(&ws.a, mr*kc)
				r0 := i1 - short
				for r := range mr {
					if r < short {
						copy(pad[r*kc:(r+1)*kc], g.a[(r0+r)*g.lda+pc:])
					} else {
						clear(pad[r*kc : (r+1)*kc])
					}
				}
			}
			for ic := i0; ic < i1; ic += mcb {
				mc := min(mcb, i1-ic)
				for jp := jc; jp < jcEnd; jp++ {
					off := jp*g.k*nr + pc*nr
					if g.qb != nil {
						off = g.decode(ws, jp, pc, kc)
					}
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
					for i := ic; i < ic+mc; i += mr {
						ni := min(mr, i1-i)
						as, lda := g.a[i*g.lda+pc:], g.lda
						if ni < mr {
							as, lda = pad, kc
						}
						if ni == mr && nj == nr {
							g.kernel(kern, kc, as, lda, ws.q, off, g.c[i*g.ldc+j:], g.ldc, mode, bias)
							continue
						}
						g.kernel(kern.forRows(ni), kc, as, lda, ws.q, off, tile, nr, modeStore, nil)
						g.putTile(tile, nr, i, ni, j, nj, mode, bias)
					}
				}
			}
		}
	}
}

// putTile stores rows [i, i+ni) and columns [j, j+nj) of C from tile (row
// stride nr) in mode, for a tile the micro-kernel could not store in place.
func (g *gemm) putTile(tile []float32, nr, i, ni, j, nj, mode int, bias []float32) {
	for r := range ni {
		dst := g.c[(i+r)*g.ldc+j : (i+r)*g.ldc+j+nj]
		src := tile[r*nr : r*nr+nj]
		switch mode {
		case modeStore:
			copy(dst, src)
		case modeAdd:
			for x, v := range src {
				dst[x] += v
			}
		case modeBias:
			for x, v := range src {
				dst[x] = v + bias[x]
			}
		}
	}
}

// decode decodes k values [pc, pc+kc) of the block-quantised weight's rows
// of panel jp (of the kernel's width nr, which divides 16) into ws.q and
// returns the offset of the sliver there.
func (g *gemm) decode(ws *workspace, jp, pc, kc int) int {
	const w = 16 // the panel width of PackedQ
	nr := g.kern.nr
	pb := g.qf.panelBlock()
	blocks := g.k / QBlockLen
	b0, b1 := pc/QBlockLen, (pc+kc+QBlockLen-1)/QBlockLen
	qp := jp * nr / w
	src := g.qb[(qp*blocks+b0)*pb : (qp*blocks+b1)*pb]
	vals := (b1 - b0) * QBlockLen
	if nr == w {
		decodeQ(g.qf, grow(&ws.q, vals*w), src)
		return (pc - b0*QBlockLen) * w
	}
	wide := grow(&ws.b, vals*w) // the portable kernel's 4-wide panels: narrow a 16-wide one
	decodeQ(g.qf, wide, src)
	dst := grow(&ws.q, vals*nr)
	c0 := jp * nr % w
	for x := range vals {
		copy(dst[x*nr:(x+1)*nr], wide[x*w+c0:x*w+c0+nr])
	}
	return (pc - b0*QBlockLen) * nr
}

// kernel runs micro-kernel k (g's, or one of its short kernels) on the
// kc×nr sliver of packed B at off (of dec, the decoded panel, for
// block-quantised panels).
func (g *gemm) kernel(k *kernel, kc int, a []float32, lda int, dec []float32, off int, c []float32, ldc, mode int, bias []float32) {
	n := kc * k.nr
	if g.qb != nil {
		k.fn(kc, a, lda, dec[off:off+n], c, ldc, mode, bias)
		return
	}
	if g.b16 != nil {
		k.fn16(kc, a, lda, g.b16[off:off+n], c, ldc, mode, bias)
		return
	}
	k.fn(kc, a, lda, g.b[off:off+n], c, ldc, mode, bias)
}
