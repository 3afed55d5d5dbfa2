// Package parallel splits a range of work into contiguous parts, one
// goroutine each.
package parallel

import "sync"

// Split runs fn(w, lo, hi) for each part w of [0, parts), where part w is
// [w·n/parts, (w+1)·n/parts) of [0, n), and waits for all of them. The last
// part runs on the calling goroutine; with parts ≤ 1 the whole range does.
func Split(parts, n int, fn func(w, lo, hi int)) {
	if parts <= 1 {
		fn(0, 0, n)
		return
	}
	var wg sync.WaitGroup
	for w := range parts - 1 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(w, w*n/parts, (w+1)*n/parts)
		}()
	}
	fn(parts-1, (parts-1)*n/parts, n)
	wg.Wait()
}
