package linalg

import (
	"math/rand/v2"
	"sync"
	"testing"
	"time"
)

func TestSMT(t *testing.T) {
	kern := avx2Kernel
	kc := 256
	r := rand.New(rand.NewPCG(1, 1))
	a, bb := randMat(r, kc*kern.mr), randMat(r, kc*kern.nr)
	for _, g := range []int{1, 2, 1, 2, 1, 2} {
		var wg sync.WaitGroup
		const iters = 200000
		st := time.Now()
		for range g {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c := make([]float32, kern.mr*kern.nr)
				for range iters {
					kern.fn(kc, a, bb, c, kern.nr, modeStore, nil)
				}
			}()
		}
		wg.Wait()
		el := time.Since(st).Seconds()
		t.Logf("goroutines=%d aggregate %.1f GFLOP/s", g, float64(g*iters)*2*float64(kern.mr*kern.nr*kc)/el/1e9)
	}
}
