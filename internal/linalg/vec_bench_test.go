package linalg

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkGELU is the FFN activation of one layer: rows×1536 values.
func BenchmarkGELU(b *testing.B) {
	for _, path := range vecPaths() {
		for _, rows := range []int{12, 40, 1280} {
			b.Run(fmt.Sprintf("%s/rows=%d", path, rows), func(b *testing.B) {
				useVec(b, path)
				x := randMat(rand.New(rand.NewPCG(1, 2)), rows*1536)
				src := append([]float32(nil), x...)
				b.SetBytes(int64(4 * len(x)))
				b.ReportAllocs()
				for b.Loop() {
					copy(x, src) // keep the inputs in the model's range
					GELU(x)
				}
			})
		}
	}
}

// BenchmarkSoftmax is one layer's attention probabilities: 12 heads of
// seq×seq scores.
func BenchmarkSoftmax(b *testing.B) {
	for _, path := range vecPaths() {
		for _, seq := range []int{12, 40, 256} {
			b.Run(fmt.Sprintf("%s/seq=%d", path, seq), func(b *testing.B) {
				useVec(b, path)
				x := randMat(rand.New(rand.NewPCG(1, 2)), 12*seq*seq)
				src := append([]float32(nil), x...)
				b.SetBytes(int64(4 * len(x)))
				b.ReportAllocs()
				for b.Loop() {
					copy(x, src)
					Softmax(x, seq, 0.17677669)
				}
			})
		}
	}
}

// BenchmarkAddLayerNorm is one residual+LayerNorm over rows×384.
func BenchmarkAddLayerNorm(b *testing.B) {
	for _, rows := range []int{12, 40, 1280} {
		b.Run(fmt.Sprintf("rows=%d", rows), func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 2))
			x, res := randMat(r, rows*384), randMat(r, rows*384)
			gamma, beta := randMat(r, 384), randMat(r, 384)
			b.SetBytes(int64(4 * len(x)))
			b.ReportAllocs()
			for b.Loop() {
				AddLayerNorm(x, res, 384, gamma, beta, 1e-12)
			}
		})
	}
}

// BenchmarkGELUHeld is a 12-token query's GELU (12×1536 values) while a
// forward pass holds the workers, at rowMinWorkHeld and at rowMinWork: what
// splitting it across the spinning workers saves.
func BenchmarkGELUHeld(b *testing.B) {
	for _, bound := range []int{rowMinWorkHeld, rowMinWork} {
		b.Run(fmt.Sprintf("split-from=%d", bound), func(b *testing.B) {
			saved := rowMinWorkHeld
			rowMinWorkHeld = bound
			defer func() { rowMinWorkHeld = saved }()
			defer Hold()()
			x := randMat(rand.New(rand.NewPCG(1, 2)), 12*1536)
			src := append([]float32(nil), x...)
			for b.Loop() {
				copy(x, src)
				GELU(x)
			}
		})
	}
}
