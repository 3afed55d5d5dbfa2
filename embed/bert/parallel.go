package bert

import (
	"runtime"
	"sync"
)

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
