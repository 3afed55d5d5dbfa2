package linalg

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

func BenchmarkTune(b *testing.B) {
	for _, kern := range testKernels()[:5] {
		for _, kc := range []int{96, 128, 192, 256, 384} {
			for _, mc := range []int{48, 96, 192} {
				for _, s := range [][3]int{{1280, 1536, 384}, {40, 1536, 384}} {
					m, n, k := s[0], s[1], s[2]
					b.Run(fmt.Sprintf("%s/kc=%d/mc=%d/m=%d", kern.name, kc, mc, m), func(b *testing.B) {
						useKernel(b, kern)
						skc, smc := kern.kc, kern.mc
						kern.kc, kern.mc = kc, mc
						defer func() { kern.kc, kern.mc = skc, smc }()
						defer SetMaxThreads(SetMaxThreads(1))
						r := rand.New(rand.NewPCG(1, 2))
						a, w := randMat(r, m*k), randMat(r, n*k)
						p := PackB(w, n, k)
						c := make([]float32, m*n)
						for b.Loop() {
							p.MatMulT(c, a, m)
						}
						reportFlops(b, m, n, k)
					})
				}
			}
		}
	}
}
