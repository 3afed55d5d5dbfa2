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
	workerCh   chan job
)

// A job is work cut into chunks that goroutines take in turn: work takes
// chunks until none are left, then the worker calls done.
type job interface {
	work(ws *workspace)
	done()
}

// SetMaxThreads caps the goroutines one product may use (n ≤ 0 means
// GOMAXPROCS, the default) and returns the previous cap. Callers that
// already run one product per core can set 1.
func SetMaxThreads(n int) int {
	if n < 0 {
		n = 0
	}
	return int(maxThreads.Swap(int64(n)))
}

// threadsFor is how many goroutines a job of flops floating-point
// operations should use.
func threadsFor(flops int) int {
	return threadsAbove(flops, parMinFlops)
}

// threadsAbove is how many goroutines a job of size should use: one per
// unit of size, at most GOMAXPROCS or the SetMaxThreads cap.
func threadsAbove(size, unit int) int {
	if size < unit {
		return 1
	}
	t := runtime.GOMAXPROCS(0)
	if c := int(maxThreads.Load()); c > 0 {
		t = min(t, c)
	}
	return max(1, min(t, size/unit))
}

// dispatch offers j to up to n idle workers; wg counts each one it reaches,
// which then takes chunks alongside the caller and calls j.done.
func dispatch(j job, wg *sync.WaitGroup, n int) {
	workerOnce.Do(startWorkers)
	for range n {
		wg.Add(1)
		select {
		case workerCh <- j:
		default:
			wg.Done()
			return
		}
	}
}

func startWorkers() {
	workerCh = make(chan job)
	for range max(runtime.NumCPU(), runtime.GOMAXPROCS(0)) - 1 {
		go func() {
			ws := new(workspace)
			for j := range workerCh {
				j.work(ws)
				j.done()
			}
		}()
	}
}
