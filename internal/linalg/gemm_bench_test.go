package linalg

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"time"
)

// benchShapes are the products of all-MiniLM-L6-v2 (hidden 384, FFN 1536,
// fused QKV 1152): one 12-token query, one 40-token memory, a 32-memory
// batch of 40 tokens (1280 rows) and a 256-token document, as m×n×k.
var benchShapes = [][3]int{
	{12, 384, 384}, {12, 1152, 384}, {12, 1536, 384}, {12, 384, 1536},
	{40, 384, 384}, {40, 1152, 384}, {40, 1536, 384}, {40, 384, 1536},
	{256, 384, 384}, {256, 1536, 384}, {256, 384, 1536},
	{1280, 384, 384}, {1280, 1152, 384}, {1280, 1536, 384}, {1280, 384, 1536},
}

func reportFlops(b *testing.B, m, n, k int) {
	b.ReportMetric(2*float64(m)*float64(n)*float64(k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// cpuClock measures CPU time, for benchmarks on a shared machine:
// GFLOP/s-cpu is the speed per second of CPU actually received, whatever
// else the machine does. Single-threaded it counts the benchmark's own OS
// thread; otherwise the whole process (workers, idle spinning and GC
// included), so that it shows the cost of splitting a product.
type cpuClock struct {
	b      *testing.B
	thread bool
	start  time.Duration
}

func startCPU(b *testing.B) *cpuClock { return startCPUThreads(b, 1) }

func startCPUThreads(b *testing.B, threads int) *cpuClock {
	if threads == 1 {
		runtime.LockOSThread()
		return &cpuClock{b, true, threadCPU()}
	}
	return &cpuClock{b, false, processCPU()}
}

func (c *cpuClock) used() time.Duration {
	if c.thread {
		defer runtime.UnlockOSThread()
		return threadCPU() - c.start
	}
	return processCPU() - c.start
}

func (c *cpuClock) report(m, n, k int) {
	if used := c.used(); used > 0 {
		c.b.ReportMetric(2*float64(m)*float64(n)*float64(k)*float64(c.b.N)/used.Seconds()/1e9, "GFLOP/s-cpu")
	}
}

// BenchmarkKernel times one micro-kernel call on L1-resident slivers: the
// ceiling the blocked product can reach.
func BenchmarkKernel(b *testing.B) {
	for _, kern := range testKernels() {
		for _, kc := range []int{128, 256, 384} {
			b.Run(fmt.Sprintf("%s/kc=%d", kern.name, kc), func(b *testing.B) {
				r := rand.New(rand.NewPCG(1, 1))
				a, bb := randMat(r, kc*kern.mr), randMat(r, kc*kern.nr)
				c := make([]float32, kern.mr*kern.nr)
				b.ReportAllocs()
				clk := startCPU(b)
				for b.Loop() {
					kern.fn(kc, a, kc, bb, c, kern.nr, modeStore, nil)
				}
				clk.report(kern.mr, kern.nr, kc)
				reportFlops(b, kern.mr, kern.nr, kc)
			})
		}
	}
}

// linearPath is one way to run a linear layer with a weight packed at load.
type linearPath struct {
	name string
	// prepare packs w (n×k) with the path's kernel and returns the product
	// with a fused bias.
	prepare func(tb testing.TB, w []float32, n, k int) func(c, a, bias []float32, m int)
}

func linearPaths() []linearPath {
	var ps []linearPath
	for _, kern := range testKernels() {
		ps = append(ps, linearPath{"fp32-" + kern.name, func(tb testing.TB, w []float32, n, k int) func(c, a, bias []float32, m int) {
			useKernel(tb, kern)
			return PackB(w, n, k).MatMulTBias
		}})
	}
	for _, kern := range bkernels() {
		ps = append(ps, linearPath{kern.name, func(tb testing.TB, w []float32, n, k int) func(c, a, bias []float32, m int) {
			useBF16Kernel(tb, kern)
			return PackBF16(w, n, k).MatMulTBias
		}})
	}
	for _, fused := range append([]*qKernel{nil}, qKernels()...) {
		if len(f16Kernels()) == 0 {
			break
		}
		name := "f16-" + f16Kernels()[0].name
		if fused != nil {
			name = "f16-" + fused.name
		}
		ps = append(ps, linearPath{name, func(tb testing.TB, w []float32, n, k int) func(c, a, bias []float32, m int) {
			saved := activeQ
			activeQ = fused
			tb.Cleanup(func() { activeQ = saved })
			p, err := NewPackedF16(PackF16(w, n, k), n, k)
			if err != nil {
				tb.Fatal(err)
			}
			return p.MatMulTBias
		}})
	}
	for _, path := range qPaths() {
		for _, f := range qFormats {
			ps = append(ps, linearPath{strings.ToLower(f.String()) + "-" + path.name, func(tb testing.TB, w []float32, n, k int) func(c, a, bias []float32, m int) {
				useQ(tb, path, path.twin.kc)
				p, err := NewPackedQ(f, quantizeQ(f, w, n, k), n, k)
				if err != nil {
					tb.Fatal(err)
				}
				return p.MatMulTBias
			}})
		}
	}
	for _, ks := range qa8Sets() {
		for _, f := range qFormats {
			ps = append(ps, linearPath{strings.ToLower(f.String()) + "-" + ks.name, func(tb testing.TB, w []float32, n, k int) func(c, a, bias []float32, m int) {
				useQA8(tb, ks)
				p, err := NewPackedQ(f, quantizeQ(f, w, n, k), n, k)
				if err != nil {
					tb.Fatal(err)
				}
				return p.Int8Activations().MatMulTBias
			}})
		}
	}
	for _, kern := range qkernels() {
		ps = append(ps, linearPath{kern.name, func(tb testing.TB, w []float32, n, k int) func(c, a, bias []float32, m int) {
			useInt8Kernel(tb, kern)
			return QuantizeB(w, n, k).MatMulTBias
		}})
	}
	return ps
}

// BenchmarkLinear is the linear layer (bias included) with its weight packed
// at load, per path (fp32 kernel, bf16, int8), thread count and model shape, in
// float32-equivalent GFLOP/s. The portable kernels run only the small shapes.
func BenchmarkLinear(b *testing.B) {
	for _, path := range linearPaths() {
		for _, threads := range []int{1, 2} {
			for _, s := range benchShapes {
				m, n, k := s[0], s[1], s[2]
				if strings.Contains(path.name, "generic") && m > 40 {
					continue
				}
				b.Run(fmt.Sprintf("%s/threads=%d/m=%d/n=%d/k=%d", path.name, threads, m, n, k), func(b *testing.B) {
					defer SetMaxThreads(SetMaxThreads(threads))
					r := rand.New(rand.NewPCG(1, 2))
					a, w, bias := randMat(r, m*k), randMat(r, n*k), randMat(r, n)
					mul := path.prepare(b, w, n, k)
					c := make([]float32, m*n)
					mul(c, a, bias, m)
					b.ReportAllocs()
					clk := startCPUThreads(b, threads)
					for b.Loop() {
						mul(c, a, bias, m)
					}
					clk.report(m, n, k)
					reportFlops(b, m, n, k)
				})
			}
		}
	}
}

// BenchmarkKernelInt8 times one int8 micro-kernel call on L1-resident slivers.
func BenchmarkKernelInt8(b *testing.B) {
	for _, kern := range qkernels() {
		const kc = 384
		b.Run(kern.name, func(b *testing.B) {
			a := make([]uint8, kc*kern.mr)
			bb := make([]int8, kc*kern.nr)
			c := make([]float32, kern.mr*kern.nr)
			rs, cs := make([]float32, kern.mr), make([]float32, kern.nr)
			comp := make([]int32, kern.nr)
			b.ReportAllocs()
			clk := startCPU(b)
			for b.Loop() {
				kern.fn(kc/4, a, bb, c, kern.nr, rs, cs, comp, nil)
			}
			clk.report(kern.mr, kern.nr, kc)
			reportFlops(b, kern.mr, kern.nr, kc)
		})
	}
}

// BenchmarkKernelQA8 times one int8-activation micro-kernel call (a 16-row
// tile of packed A, k = 384, times one Q4_0 or Q8_0 panel) on L1-resident
// data: the ceiling of QA8 products, in float32-equivalent GFLOP/s.
func BenchmarkKernelQA8(b *testing.B) {
	const h, k = 16, 384
	for _, ks := range qa8Sets() {
		for _, f := range qFormats {
			b.Run(fmt.Sprintf("%s/%v", ks.name, f), func(b *testing.B) {
				r := rand.New(rand.NewPCG(1, 2))
				p, err := NewPackedQ(f, randQ(r, f, 16, k), 16, k)
				if err != nil {
					b.Fatal(err)
				}
				q := p.Int8Activations()
				var ws lowWorkspace
				q.packA(&ws, randMat(r, h*k), 0, h)
				c := make([]float32, h*16)
				fn := ks.fns[f][h/2-1]
				b.ReportAllocs()
				clk := startCPU(b)
				for b.Loop() {
					fn(k/QBlockLen, ws.a8, p.data, c, 16, nil)
				}
				clk.report(h, 16, k)
				reportFlops(b, h, 16, k)
			})
		}
	}
}
