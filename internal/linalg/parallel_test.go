package linalg

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
)

// forceParallel splits every product, however small, until the test ends.
func forceParallel(tb testing.TB) {
	tb.Helper()
	saved, savedRows := parMinFlops, rowMinWork
	parMinFlops, rowMinWork = 1, 1
	prev := SetMaxThreads(0)
	tb.Cleanup(func() { parMinFlops, rowMinWork = saved, savedRows; SetMaxThreads(prev) })
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

// TestRowsParallel: the row operations split across goroutines give exactly
// the serial result, for row counts that do not divide into the chunks.
func TestRowsParallel(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	for _, rows := range []int{1, 2, 7, 33} {
		const cols = 19
		x, res := randMat(r, rows*cols), randMat(r, rows*cols)
		gamma, beta := randMat(r, cols), randMat(r, cols)
		ops := []struct {
			name string
			f    func(x []float32)
		}{
			{"GELU", GELU},
			{"Softmax", func(x []float32) { Softmax(x, cols, 0.5) }},
			{"LayerNorm", func(x []float32) { LayerNorm(x, cols, gamma, beta, 1e-12) }},
			{"AddLayerNorm", func(x []float32) { AddLayerNorm(x, res, cols, gamma, beta, 1e-12) }},
		}
		for _, op := range ops {
			serial := append([]float32(nil), x...)
			op.f(serial)
			t.Run(fmt.Sprintf("%s/rows=%d", op.name, rows), func(t *testing.T) {
				forceParallel(t)
				got := append([]float32(nil), x...)
				op.f(got)
				for i := range got {
					if got[i] != serial[i] {
						t.Fatalf("x[%d] = %g in parallel, %g serially", i, got[i], serial[i])
					}
				}
			})
		}
	}
}

// TestNoAllocs: after a warm-up call, no entry point allocates, serial or
// split across cores.
func TestNoAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	const m, n, k = 50, 130, 70
	r := rand.New(rand.NewPCG(17, 18))
	a, b, bias := randMat(r, m*k), randMat(r, n*k), randMat(r, n)
	bt := transpose(b, n, k)
	c := make([]float32, m*n)
	p, pb, q := PackB(b, n, k), PackBF16(b, n, k), QuantizeB(b, n, k)
	x := randMat(r, m*n)
	gamma, beta := randMat(r, n), randMat(r, n)
	calls := []struct {
		name string
		f    func()
	}{
		{"MatMulT", func() { MatMulT(c, a, b, m, n, k) }},
		{"MatMulTBias", func() { MatMulTBias(c, a, b, bias, m, n, k) }},
		{"MatMul", func() { MatMul(c, a, bt, m, n, k) }},
		{"PackedB", func() { p.MatMulTBias(c, a, bias, m) }},
		{"PackedBF16", func() { pb.MatMulTBias(c, a, bias, m) }},
		{"QuantizedB", func() { q.MatMulTBias(c, a, bias, m) }},
		{"QuantizedB/rows=1", func() { q.MatMulT(c[:n], a[:k], 1) }},
		{"GELU", func() { GELU(x) }},
		{"Softmax", func() { Softmax(x, n, 0.1) }},
		{"AddLayerNorm", func() { AddLayerNorm(x, c, n, gamma, beta, 1e-12) }},
	}
	for _, par := range []bool{false, true} {
		for _, call := range calls {
			t.Run(fmt.Sprintf("%s/parallel=%v", call.name, par), func(t *testing.T) {
				if par {
					forceParallel(t)
				}
				if allocs := testing.AllocsPerRun(20, call.f); allocs != 0 {
					t.Errorf("%v allocations per call", allocs)
				}
			})
		}
	}
}
