//go:build amd64 && !purego

package linalg

import "golang.org/x/sys/cpu"

// geluAVX2, softmaxAVX2 and layerNormAVX2 are in vec_amd64.s; all need AVX2
// and FMA. softmaxAVX2 and layerNormAVX2 need len(x) ≥ 1.

//go:noescape
func geluAVX2(x []float32)

// geluAVX512 (vec_amd64.s) is geluAVX2 sixteen lanes at a time, with the
// same result for every value; it needs AVX-512 F.
//
//go:noescape
func geluAVX512(x []float32)

//go:noescape
func softmaxAVX2(x []float32, scale float32)

//go:noescape
func layerNormAVX2(x, res, gamma, beta []float32, eps float32)

// useVecAVX2 selects the assembly vector kernels, and useVecAVX512 the
// AVX-512 ones among them; tests turn them off.
var (
	useVecAVX2   = hasAVX2
	useVecAVX512 = hasAVX2 && cpu.X86.HasAVX512F
)

func gelu(x []float32) {
	if useVecAVX512 {
		geluAVX512(x)
		return
	}
	if useVecAVX2 {
		geluAVX2(x)
		return
	}
	geluGeneric(x)
}

func softmax(x []float32, scale float32) {
	if useVecAVX2 {
		softmaxAVX2(x, scale)
		return
	}
	softmaxGeneric(x, scale)
}

// layerNorm normalises one row of x after adding res (nil: none).
func layerNorm(x, res, gamma, beta []float32, eps float32) {
	if useVecAVX2 {
		layerNormAVX2(x, res, gamma, beta, eps)
		return
	}
	layerNormGeneric(x, res, gamma, beta, eps)
}
