package vector

import (
	"encoding/binary"
	"math"
	"math/rand"
	"testing"
)

// kernel is one dot-product implementation under test.
type kernel struct {
	name string
	fn   func(a, b []float32) float32
}

// naiveDot is the reference: a float64 sum in index order, and a bound on the
// float32 rounding error any summation order may make.
func naiveDot(a, b []float32) (sum, errBound float64) {
	var abs float64
	for i := range a {
		p := float64(a[i]) * float64(b[i])
		sum += p
		abs += math.Abs(p)
	}
	// Each float32 product and partial sum rounds by at most 2^-24 relative.
	return sum, abs*float64(len(a)+2)*0x1p-24 + 1e-30
}

func randVec(r *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

func TestDotMatchesNaive(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	lengths := []int{100, 127, 128, 129, 384, 512, 1023}
	for n := 0; n <= 67; n++ {
		lengths = append(lengths, n)
	}
	for _, k := range kernels() {
		t.Run(k.name, func(t *testing.T) {
			for _, n := range lengths {
				for trial := 0; trial < 20; trial++ {
					a, b := randVec(r, n), randVec(r, n)
					want, tol := naiveDot(a, b)
					if got := k.fn(a, b); math.Abs(float64(got)-want) > tol {
						t.Fatalf("n=%d: got %v, want %v ± %g", n, got, want, tol)
					}
				}
			}
		})
	}
}

func TestDotCases(t *testing.T) {
	cases := []struct {
		name string
		a, b []float32
		want float32
	}{
		{"both empty", nil, nil, 0},
		{"one empty", []float32{1, 2}, nil, 0},
		{"shorter b truncates", []float32{1, 2, 3}, []float32{4, 5}, 14},
		{"shorter a truncates", []float32{1}, []float32{4, 5}, 4},
		{"orthogonal", []float32{1, 0}, []float32{0, 1}, 0},
		{"exact integers 9", []float32{1, 2, 3, 4, 5, 6, 7, 8, 9}, []float32{1, 1, 1, 1, 1, 1, 1, 1, 1}, 45},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Dot(c.a, c.b); got != c.want {
				t.Fatalf("Dot = %v, want %v", got, c.want)
			}
		})
	}
}

// TestDotKernelsAgree checks the fast kernels against the generic one on
// inputs where every product and partial sum is exact, so they must agree bit for bit.
func TestDotKernelsAgree(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	for n := 0; n < 300; n++ {
		a, b := make([]float32, n), make([]float32, n)
		for i := range a {
			a[i], b[i] = float32(r.Intn(201)-100), float32(r.Intn(201)-100)
		}
		want := dotGeneric(a, b)
		for _, k := range kernels() {
			if got := k.fn(a, b); got != want {
				t.Fatalf("%s n=%d: %v, generic %v", k.name, n, got, want)
			}
		}
	}
}

// FuzzDot compares every kernel with the float64 reference on arbitrary
// finite inputs, the first half of the bytes forming a and the rest b.
func FuzzDot(f *testing.F) {
	f.Add([]byte{})
	f.Add(make([]byte, 8*37))
	f.Add([]byte{0, 0, 128, 63, 0, 0, 0, 64, 0, 0, 64, 64, 0, 0, 128, 64})
	f.Fuzz(func(t *testing.T, data []byte) {
		n := len(data) / 8
		a, b := make([]float32, n), make([]float32, n)
		for i := range n {
			a[i] = finite(binary.LittleEndian.Uint32(data[4*i:]))
			b[i] = finite(binary.LittleEndian.Uint32(data[4*(n+i):]))
		}
		want, tol := naiveDot(a, b)
		for _, k := range kernels() {
			got := float64(k.fn(a, b))
			if math.IsInf(want, 0) || math.Abs(want) > math.MaxFloat32/2 {
				continue // float32 overflow: no meaningful comparison
			}
			if math.IsInf(got, 0) {
				continue // an intermediate float32 sum may overflow where float64 does not
			}
			if math.Abs(got-want) > tol {
				t.Fatalf("%s n=%d: got %v, want %v ± %g", k.name, n, got, want, tol)
			}
		}
	})
}

// finite maps bits to a float32 that is neither NaN nor Inf, keeping magnitudes
// within 2^±40 so products stay well inside float32 range.
func finite(bits uint32) float32 {
	exp := (bits >> 23) & 0xff
	exp = 127 - 40 + exp%81
	return math.Float32frombits(bits&0x807fffff | exp<<23)
}

// codeKernels runs refine's kernel both ways this machine can: the generic
// loop and, where there is one, the assembly.
func codeKernels(t *testing.T, q []float32, c, f []int8) (got [][2]float32) {
	t.Helper()
	for _, k := range kernels() {
		useKernel(t, k.name)
		sc, sf := dotF32Int8x2(q, c, f)
		got = append(got, [2]float32{sc, sf})
	}
	return got
}

// TestDotF32Int8x2KernelsAgree: with small integer queries every product
// and partial sum is exact, so the kernels agree with the generic loop bit
// for bit, at every length around the sixteen-wide step and the extreme
// codes included.
func TestDotF32Int8x2KernelsAgree(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	for n := 0; n < 100; n++ {
		q, c, f := make([]float32, n), make([]int8, n), make([]int8, n)
		var wc, wf float32
		for i := range q {
			q[i] = float32(r.Intn(201) - 100)
			c[i], f[i] = int8(r.Intn(256)-128), int8(r.Intn(256)-128)
			if i%7 == 0 {
				c[i], f[i] = -128, 127
			}
			wc += q[i] * float32(c[i])
			wf += q[i] * float32(f[i])
		}
		for i, g := range codeKernels(t, q, c, f) {
			if g != [2]float32{wc, wf} {
				t.Fatalf("kernel %d n=%d: %v, want %v", i, n, g, [2]float32{wc, wf})
			}
		}
	}
}

// FuzzDotF32Int8x2 compares refine's kernels with the float64 sums on
// arbitrary finite queries: the bytes give the query's float32s, then
// each component's two codes.
func FuzzDotF32Int8x2(f *testing.F) {
	f.Add([]byte{})
	f.Add(make([]byte, 6*33))
	f.Add([]byte{0, 0, 128, 63, 0x80, 0x7f, 0, 0, 0, 192, 1, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		n := len(data) / 6
		q, c, fc := make([]float32, n), make([]int8, n), make([]int8, n)
		cq, fq := make([]float32, n), make([]float32, n)
		for i := range n {
			q[i] = finite(binary.LittleEndian.Uint32(data[4*i:]))
			c[i], fc[i] = int8(data[4*n+2*i]), int8(data[4*n+2*i+1])
			cq[i], fq[i] = float32(c[i]), float32(fc[i])
		}
		wc, tc := naiveDot(q, cq)
		wf, tf := naiveDot(q, fq)
		for i, g := range codeKernels(t, q, c, fc) {
			if math.Abs(float64(g[0])-wc) > tc || math.Abs(float64(g[1])-wf) > tf {
				t.Fatalf("kernel %d n=%d: %v, want %v ± %g, %v ± %g", i, n, g, wc, tc, wf, tf)
			}
		}
	})
}
