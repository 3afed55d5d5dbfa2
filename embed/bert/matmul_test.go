package bert

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// naiveMatMulT is the definition, in float64.
func naiveMatMulT(a, b []float32, m, n, k int) []float64 {
	c := make([]float64, m*n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s float64
			for p := 0; p < k; p++ {
				s += float64(a[i*k+p]) * float64(b[j*k+p])
			}
			c[i*n+j] = s
		}
	}
	return c
}

func checkMatMul(t *testing.T, name string, got []float32, want []float64, k int) {
	t.Helper()
	for i := range want {
		if d := math.Abs(float64(got[i]) - want[i]); d > 1e-5*float64(k) {
			t.Fatalf("%s: c[%d] = %v, want %v", name, i, got[i], want[i])
		}
	}
}

func TestMatMulTSmall(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for m := 1; m <= 9; m++ {
		for n := 1; n <= 9; n++ {
			for k := 1; k <= 17; k++ {
				a, b := randMat(r, m*k), randMat(r, n*k)
				want := naiveMatMulT(a, b, m, n, k)
				c := make([]float32, m*n)
				for i := range c {
					c[i] = float32(math.NaN()) // overwritten, never read
				}
				matMulT(c, a, b, m, n, k)
				checkMatMul(t, fmt.Sprintf("%dx%dx%d", m, n, k), c, want, k)
			}
		}
	}
}

func TestMatMulTShapes(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, s := range []struct{ m, n, k int }{{12, 1152, 384}, {50, 384, 1536}, {7, 100, 32}, {33, 341, 97}, {1, 1, 1}} {
		a, b := randMat(r, s.m*s.k), randMat(r, s.n*s.k)
		want := naiveMatMulT(a, b, s.m, s.n, s.k)
		for _, workers := range []int{1, 2, 3, 8} {
			c := make([]float32, s.m*s.n)
			mulT(workers, c, a, b, s.m, s.n, s.k)
			checkMatMul(t, fmt.Sprintf("%v workers=%d", s, workers), c, want, s.k)
		}
	}
}

func TestParallelCovers(t *testing.T) {
	for _, workers := range []int{1, 2, 5} {
		for n := 0; n < 40; n++ {
			seen := make([]int, n)
			parallel(workers, n, 3, func(lo, hi int) {
				for i := lo; i < hi; i++ {
					seen[i]++
				}
			})
			for i, c := range seen {
				if c != 1 {
					t.Fatalf("workers=%d n=%d: item %d run %d times", workers, n, i, c)
				}
			}
		}
	}
}
