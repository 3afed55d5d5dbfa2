//go:build amd64 && !purego

package linalg

// geluAVX2 and softmaxAVX2 are in vec_amd64.s; both need AVX2 and FMA.
// softmaxAVX2 needs len(x) ≥ 1.

//go:noescape
func geluAVX2(x []float32)

//go:noescape
func softmaxAVX2(x []float32, scale float32)

// useVecAVX2 selects the assembly vector kernels; tests turn it off.
var useVecAVX2 = hasAVX2

func gelu(x []float32) {
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
