package linalg

import (
	"fmt"
	"math/rand/v2"
	"testing"
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
				for b.Loop() {
					kern.fn(kc, a, bb, c, kern.nr, modeStore, nil)
				}
				reportFlops(b, kern.mr, kern.nr, kc)
			})
		}
	}
}

// BenchmarkPackedMatMulT is the linear layer with weights packed at load,
// per kernel and thread count.
func BenchmarkPackedMatMulT(b *testing.B) {
	for _, kern := range testKernels() {
		for _, threads := range []int{1, 2} {
			for _, s := range benchShapes {
				m, n, k := s[0], s[1], s[2]
				b.Run(fmt.Sprintf("%s/threads=%d/m=%d/n=%d/k=%d", kern.name, threads, m, n, k), func(b *testing.B) {
					useKernel(b, kern)
					defer SetMaxThreads(SetMaxThreads(threads))
					r := rand.New(rand.NewPCG(1, 2))
					a, w := randMat(r, m*k), randMat(r, n*k)
					p := PackB(w, n, k)
					c := make([]float32, m*n)
					b.ReportAllocs()
					for b.Loop() {
						p.MatMulT(c, a, m)
					}
					reportFlops(b, m, n, k)
				})
			}
		}
	}
}
