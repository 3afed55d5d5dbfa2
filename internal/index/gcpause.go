package index

import (
	"runtime/debug"
	"sync"
)

// Reading a large snapshot builds a heap of pointerful structures (memories,
// postings, maps) from nothing, with little garbage (63 MB of 1.5 GB
// allocated at 1M memories). With the collector on, the heap doubling from a
// few megabytes to its final size costs a cycle at each step, each marking
// everything read so far: about twice the final heap marked, and 0.7 s of
// the open's 5.7 s of CPU at 1M. pauseGC turns the collector off while a
// snapshot is read; resume turns it back to the setting it found, and the
// next cycle, which marks the index once, runs concurrently after the read.
// A memory limit (debug.SetMemoryLimit) still holds while it is off. The
// setting is the process's: concurrent reads share one pause, ended by the
// last to finish.
var gcPause struct {
	mu   sync.Mutex
	n    int // reads in progress
	prev int // the setting the first of them found
}

// pauseGC turns the garbage collector off until the returned func is called
// (once; later calls do nothing).
func pauseGC() (resume func()) {
	gcPause.mu.Lock()
	if gcPause.n == 0 {
		gcPause.prev = debug.SetGCPercent(-1)
	}
	gcPause.n++
	gcPause.mu.Unlock()
	return sync.OnceFunc(func() {
		gcPause.mu.Lock()
		defer gcPause.mu.Unlock()
		if gcPause.n--; gcPause.n == 0 {
			debug.SetGCPercent(gcPause.prev)
		}
	})
}
