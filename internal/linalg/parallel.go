package linalg

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Parallelism. Products big enough to pay for waking another goroutine are
// cut into chunks; the caller and any idle worker goroutines take chunks
// until none are left. Workers are started on first use, one fewer than the
// CPUs, and never exit; a worker that is busy (another goroutine's product)
// is simply not asked, so concurrent callers never wait on each other.

// chunksPerThread chunks per thread balance a core slowed by other work.
const chunksPerThread = 4

var (
	// parMinFlops is the smallest product (2·m·n·k) split across cores; a
	// variable so tests can push small products through the parallel path.
	parMinFlops = 1 << 20

	maxThreads atomic.Int64 // 0: GOMAXPROCS

	workerOnce sync.Once
	workerCh   chan *gemm
)

// SetMaxThreads caps the goroutines one product may use (n ≤ 0 means
// GOMAXPROCS, the default) and returns the previous cap. Callers that
// already run one product per core can set 1.
func SetMaxThreads(n int) int {
	if n < 0 {
		n = 0
	}
	return int(maxThreads.Swap(int64(n)))
}

// threadsFor is how many goroutines a product of flops floating-point
// operations should use.
func threadsFor(flops int) int {
	if flops < parMinFlops {
		return 1
	}
	t := runtime.GOMAXPROCS(0)
	if c := int(maxThreads.Load()); c > 0 {
		t = min(t, c)
	}
	return max(1, min(t, flops/parMinFlops))
}

// dispatch offers g to up to n idle workers; each one it reaches is counted
// in g.wg and takes chunks alongside the caller.
func dispatch(g *gemm, n int) {
	workerOnce.Do(startWorkers)
	for range n {
		g.wg.Add(1)
		select {
		case workerCh <- g:
		default:
			g.wg.Done()
			return
		}
	}
}

func startWorkers() {
	workerCh = make(chan *gemm)
	for range max(runtime.NumCPU(), runtime.GOMAXPROCS(0)) - 1 {
		go func() {
			ws := new(workspace)
			for g := range workerCh {
				g.work(ws)
				g.wg.Done()
			}
		}()
	}
}
