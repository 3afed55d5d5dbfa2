package index

import (
	"runtime/debug"
	"sync"
	"testing"
)

// TestPauseGC: the collector is off while any pause is held, and the setting
// found is restored once the last ends, however the pauses overlap.
func TestPauseGC(t *testing.T) {
	old := debug.SetGCPercent(137)
	defer debug.SetGCPercent(old)
	setting := func() int { v := debug.SetGCPercent(-1); debug.SetGCPercent(v); return v }
	a := pauseGC()
	b := pauseGC()
	if v := setting(); v != -1 {
		t.Fatalf("paused twice: GC percent %d, want -1", v)
	}
	a()
	a() // a second call does nothing
	if v := setting(); v != -1 {
		t.Fatalf("one pause left: GC percent %d, want -1", v)
	}
	b()
	if v := setting(); v != 137 {
		t.Fatalf("no pause left: GC percent %d, want 137", v)
	}
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			for range 20 {
				pauseGC()()
			}
		})
	}
	wg.Wait()
	if v := setting(); v != 137 {
		t.Fatalf("after concurrent pauses: GC percent %d, want 137", v)
	}
}
