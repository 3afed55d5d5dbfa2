package linalg

import (
	"math"
	"math/rand/v2"
	"testing"
)

// geluExact is GELU in float64, the reference.
func geluExact(x float64) float64 { return 0.5 * x * math.Erfc(-x/math.Sqrt2) }

// relErr is |got−want|/|want|, with an absolute floor for values near zero.
func relErr(got, want, floor float64) float64 {
	return math.Abs(got-want) / math.Max(math.Abs(want), floor)
}

// geluTol is the relative error allowed against the float64 reference: the
// polynomials are within 4e-7 (testdata/fit_gelu.py), float32 rounding adds
// 6e-8. Below the smallest normal float32 (|GELU(x)| < 1.2e-38, x < −13.2)
// the result may flush to zero.
const geluTol = 1e-6

func geluOK(got, want float64) bool {
	return math.Abs(got-want) <= geluTol*math.Abs(want)+0x1p-126
}

func TestGELU(t *testing.T) {
	var xs []float32
	for x := -15.0; x <= 15; x += 1.0 / 512 {
		xs = append(xs, float32(x))
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		xs = append(xs, float32(r.NormFloat64()*3))
	}
	xs = append(xs, 0, float32(math.Copysign(0, -1)), 1e-30, -1e-30, 1e-45, 3e38, -3e38, 100, -100, -13.5, -20)
	for _, path := range vecPaths() {
		t.Run(path, func(t *testing.T) {
			useVec(t, path)
			got := exact(xs)
			GELU(got)
			var worst float64
			for i, x := range xs {
				want := geluExact(float64(x))
				if math.Abs(want) > 0x1p-126 {
					worst = max(worst, relErr(float64(got[i]), want, 0))
				}
				if !geluOK(float64(got[i]), want) {
					e := relErr(float64(got[i]), want, 0)
					t.Errorf("GELU(%g) = %g, want %g (relative error %.2g)", x, got[i], want, e)
				}
			}
			t.Logf("worst relative error %.3g", worst)
		})
	}
}

// TestGELUSpecial: infinities and NaN behave like x·Φ(x).
func TestGELUSpecial(t *testing.T) {
	for _, path := range vecPaths() {
		t.Run(path, func(t *testing.T) {
			useVec(t, path)
			x := []float32{float32(math.Inf(1)), float32(math.NaN())}
			GELU(x)
			if !math.IsInf(float64(x[0]), 1) || !math.IsNaN(float64(x[1])) {
				t.Errorf("GELU(+Inf, NaN) = %v", x)
			}
		})
	}
}

// TestGELULengths covers every tail length and checks nothing past the end
// is written (the guard values after the slice must survive).
func TestGELULengths(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, path := range vecPaths() {
		t.Run(path, func(t *testing.T) {
			useVec(t, path)
			for n := range 41 {
				buf := randMat(r, n+8)
				x, guard := buf[:n:n], append([]float32(nil), buf[n:]...)
				want := append([]float32(nil), x...)
				geluGeneric(want)
				GELU(x)
				for i := range x {
					if !geluOK(float64(x[i]), float64(want[i])) {
						t.Fatalf("n=%d: GELU x[%d] = %g, want %g", n, i, x[i], want[i])
					}
				}
				for i, g := range guard {
					if buf[n+i] != g {
						t.Fatalf("n=%d: GELU wrote past the end at %d", n, n+i)
					}
				}
			}
		})
	}
}

func TestSoftmax(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, path := range vecPaths() {
		t.Run(path, func(t *testing.T) {
			useVec(t, path)
			for cols := 1; cols <= 70; cols++ {
				for _, scale := range []float32{1, 0.17677669, 3, -1, 0} {
					rows := 3
					buf := randMat(r, rows*cols+8)
					for i := range buf {
						buf[i] *= 5
					}
					x := buf[: rows*cols : rows*cols]
					guard := append([]float32(nil), buf[rows*cols:]...)
					want := append([]float32(nil), x...)
					for i := 0; i < len(want); i += cols {
						softmaxGeneric(want[i:i+cols], scale)
					}
					Softmax(x, cols, scale)
					for i := range x {
						// e^y is computed from y = scale·x − max rounded to
						// float32, so its relative error grows with |y|.
						y := math.Abs(math.Log(float64(want[i])))
						// The kernels' e^y is 0 below y = −87 (e^−87 ≈ 1.6e-38,
						// under 2⁻¹²⁵), where float32 is about to lose precision.
						if d := math.Abs(float64(x[i] - want[i])); !(d <= (2e-6+1.2e-7*y)*float64(want[i])+0x1p-125) {
							t.Fatalf("cols=%d scale=%g: x[%d] = %g, want %g", cols, scale, i, x[i], want[i])
						}
					}
					for i, g := range guard {
						if buf[rows*cols+i] != g {
							t.Fatalf("cols=%d: Softmax wrote past the end", cols)
						}
					}
				}
			}
		})
	}
}

// TestSoftmaxExtremes: a -Inf (masked) score gets probability 0, huge
// scores do not overflow, a NaN spreads to its row.
func TestSoftmaxExtremes(t *testing.T) {
	inf := float32(math.Inf(1))
	for _, path := range vecPaths() {
		t.Run(path, func(t *testing.T) {
			useVec(t, path)
			x := []float32{1, -inf, 1, 1, 1e30, 1e30, 0, 0, 0}
			Softmax(x, 3, 1)
			want := []float32{0.5, 0, 0.5, 0, 0, 0, 1.0 / 3, 1.0 / 3, 1.0 / 3}
			want[3], want[4], want[5] = 0, 0.5, 0.5
			x = []float32{1, -inf, 1, 1, 1e30, 1e30, 0, 0, 0}
			Softmax(x, 3, 1)
			for i := range x {
				if math.Abs(float64(x[i]-want[i])) > 1e-6 {
					t.Errorf("x[%d] = %g, want %g", i, x[i], want[i])
				}
			}
			y := []float32{1, float32(math.NaN()), 2}
			Softmax(y, 3, 1)
			for i, v := range y {
				if !math.IsNaN(float64(v)) {
					t.Errorf("NaN row: y[%d] = %g, want NaN", i, v)
				}
			}
		})
	}
}

// TestLayerNorm checks LayerNorm and AddLayerNorm on every path against a
// float64 computation, at every tail length and at the model's width, with
// a large mean (the two-pass variance must not cancel) and guards past x.
func TestLayerNorm(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, path := range vecPaths() {
		t.Run(path, func(t *testing.T) {
			useVec(t, path)
			for _, cols := range append(upTo(40), 383, 384) {
				for _, fused := range []bool{false, true} {
					const rows, guard = 3, 777
					in := randMat(r, rows*cols)
					for i := range in {
						in[i] = in[i]*3 + 7
					}
					res := randMat(r, len(in))
					gamma, beta := randMat(r, cols), randMat(r, cols)
					buf := append(append([]float32(nil), in...), guard, guard, guard, guard, guard, guard, guard, guard)
					got := buf[:len(in):len(in)]
					if fused {
						AddLayerNorm(got, exact(res), cols, exact(gamma), exact(beta), 1e-12)
						for i := range in {
							in[i] += res[i]
						}
					} else {
						LayerNorm(got, cols, exact(gamma), exact(beta), 1e-12)
					}
					for row := 0; row < len(in); row += cols {
						var s, ss float64
						for _, v := range in[row : row+cols] {
							s += float64(v)
						}
						mean := s / float64(cols)
						for _, v := range in[row : row+cols] {
							ss += (float64(v) - mean) * (float64(v) - mean)
						}
						sd := math.Sqrt(ss/float64(cols) + 1e-12)
						for j := range cols {
							want := (float64(in[row+j])-mean)/sd*float64(gamma[j]) + float64(beta[j])
							if d := math.Abs(float64(got[row+j]) - want); d > 2e-6*(1+math.Abs(want)) {
								t.Fatalf("cols=%d fused=%v: x[%d] = %g, want %g", cols, fused, row+j, got[row+j], want)
							}
						}
					}
					for _, g := range buf[len(in):] {
						if g != guard {
							t.Fatalf("cols=%d: wrote past the end of x", cols)
						}
					}
				}
			}
		})
	}
}

func TestAddBias(t *testing.T) {
	x := []float32{1, 2, 3, 4, 5, 6}
	AddBias(x, []float32{10, 20, 30})
	want := []float32{11, 22, 33, 14, 25, 36}
	for i := range x {
		if x[i] != want[i] {
			t.Fatalf("AddBias: %v, want %v", x, want)
		}
	}
}
