package index

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// Reading a large snapshot builds a heap of pointerful structures (memories,
// postings, maps) from nothing, with little garbage (63 MB of 1.5 GB
// allocated at 1M memories). With the collector on, the heap doubling from a
// few megabytes to its final size costs a cycle at each step, each marking
// everything read so far: about twice the final heap marked, and 0.7 s of
// the open's 5.7 s of CPU at 1M. pauseGC turns the collector off while a
// snapshot is read. A memory limit (debug.SetMemoryLimit) still holds while
// it is off. The setting is the process's: concurrent reads share one pause,
// ended by the last to finish.
//
// Ending the pause by restoring GOGC at once would start a cycle at the next
// allocation: the pacer's last marked heap is the few megabytes from before
// the read, so the whole index is far past its goal, and the first search
// after an open paid for marking all of it in assists (0.17 s of a 0.22 s
// first search at 1M, against 0.05 s with the collector left off). The
// pause ends instead as the pacer would have set it had the read's heap
// been marked: GOGC stays off and a memory limit stands in for the goal,
// the runtime's memory now plus the heap's objects (at least 4 MB) times
// GOGC/100, capped by the limit the pause found, so the next cycle runs
// once the process has allocated that much more; after that cycle (seen by a cleanup on an
// unreachable sentinel) GOGC and the limit found are restored. A GOGC of off
// (or 0) found is restored at once. Nothing is skipped, only paced: the
// cycle comes when GOGC says, measured from the heap the read built.
var gcPause struct {
	mu        sync.Mutex
	n         int   // reads in progress
	prev      int   // the GOGC the first of them found
	prevLimit int64 // the memory limit it found
	// paced: the reads have ended, and GOGC stays off with a memory limit
	// in its place until the next cycle ends (gcCycled).
	paced bool
}

// pauseGC turns the garbage collector off until the returned func is called
// (once; later calls do nothing).
func pauseGC() (resume func()) {
	gcPause.mu.Lock()
	if gcPause.n == 0 {
		// While paced, GOGC is still off from the last read, and its
		// stand-in limit stays: reads back to back still collect once the
		// heap has grown as GOGC allows (gcCycled then lifts the limit for
		// the rest of the read).
		if !gcPause.paced {
			gcPause.prev = debug.SetGCPercent(-1)
			gcPause.prevLimit = debug.SetMemoryLimit(-1) // a negative limit reads it
		}
	}
	gcPause.n++
	gcPause.mu.Unlock()
	return sync.OnceFunc(func() {
		gcPause.mu.Lock()
		defer gcPause.mu.Unlock()
		if gcPause.n--; gcPause.n == 0 {
			endPauseLocked()
		}
	})
}

// endPauseLocked ends the pause as the last read finishes (gcPause.mu held).
func endPauseLocked() {
	if gcPause.prev <= 0 {
		debug.SetGCPercent(gcPause.prev)
		gcPause.paced = false
		return
	}
	var s = []metrics.Sample{
		{Name: "/memory/classes/total:bytes"},
		{Name: "/memory/classes/heap/released:bytes"},
		{Name: "/memory/classes/heap/objects:bytes"},
	}
	metrics.Read(s)
	for _, m := range s {
		if m.Value.Kind() != metrics.KindUint64 {
			// Not measurable here: restore GOGC, and take the cycle now.
			debug.SetGCPercent(gcPause.prev)
			gcPause.paced = false
			return
		}
	}
	mapped := s[0].Value.Uint64() - s[1].Value.Uint64()
	// As the pacer, at least 4 MB (times GOGC/100) of growth.
	growth := max(s[2].Value.Uint64(), 4<<20) / 100 * uint64(gcPause.prev)
	limit := gcPause.prevLimit
	if goal := mapped + growth; goal >= mapped && goal < uint64(math.MaxInt64) && int64(goal) < limit {
		limit = int64(goal)
	}
	debug.SetMemoryLimit(limit)
	if !gcPause.paced {
		gcPause.paced = true
		armGCSentinel()
	}
}

// gcSentinel is allocated unreachable; its cleanup runs after the next
// cycle. It holds a pointer so that it is never batched with other small
// objects (which would keep it alive with them).
type gcSentinel struct {
	_ *int
	_ [16]byte
}

func armGCSentinel() {
	runtime.AddCleanup(new(gcSentinel), func(struct{}) { gcCycled() }, struct{}{})
}

// gcCycled ends the paced state after a cycle: GOGC and the limit found are
// restored, GOGC only if no read has begun since (it keeps GOGC off, and its
// end paces again from the heap it leaves).
func gcCycled() {
	gcPause.mu.Lock()
	defer gcPause.mu.Unlock()
	if !gcPause.paced {
		return
	}
	gcPause.paced = false
	debug.SetMemoryLimit(gcPause.prevLimit)
	if gcPause.n == 0 {
		debug.SetGCPercent(gcPause.prev)
	}
}
