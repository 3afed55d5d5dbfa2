package linalg

import (
	"sync"
	"sync/atomic"
)

// rowJob runs a row-wise vector operation over many rows, in chunks of rows
// taken by the caller and idle workers, like a product.
type rowJob struct {
	op                  rowOp
	x, res, gamma, beta []float32
	cols                int
	scale, eps          float32

	chunk, chunks int
	next          atomic.Int64
	crew
}

type rowOp int

const (
	opGELU rowOp = iota
	opSoftmax
	opLayerNorm
)

// rowMinWork is the number of values below which a row operation runs on
// the calling goroutine alone (~50 µs of GELU with AVX2): waking a parked
// worker costs about 60 µs on a VM. rowMinWorkHeld is the bound while a
// forward pass holds the workers (Hold): they spin, and take a job in well
// under a microsecond, so a 12-token query's GELU (18,432 values, ~24 µs)
// is worth splitting; its layer norms (4,608) are not.
var rowMinWork, rowMinWorkHeld = 1 << 15, 1 << 13

var rowJobs = sync.Pool{New: func() any { return new(rowJob) }}

// runRows applies op to the rows of x (cols values each).
func runRows(op rowOp, x, res, gamma, beta []float32, cols int, scale, eps float32) {
	rows := (len(x) + cols - 1) / cols // GELU's last row may be short
	unit := rowMinWork
	if holds.Load() > 0 {
		unit = rowMinWorkHeld
	}
	threads := threadsAbove(len(x), unit)
	if threads == 1 || rows < 2 {
		applyRows(op, x, res, gamma, beta, cols, scale, eps)
		return
	}
	j := rowJobs.Get().(*rowJob)
	j.op, j.x, j.res, j.gamma, j.beta, j.cols, j.scale, j.eps = op, x, res, gamma, beta, cols, scale, eps
	j.chunks = min(rows, threads*chunksPerThread)
	j.chunk = (rows + j.chunks - 1) / j.chunks
	j.chunks = (rows + j.chunk - 1) / j.chunk
	j.next.Store(0)
	share(j, threads-1, nil)
	j.x, j.res, j.gamma, j.beta = nil, nil, nil, nil
	rowJobs.Put(j)
}

func (j *rowJob) work(*workspace) {
	for {
		ch := int(j.next.Add(1) - 1)
		if ch >= j.chunks {
			return
		}
		lo := ch * j.chunk * j.cols
		hi := min(len(j.x), lo+j.chunk*j.cols)
		var res []float32
		if j.res != nil {
			res = j.res[lo:hi]
		}
		applyRows(j.op, j.x[lo:hi], res, j.gamma, j.beta, j.cols, j.scale, j.eps)
	}
}

// applyRows applies op to the rows of x on the calling goroutine.
func applyRows(op rowOp, x, res, gamma, beta []float32, cols int, scale, eps float32) {
	switch op {
	case opGELU:
		gelu(x)
	case opSoftmax:
		for r := 0; r < len(x); r += cols {
			softmax(x[r:r+cols:r+cols], scale)
		}
	case opLayerNorm:
		for r := 0; r < len(x); r += cols {
			var rr []float32
			if res != nil {
				rr = res[r : r+cols : r+cols]
			}
			layerNorm(x[r:r+cols:r+cols], rr, gamma, beta, eps)
		}
	}
}
