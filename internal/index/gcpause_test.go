package index

import (
	"runtime"
	"runtime/debug"
	"sync"
	"testing"
	"time"
)

// gcSetting reads GOGC without changing it.
func gcSetting() int { v := debug.SetGCPercent(-1); debug.SetGCPercent(v); return v }

// awaitGCRestored runs cycles until the paced end of the pauses has given
// way to GOGC percent (the cleanup that restores it runs after a cycle, on
// its own goroutine), and fails if it never does.
func awaitGCRestored(t *testing.T, percent int) {
	t.Helper()
	for range 1000 {
		runtime.GC()
		gcPause.mu.Lock()
		paced := gcPause.paced
		gcPause.mu.Unlock()
		if !paced && gcSetting() == percent {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("GC percent %d after cycles, want %d restored", gcSetting(), percent)
}

// TestPauseGC: the collector is off while any pause is held, however the
// pauses overlap; once the last ends GOGC stays off with a memory limit in
// place of the goal (above the memory in use now, at most the limit found),
// and the next cycle restores the GOGC and the limit found.
func TestPauseGC(t *testing.T) {
	old := debug.SetGCPercent(137)
	defer debug.SetGCPercent(old)
	const found = 1 << 50
	oldLimit := debug.SetMemoryLimit(found)
	defer debug.SetMemoryLimit(oldLimit)
	a := pauseGC()
	b := pauseGC()
	if v := gcSetting(); v != -1 {
		t.Fatalf("paused twice: GC percent %d, want -1", v)
	}
	if l := debug.SetMemoryLimit(-1); l != found {
		t.Fatalf("paused: memory limit %d, want the %d found", l, int64(found))
	}
	a()
	a() // a second call does nothing
	if v := gcSetting(); v != -1 {
		t.Fatalf("one pause left: GC percent %d, want -1", v)
	}
	b()
	if v := gcSetting(); v != -1 {
		t.Fatalf("no pause left, no cycle since: GC percent %d, want -1 (paced)", v)
	}
	if l := debug.SetMemoryLimit(-1); l >= found || l < 137*(4<<20)/100 {
		t.Fatalf("paced: memory limit %d, want at least GOGC's 4 MB minimum of growth and below the %d found", l, int64(found))
	}
	awaitGCRestored(t, 137)
	if l := debug.SetMemoryLimit(-1); l != found {
		t.Fatalf("after a cycle: memory limit %d, want the %d found", l, int64(found))
	}

	// A pause begun while paced keeps the stand-in limit, and the settings
	// first found are restored in the end.
	pauseGC()()
	c := pauseGC()
	if v := gcSetting(); v != -1 {
		t.Fatalf("paused while paced: GC percent %d, want -1", v)
	}
	if l := debug.SetMemoryLimit(-1); l >= found {
		t.Fatalf("paused while paced: memory limit %d, want the stand-in below the %d found", l, int64(found))
	}
	c()
	awaitGCRestored(t, 137)
	if l := debug.SetMemoryLimit(-1); l != found {
		t.Fatalf("after a pause while paced: memory limit %d, want the %d found", l, int64(found))
	}

	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			for range 20 {
				pauseGC()()
				runtime.Gosched()
			}
		})
	}
	wg.Go(func() { // cycles, and so cleanups, among the pauses
		for range 20 {
			runtime.GC()
		}
	})
	wg.Wait()
	awaitGCRestored(t, 137)
	if l := debug.SetMemoryLimit(-1); l != found {
		t.Fatalf("after concurrent pauses: memory limit %d, want the %d found", l, int64(found))
	}
}

// TestPauseGCBackToBack: reads back to back, each leaving garbage and
// allocating nothing between them, still collect: the heap does not grow
// without bound while the pacing limit stands between them.
func TestPauseGCBackToBack(t *testing.T) {
	old := debug.SetGCPercent(100)
	defer debug.SetGCPercent(old)
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 100 {
		resume := pauseGC()
		for range 8 {
			gcSink = make([]byte, 1<<20) // garbage once the next replaces it
		}
		resume()
	}
	gcSink = nil
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if after.NumGC == before.NumGC {
		t.Fatalf("800 MB of garbage over 100 pauses, and no cycle (heap %d MB)", after.HeapAlloc>>20)
	}
	awaitGCRestored(t, 100)
}

var gcSink []byte

// TestPauseGCOff: a GOGC of off found is restored as the last pause ends,
// and the memory limit is left as it was.
func TestPauseGCOff(t *testing.T) {
	old := debug.SetGCPercent(-1)
	defer debug.SetGCPercent(old)
	limit := debug.SetMemoryLimit(-1)
	pauseGC()()
	gcPause.mu.Lock()
	paced := gcPause.paced
	gcPause.mu.Unlock()
	if v := gcSetting(); v != -1 || paced {
		t.Fatalf("GOGC off found: GC percent %d, paced %t; want -1, not paced", v, paced)
	}
	if l := debug.SetMemoryLimit(-1); l != limit {
		t.Fatalf("GOGC off found: memory limit %d, want it unchanged", l)
	}
}
