package linalg

import (
	"math/rand/v2"
	"sync"
	"testing"
)

// forceParallel splits every product, however small, until the test ends.
func forceParallel(tb testing.TB) {
	tb.Helper()
	saved := parMinFlops
	parMinFlops = 1
	prev := SetMaxThreads(0)
	tb.Cleanup(func() { parMinFlops = saved; SetMaxThreads(prev) })
}

// TestParallelShapes runs small and ragged shapes through the chunked
// parallel path, where chunk edges fall inside tiles and panels.
func TestParallelShapes(t *testing.T) {
	forceParallel(t)
	r := rand.New(rand.NewPCG(11, 12))
	for _, kern := range testKernels() {
		t.Run(kern.name, func(t *testing.T) {
			useKernel(t, kern)
			for range 60 {
				runAll(t, r, 1+r.IntN(3*kern.mr*chunksPerThread), 1+r.IntN(5*kern.nr), 1+r.IntN(50))
			}
		})
	}
}

// TestConcurrentProducts has many goroutines multiply through one shared
// PackedB at once, each product split across the workers (run with -race).
func TestConcurrentProducts(t *testing.T) {
	forceParallel(t)
	const m, n, k, goroutines = 37, 70, 45, 8
	rounds := 40
	if testing.Short() {
		rounds = 10
	}
	r := rand.New(rand.NewPCG(13, 14))
	b, bias := randMat(r, n*k), randMat(r, n)
	p := PackB(b, n, k)
	as := make([][]float32, goroutines)
	refs := make([]*reference, goroutines)
	for g := range as {
		as[g] = randMat(r, m*k)
		refs[g] = newReference(as[g], b, bias, m, n, k)
	}
	var wg sync.WaitGroup
	errs := make(chan string, goroutines)
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := make([]float32, m*n)
			for range rounds {
				p.MatMulTBias(c, as[g], bias, m)
				for i, w := range refs[g].want {
					if d := float64(c[i]) - w; d > refs[g].bound[i] || d < -refs[g].bound[i] {
						errs <- "wrong product under concurrency"
						return
					}
				}
				MatMulT(c, as[g], b, m, n, k)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
}
