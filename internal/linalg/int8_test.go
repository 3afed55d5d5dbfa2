package linalg

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

func useInt8Kernel(tb testing.TB, k *qkernel) {
	tb.Helper()
	saved := activeInt8
	activeInt8 = k
	tb.Cleanup(func() { activeInt8 = saved })
}

// quantize is the test's own per-row int8 quantisation: scale max|row|/127,
// q = round-half-even(v·(1/scale)).
func quantize(x []float32, rows, cols int) (q []int32, scale []float64) {
	q, scale = make([]int32, len(x)), make([]float64, rows)
	for r := range rows {
		var m float32
		for _, v := range x[r*cols : (r+1)*cols] {
			m = max(m, float32(math.Abs(float64(v))))
		}
		s := m / 127
		scale[r] = float64(s)
		inv := float32(0)
		if s > 0 {
			inv = 1 / s
		}
		for p, v := range x[r*cols : (r+1)*cols] {
			q[r*cols+p] = int32(math.RoundToEven(float64(v * inv)))
		}
	}
	return q, scale
}

// quantReference is the exact product of the quantised operands (what the
// int8 kernel must compute up to float32 rounding of the result) and a
// bound on that rounding.
func quantReference(a, b, bias []float32, m, n, k int) *reference {
	qa, sa := quantize(a, m, k)
	qb, sb := quantize(b, n, k)
	r := &reference{m: m, n: n, k: k, want: make([]float64, m*n), bound: make([]float64, m*n)}
	for i := range m {
		for j := range n {
			var s, abs int64
			for p := range k {
				t := int64(qa[i*k+p]) * int64(qb[j*k+p])
				s += t
				abs += max(t, -t)
			}
			w := float64(s) * sa[i] * sb[j]
			bound := 4 * 0x1p-24 * float64(abs) * sa[i] * sb[j]
			if bias != nil {
				w += float64(bias[j])
				bound += 2 * 0x1p-24 * (math.Abs(w) + math.Abs(float64(bias[j])))
			}
			r.want[i*n+j], r.bound[i*n+j] = w, bound+1e-30
		}
	}
	return r
}

// TestInt8Exact checks every int8 kernel against the exact product of the
// quantised operands, over all tile remainders, serial and parallel.
func TestInt8Exact(t *testing.T) {
	for _, kern := range qkernels() {
		t.Run(kern.name, func(t *testing.T) {
			useInt8Kernel(t, kern)
			r := rand.New(rand.NewPCG(21, 22))
			ms, ns := edges(kern.mr), edges(kern.nr)
			ks := []int{1, 3, 4, 5, 8, 9, 31, 384}
			for _, par := range []bool{false, true} {
				if par {
					forceParallel(t)
				}
				for _, m := range ms {
					for _, n := range ns {
						for _, k := range ks {
							const guard = 4321
							a, b, bias := randMat(r, m*k), randMat(r, n*k), randMat(r, n)
							q := QuantizeB(exact(b), n, k)
							buf := randMat(r, m*n+8)
							for i := m * n; i < len(buf); i++ {
								buf[i] = guard
							}
							c := buf[: m*n : m*n]
							q.MatMulT(c, exact(a), m)
							quantReference(a, b, nil, m, n, k).check(t, fmt.Sprintf("parallel=%v MatMulT", par), buf, guard)
							q.MatMulTBias(c, exact(a), exact(bias), m)
							quantReference(a, b, bias, m, n, k).check(t, fmt.Sprintf("parallel=%v MatMulTBias", par), buf, guard)
						}
					}
				}
			}
		})
	}
}

// TestInt8ZeroRows: all-zero rows of A or B (scale 0) give exact zeros.
func TestInt8ZeroRows(t *testing.T) {
	const m, n, k = 3, 5, 7
	a := make([]float32, m*k)
	b := randMat(rand.New(rand.NewPCG(1, 1)), n*k)
	for p := range k {
		a[k+p] = 1 // only row 1 is nonzero
	}
	clear(b[2*k : 3*k])
	c := make([]float32, m*n)
	QuantizeB(b, n, k).MatMulT(c, a, m)
	for i := range m {
		for j := range n {
			if (i != 1 || j == 2) && c[i*n+j] != 0 {
				t.Errorf("c[%d][%d] = %g, want 0", i, j, c[i*n+j])
			}
		}
	}
}

// TestQuantizeRow: the assembly quantiser matches the Go one bit for bit at
// every tail length, and writes nothing past len(src).
func TestQuantizeRow(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	for n := 1; n <= 70; n++ {
		for _, mag := range []float32{0, 1e-30, 1, 3e30} {
			src := randMat(r, n)
			for i := range src {
				src[i] *= mag
			}
			want := make([]uint8, n)
			ws := quantizeRowGeneric(want, src)
			got := make([]uint8, n+16)
			for i := range got {
				got[i] = 7
			}
			gs := quantizeRow(got[:n:n], exact(src))
			if gs != ws {
				t.Fatalf("n=%d mag=%g: scale %g, want %g", n, mag, gs, ws)
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("n=%d mag=%g: q[%d] = %d, want %d", n, mag, i, got[i], want[i])
				}
			}
			for i := n; i < len(got); i++ {
				if got[i] != 7 {
					t.Fatalf("n=%d: wrote past the end at %d", n, i)
				}
			}
		}
	}
}
