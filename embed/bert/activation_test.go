package bert

import (
	"math"
	"testing"
)

func TestErfApprox(t *testing.T) {
	worst := 0.0
	for i := -800000; i <= 800000; i++ {
		x := float64(i) * 1e-5 // [-8, 8]
		worst = max(worst, math.Abs(erfApprox(x)-math.Erf(x)))
	}
	if worst > 3e-8 {
		t.Errorf("max |erfApprox - math.Erf| = %.3g on [-8, 8]", worst)
	}
	for _, x := range []float64{0, math.Inf(1), math.Inf(-1), 1e-300, -1e-300} {
		if got := erfApprox(x); got != math.Erf(x) && math.Abs(got-math.Erf(x)) > 1e-15 {
			t.Errorf("erfApprox(%v) = %v", x, got)
		}
	}
}

func TestGELU(t *testing.T) {
	for i := -100000; i <= 100000; i++ {
		x := float32(i) * 1e-4 // [-10, 10]
		want := 0.5 * float64(x) * (1 + math.Erf(float64(x)/math.Sqrt2))
		if d := math.Abs(float64(gelu(x)) - want); d > 1e-7+1e-6*math.Abs(want) {
			t.Fatalf("gelu(%v) = %v, want %v", x, gelu(x), want)
		}
	}
}

func TestExpf(t *testing.T) {
	for i := 0; i <= 1000000; i++ {
		x := -float32(i) * 1e-4 // [-100, 0]
		want := math.Exp(float64(x))
		got := float64(expf(x))
		if want < 1e-37 {
			if got > 1e-37 {
				t.Fatalf("expf(%v) = %v, want %v", x, got, want)
			}
			continue
		}
		if math.Abs(got-want) > 2e-7*want {
			t.Fatalf("expf(%v) = %v, want %v", x, got, want)
		}
	}
	if expf(float32(math.Inf(-1))) != 0 || !math.IsInf(float64(expf(100)), 1) {
		t.Error("expf at the extremes")
	}
}
