package bert

import "math"

// gelu is the exact (erf) GELU of BERT's "gelu" activation:
// x/2 · (1 + erf(x/√2)), with erf from erfApprox.
func gelu(x float32) float32 {
	return float32(0.5 * float64(x) * (1 + erfApprox(float64(x)*(1/math.Sqrt2))))
}

// erfApprox is erf(x) to within 1.7e-8 (math.Erf is the reference in the
// tests), about ten times faster than math.Erf: x·P(x²)/Q(x²) on
// |x| ≤ erfClamp, ±1 beyond (where 1 − erf(x) < 2.9e-8). The coefficients
// are a least-squares fit by tools/modelconv/fit_erf.py.
func erfApprox(x float64) float64 {
	const erfClamp = 3.925
	if x >= erfClamp {
		return 1
	}
	if x <= -erfClamp {
		return -1
	}
	z := x * x
	p := ((((2.030403173639983e-06*z+0.00028748472146788794)*z+0.0038770623143843008)*z+
		0.053086566118789646)*z+0.19299292396796214)*z + 1.1283790199397006
	q := ((((3.8026216384314063e-05*z+0.0011898830261249859)*z+0.015189857027552866)*z+
		0.11517543969830359)*z+0.50436716416953087)*z + 1
	return x * p / q
}

// expf is e^x for the softmax, whose inputs are ≤ 0: relative error below
// 1e-8 against math.Exp. x = n·ln2 + r with |r| ≤ ln2/2, e^r by its Taylor
// series to degree 7 (the remainder is below r⁸/8! < 5e-9), times 2^n.
func expf(x float32) float32 {
	const minExp = -87.0 // e^-87 is near the smallest normal float32
	if x < minExp {
		return 0
	}
	if x > 88 {
		return float32(math.Inf(1))
	}
	xf := float64(x)
	n := math.Floor(xf*math.Log2E + 0.5)
	r := xf - n*math.Ln2
	p := 1 + r*(1+r*(1.0/2+r*(1.0/6+r*(1.0/24+r*(1.0/120+r*(1.0/720+r*(1.0/5040)))))))
	return float32(p * math.Float64frombits(uint64(int64(n)+1023)<<52))
}
