package linalg

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

func useBF16Kernel(tb testing.TB, k *bkernel) {
	tb.Helper()
	saved := activeBF16
	activeBF16 = k
	tb.Cleanup(func() { activeBF16 = saved })
}

// roundBF16 returns x with every value rounded to bf16.
func roundBF16(x []float32) []float32 {
	r := make([]float32, len(x))
	for i, v := range x {
		r[i] = fromBF16(toBF16(v))
	}
	return r
}

// TestBF16Exact checks every bf16 kernel against the float64 product of the
// bf16-rounded operands, within float32 summation error, over all tile
// remainders, serial and parallel.
func TestBF16Exact(t *testing.T) {
	for _, kern := range bkernels() {
		t.Run(kern.name, func(t *testing.T) {
			useBF16Kernel(t, kern)
			r := rand.New(rand.NewPCG(31, 32))
			for _, par := range []bool{false, true} {
				if par {
					forceParallel(t)
				}
				for _, m := range edges(kern.mr) {
					for _, n := range edges(kern.nr) {
						for _, k := range []int{1, 2, 3, 7, 8, 9, 33, 384} {
							const guard = 4321
							a, b, bias := randMat(r, m*k), randMat(r, n*k), randMat(r, n)
							p := PackBF16(exact(b), n, k)
							buf := randMat(r, m*n+8)
							for i := m * n; i < len(buf); i++ {
								buf[i] = guard
							}
							c := buf[: m*n : m*n]
							ra, rb := roundBF16(a), roundBF16(b)
							p.MatMulT(c, exact(a), m)
							newReference(ra, rb, nil, m, n, k).check(t, fmt.Sprintf("parallel=%v MatMulT", par), buf, guard)
							p.MatMulTBias(c, exact(a), exact(bias), m)
							newReference(ra, rb, bias, m, n, k).check(t, fmt.Sprintf("parallel=%v MatMulTBias", par), buf, guard)
						}
					}
				}
			}
		})
	}
}

// TestToBF16 checks the rounding (ties to even, NaN kept, overflow to Inf)
// and that the assembly conversion matches it at every tail length.
func TestToBF16(t *testing.T) {
	cases := []struct {
		in   uint32
		want uint16
	}{
		{0x3f800000, 0x3f80}, // 1
		{0x3f808000, 0x3f80}, // tie, even stays
		{0x3f818000, 0x3f82}, // tie, odd rounds up
		{0x3f808001, 0x3f81}, // above the tie
		{0x7f7fffff, 0x7f80}, // max float32 rounds to +Inf
		{0xff800000, 0xff80}, // -Inf
		{0x7fc00000, 0x7fc0}, // NaN
		{0x7f800001, 0x7fc0}, // signalling NaN comes out quiet
	}
	for _, tc := range cases {
		if got := toBF16(math.Float32frombits(tc.in)); got != tc.want {
			t.Errorf("toBF16(%#08x) = %#04x, want %#04x", tc.in, got, tc.want)
		}
	}
	r := rand.New(rand.NewPCG(33, 34))
	for n := 1; n <= 70; n++ {
		src := randMat(r, n)
		src[0] = float32(math.Inf(1))
		want := make([]uint16, n)
		toBF16RowGeneric(want, src)
		got := make([]uint16, n+16)
		for i := range got {
			got[i] = 7
		}
		toBF16Row(got[:n:n], exact(src))
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("n=%d: [%d] = %#04x, want %#04x", n, i, got[i], want[i])
			}
		}
		for i := n; i < len(got); i++ {
			if got[i] != 7 {
				t.Fatalf("n=%d: wrote past the end at %d", n, i)
			}
		}
	}
}
