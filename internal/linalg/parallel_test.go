package linalg

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
)

// forceParallel splits every product, however small, until the test ends.
func forceParallel(tb testing.TB) {
	tb.Helper()
	saved, savedRows, savedHeld := parMinFlops, rowMinWork, rowMinWorkHeld
	parMinFlops, rowMinWork, rowMinWorkHeld = 1, 1, 1
	prev := SetMaxThreads(0)
	tb.Cleanup(func() { parMinFlops, rowMinWork, rowMinWorkHeld = saved, savedRows, savedHeld; SetMaxThreads(prev) })
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

// TestConcurrentProducts has goroutines multiply through one shared PackedB
// at once, each product split across the workers: parked between products,
// or spinning under overlapping Holds (some released twice, goroutine 0
// never holding), where the board's offers are reused product after
// product. Every product is within the float64 reference's bound and bit
// for bit the serial one (run with -race).
func TestConcurrentProducts(t *testing.T) {
	for _, held := range []bool{false, true} {
		t.Run(fmt.Sprintf("held=%t", held), func(t *testing.T) { concurrentProducts(t, held) })
	}
}

func concurrentProducts(t *testing.T, held bool) {
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
	serial := make([][]float32, goroutines)
	prev := SetMaxThreads(1)
	for g := range as {
		as[g] = randMat(r, m*k)
		refs[g] = newReference(as[g], b, bias, m, n, k)
		serial[g] = make([]float32, m*n)
		p.MatMulTBias(serial[g], as[g], bias, m)
	}
	SetMaxThreads(prev)
	forceParallel(t)
	var wg sync.WaitGroup
	errs := make(chan string, goroutines)
	for g := range goroutines {
		wg.Go(func() {
			c := make([]float32, m*n)
			x := make([]float32, m*n)
			for round := range rounds {
				release := func() {}
				if held && g > 0 {
					release = Hold()
				}
				for range 3 {
					p.MatMulTBias(c, as[g], bias, m)
					for i, w := range refs[g].want {
						if d := float64(c[i]) - w; d > refs[g].bound[i] || d < -refs[g].bound[i] {
							errs <- fmt.Sprintf("goroutine %d round %d: c[%d] = %g, the reference %g", g, round, i, c[i], w)
							return
						}
						if math.Float32bits(c[i]) != math.Float32bits(serial[g][i]) {
							errs <- fmt.Sprintf("goroutine %d round %d: c[%d] = %g, serially %g", g, round, i, c[i], serial[g][i])
							return
						}
					}
					copy(x, c)
					GELU(x)
				}
				MatMulT(c, as[g], b, m, n, k)
				release()
				if round%3 == 0 {
					release() // a second call releases nothing more
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
	if h := holds.Load(); h != 0 {
		t.Fatalf("%d holds left after every release", h)
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

// TestNoAllocs: after a warm-up call, no entry point allocates, serial,
// split across cores, or offered to workers spinning under a Hold.
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
	for _, mode := range []string{"serial", "parallel", "held"} {
		for _, call := range calls {
			t.Run(fmt.Sprintf("%s/%s", call.name, mode), func(t *testing.T) {
				if mode != "serial" {
					forceParallel(t)
				}
				if mode == "held" { // the products offered to spinning workers
					release := Hold()
					t.Cleanup(release)
				}
				if allocs := testing.AllocsPerRun(20, call.f); allocs != 0 {
					t.Errorf("%v allocations per call", allocs)
				}
			})
		}
	}
}

// TestParallel: every part of the work is done once, by calls in distinct
// slots below n, with and without a Hold, from several goroutines at once.
func TestParallel(t *testing.T) {
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for round := range 50 {
				release := func() {}
				if g%2 == 1 {
					release = Hold()
				}
				const parts = 97
				n := 1 + round%4
				var next atomic.Int64
				var done [parts]atomic.Int32
				var slots sync.Map
				Parallel(n, func(slot int) {
					if slot < 0 || slot >= n {
						t.Errorf("slot %d of %d", slot, n)
					}
					if _, dup := slots.LoadOrStore(slot, true); dup {
						t.Errorf("slot %d called twice", slot)
					}
					for p := next.Add(1) - 1; p < parts; p = next.Add(1) - 1 {
						done[p].Add(1)
					}
				})
				release()
				for p := range done {
					if d := done[p].Load(); d != 1 {
						t.Errorf("part %d done %d times", p, d)
					}
				}
			}
		})
	}
	wg.Wait()
}

// TestHoldOneThread: where a product may use one goroutine, Hold sets no
// worker spinning (it would only take the core from the caller).
func TestHoldOneThread(t *testing.T) {
	prev := SetMaxThreads(1)
	defer SetMaxThreads(prev)
	release := Hold()
	defer release()
	if h := holds.Load(); h != 0 {
		t.Fatalf("%d holds under SetMaxThreads(1)", h)
	}
}
