package bert

import "math"

// gelu is the exact (erf) GELU BERT's "gelu" activation is:
// x/2 · (1 + erf(x/√2)).
func gelu(x float32) float32 {
	return 0.5 * x * (1 + float32(math.Erf(float64(x)/math.Sqrt2)))
}

// expf is e^x for the softmax.
func expf(x float32) float32 { return float32(math.Exp(float64(x))) }
