//go:build !amd64 || purego

package linalg

// useVecAVX2 is always false without assembly.
const useVecAVX2 = false

func gelu(x []float32)                   { geluGeneric(x) }
func softmax(x []float32, scale float32) { softmaxGeneric(x, scale) }

func layerNorm(x, res, gamma, beta []float32, eps float32) {
	layerNormGeneric(x, res, gamma, beta, eps)
}
