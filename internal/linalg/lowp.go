package linalg

import (
	"sync"
	"sync/atomic"
	"unsafe"
)

// lowB is a weight packed in a low-precision format (int8, bf16) whose
// micro-kernel reads A converted to the same format and packed per tile:
// per group of k steps that fill a dword, mr dwords.
type lowB interface {
	shape() (n, k, mr, nr int)
	// packA converts rows [i0, i0+rows) of a (m×k) into ws, as tiles of
	// mr rows (the last one padded).
	packA(ws *lowWorkspace, a []float32, i0, rows int)
	// tile computes row tile t of pa times panel jp into the full mr×nr
	// tile at c (row stride ldc), adding bias (nr values) unless it is nil;
	// own is the calling goroutine's scratch (pa may be shared).
	tile(pa, own *lowWorkspace, t, jp int, c []float32, ldc int, bias []float32)
}

// shortTiles is a lowB whose kernels run tiles of fewer than mr rows,
// writing a tile's rows rounded up to even: block lets them write a tile
// of an even number of rows straight into C.
type shortTiles interface{ shortTiles() }

// lowWorkspace is one goroutine's scratch for low-precision products.
type lowWorkspace struct {
	a8, row8   []uint8
	a16, row16 []uint16
	scale      []float32 // per packed row (int8)
	rows       int       // rows packed (int8 activations)
	tile       []float32
	// b16 holds block bPanel of the weight at bFrom rounded to bf16
	// (PackedF16BF16), kept for the row tiles after the first.
	b16    []uint16
	bFrom  unsafe.Pointer
	bPanel int
}

// lowGemm is one low-precision product, chunked like gemm. With byRows each
// chunk converts its own rows; otherwise the caller converted all of A into
// shared and the chunks are ranges of panels.
type lowGemm struct {
	b      lowB
	m      int
	a, c   []float32
	bias   []float32
	shared *lowWorkspace
	byRows bool
	chunks int
	next   atomic.Int64
	crew
}

var lowGemms = sync.Pool{New: func() any { return new(lowGemm) }}

// lowMul sets c = a·bᵀ (+ bias); speed is the kernel's rate relative to
// float32, which scales the size needed to split the product across cores.
func lowMul(b lowB, c, a, bias []float32, m, speed int) {
	if m == 0 {
		return
	}
	n, k, mr, nr := b.shape()
	g := lowGemms.Get().(*lowGemm)
	g.b, g.m, g.a, g.c, g.bias = b, m, a, c, bias
	mt, np := (m+mr-1)/mr, panels(n, nr)
	threads := threadsFor(2 * m * n * k / speed)
	ws := workspaces.Get().(*workspace)
	g.byRows = mt >= 2*threads
	if g.byRows {
		g.chunks = min(mt, threads*chunksPerThread)
	} else {
		// The caller's own scratch holds the shared A; block reads only the
		// tile of each goroutine's scratch, so the caller can use both.
		b.packA(&ws.low, a, 0, m)
		g.shared = &ws.low
		g.chunks = min(np, threads*chunksPerThread)
	}
	g.next.Store(0)
	share(g, min(threads, g.chunks)-1, ws)
	workspaces.Put(ws)
	g.b, g.a, g.c, g.bias, g.shared = nil, nil, nil, nil, nil
	lowGemms.Put(g)
}

func (g *lowGemm) work(ws *workspace) {
	n, _, mr, nr := g.b.shape()
	mt, np := (g.m+mr-1)/mr, panels(n, nr)
	own := &ws.low
	for {
		ch := int(g.next.Add(1) - 1)
		if ch >= g.chunks {
			break
		}
		if g.byRows {
			t0, t1 := ch*mt/g.chunks, (ch+1)*mt/g.chunks
			i0, i1 := t0*mr, min(t1*mr, g.m)
			g.b.packA(own, g.a, i0, i1-i0)
			g.block(own, own, i0, i1, 0, np)
		} else {
			g.block(g.shared, own, 0, g.m, ch*np/g.chunks, (ch+1)*np/g.chunks)
		}
	}
}

// block computes rows [i0, i1) (packed in pa from row i0) and panels
// [jp0, jp1) of C; scratch supplies the edge tile.
func (g *lowGemm) block(pa, scratch *lowWorkspace, i0, i1, jp0, jp1 int) {
	n, _, mr, nr := g.b.shape()
	tile := grow(&scratch.tile, mr*nr)
	_, short := g.b.(shortTiles)
	for jp := jp0; jp < jp1; jp++ {
		j := jp * nr
		nj := min(nr, n-j)
		for i := i0; i < i1; i += mr {
			t := (i - i0) / mr
			ni := min(mr, i1-i)
			if nj == nr && (ni == mr || short && ni%2 == 0) {
				var bias []float32
				if g.bias != nil {
					bias = g.bias[j : j+nr]
				}
				g.b.tile(pa, scratch, t, jp, g.c[i*n+j:], n, bias)
				continue
			}
			g.b.tile(pa, scratch, t, jp, tile, nr, nil)
			for r := range ni {
				dst := g.c[(i+r)*n+j : (i+r)*n+j+nj]
				copy(dst, tile[r*nr:r*nr+nj])
				if g.bias != nil {
					for x, b := range g.bias[j : j+nj] {
						dst[x] += b
					}
				}
			}
		}
	}
}

// interleave copies the dwords of one row into column i of a tile of mr
// rows: tile[g·mr+i] = row[g].
func interleave(tile, row []uint32, mr, i int) {
	tile = tile[:len(row)*mr]
	for g, v := range row {
		tile[g*mr+i] = v
	}
}
