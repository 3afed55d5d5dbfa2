package bert

import (
	"runtime"
	"sync"

	"github.com/engram-memory/engram/internal/vector"
)

// matMulT sets C[m×n] = A[m×k]·B[n×k]ᵀ, all row-major, C overwritten: the
// one matrix multiply of the encoder (PyTorch's Linear stores W as
// [out × in], so y = x·Wᵀ is matMulT(y, x, W, rows, out, in)). It runs on the
// calling goroutine; parallelism is the caller's (mulT splits rows).
//
// Every entry is a dot product of two contiguous rows, so the loop walks B in
// blocks that stay in cache while every row of A passes over them, and the dot
// product is the project's AVX2 kernel (a plain-Go loop elsewhere).
func matMulT(c, a, b []float32, m, n, k int) {
	const blockBytes = 128 << 10 // a block of B rows that stays in L2
	jb := max(1, blockBytes/(4*max(k, 1)))
	c, a, b = c[:m*n], a[:m*k], b[:n*k]
	for j0 := 0; j0 < n; j0 += jb {
		j1 := min(n, j0+jb)
		for i := 0; i < m; i++ {
			ai := a[i*k : (i+1)*k]
			ci := c[i*n : (i+1)*n]
			for j := j0; j < j1; j++ {
				ci[j] = vector.Dot(ai, b[j*k:(j+1)*k])
			}
		}
	}
}

// mulT is matMulT shared out to the workers. Many rows are split by rows of
// A; a few rows (a query) by rows of B, so each worker streams only its part
// of the weights, into a scratch block copied into C's columns.
func mulT(workers int, c, a, b []float32, m, n, k int) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	if m >= smallM || workers == 1 {
		parallel(workers, m, 4, func(lo, hi int) {
			matMulT(c[lo*n:hi*n], a[lo*k:hi*k], b, hi-lo, n, k)
		})
		return
	}
	parallel(workers, n, 64, func(lo, hi int) {
		w := hi - lo
		part := make([]float32, m*w)
		matMulT(part, a, b[lo*k:hi*k], m, w, k)
		for i := 0; i < m; i++ {
			copy(c[i*n+lo:i*n+hi], part[i*w:(i+1)*w])
		}
	})
}

// smallM is the row count below which mulT splits the weights, not the rows.
const smallM = 64

// parallel runs fn over [0, n) in up to workers contiguous chunks of at least
// minChunk items, one goroutine each, and waits for them.
func parallel(workers, n, minChunk int, fn func(lo, hi int)) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	chunks := min(workers, max(1, n/max(minChunk, 1)))
	if chunks <= 1 {
		fn(0, n)
		return
	}
	var wg sync.WaitGroup
	for c := 0; c < chunks; c++ {
		lo, hi := c*n/chunks, (c+1)*n/chunks
		if c == chunks-1 {
			fn(lo, hi) // the caller's goroutine takes the last chunk
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(lo, hi)
		}()
	}
	wg.Wait()
}
