package linalg

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// useKernel makes products and packings use kern until the test ends.
func useKernel(tb testing.TB, kern *kernel) {
	tb.Helper()
	saved := active
	active = kern
	tb.Cleanup(func() { active = saved })
}

// reference is the exact product a·bᵀ + bias (float64 triple loop) with,
// per entry, the worst rounding error float32 accumulation may show: k·2⁻²³
// times the sum of |terms| (Higham's γₖ bound), with slack.
type reference struct {
	m, n, k     int
	want, bound []float64
}

func newReference(a, b, bias []float32, m, n, k int) *reference {
	r := &reference{m: m, n: n, k: k, want: make([]float64, m*n), bound: make([]float64, m*n)}
	for i := range m {
		for j := range n {
			var s, abs float64
			for p := range k {
				t := float64(a[i*k+p]) * float64(b[j*k+p])
				s += t
				abs += math.Abs(t)
			}
			if bias != nil {
				s += float64(bias[j])
				abs += math.Abs(float64(bias[j]))
			}
			r.want[i*n+j] = s
			r.bound[i*n+j] = 2*float64(k+2)*0x1p-24*abs + 1e-30
		}
	}
	return r
}

// check compares c (m×n, followed by guard values that must be untouched).
func (r *reference) check(t *testing.T, what string, c []float32, guard float32) {
	t.Helper()
	for i := range r.m {
		for j := range r.n {
			g, w := float64(c[i*r.n+j]), r.want[i*r.n+j]
			if d := math.Abs(g - w); !(d <= r.bound[i*r.n+j]) {
				t.Fatalf("%s m=%d n=%d k=%d: c[%d][%d] = %g, want %g", what, r.m, r.n, r.k, i, j, g, w)
			}
		}
	}
	for i, v := range c[r.m*r.n:] {
		if v != guard {
			t.Fatalf("%s m=%d n=%d k=%d: wrote past the end of c, at %d", what, r.m, r.n, r.k, r.m*r.n+i)
		}
	}
}

func randMat(r *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(r.NormFloat64())
	}
	return s
}

// exact returns a fresh slice holding s with no spare capacity, so any Go
// read past its end panics. (The assembly reads only packed copies.)
func exact(s []float32) []float32 { return append(make([]float32, 0, len(s)), s...) }

// transpose returns the k×n transpose of b (n×k).
func transpose(b []float32, n, k int) []float32 {
	t := make([]float32, len(b))
	for j := range n {
		for p := range k {
			t[p*n+j] = b[j*k+p]
		}
	}
	return t
}

// runAll computes c = a·bᵀ (+bias) through every entry point and checks each.
func runAll(t *testing.T, r *rand.Rand, m, n, k int) {
	t.Helper()
	const guard = 12345
	a, b, bias := randMat(r, m*k), randMat(r, n*k), randMat(r, n)
	plain, biased := newReference(a, b, nil, m, n, k), newReference(a, b, bias, m, n, k)
	buf := randMat(r, m*n+16) // garbage: c must be overwritten
	for i := m * n; i < len(buf); i++ {
		buf[i] = guard
	}
	c := buf[: m*n : m*n]
	MatMulT(c, exact(a), exact(b), m, n, k)
	plain.check(t, "MatMulT", buf, guard)
	MatMulTBias(c, exact(a), exact(b), exact(bias), m, n, k)
	biased.check(t, "MatMulTBias", buf, guard)
	MatMul(c, exact(a), exact(transpose(b, n, k)), m, n, k)
	plain.check(t, "MatMul", buf, guard)
	if n > 0 && k > 0 {
		p := PackB(exact(b), n, k)
		p.MatMulT(c, exact(a), m)
		plain.check(t, "PackedB.MatMulT", buf, guard)
		p.MatMulTBias(c, exact(a), exact(bias), m)
		biased.check(t, "PackedB.MatMulTBias", buf, guard)
	}
}

// TestSmallShapesExhaustive covers every m and n up to 40 (or two tiles and
// one) for each kernel, at k across the unrolled loop's remainders, with
// inputs sized exactly.
func TestSmallShapesExhaustive(t *testing.T) {
	ks := []int{1, 2, 3, 4, 5, 7, 8, 9, 13, 16, 17, 31, 40}
	if testing.Short() || raceEnabled {
		ks = []int{1, 5, 17}
	}
	for _, kern := range testKernels() {
		t.Run(kern.name, func(t *testing.T) {
			useKernel(t, kern)
			r := rand.New(rand.NewPCG(1, 2))
			// Up to two tiles and one more in each direction: every
			// remainder of mr and nr, with and without a full tile before it.
			ms, ns := upTo(max(40, 2*kern.mr+1)), upTo(max(40, 2*kern.nr+1))
			if raceEnabled {
				ms, ns = edges(kern.mr), edges(kern.nr)
			}
			for _, m := range ms {
				for _, n := range ns {
					for _, k := range ks {
						runAll(t, r, m, n, k)
					}
				}
			}
		})
	}
}

func upTo(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i + 1
	}
	return s
}

// edges are the sizes around one and two tiles of t.
func edges(t int) []int { return []int{1, t - 1, t, t + 1, 2*t - 1, 2 * t, 2*t + 1} }

// TestKBlocking forces small cache blocks so products cross kc, mc and nc
// boundaries with ragged ends.
func TestKBlocking(t *testing.T) {
	for _, kern := range testKernels() {
		t.Run(kern.name, func(t *testing.T) {
			useKernel(t, kern)
			saved := *kern
			t.Cleanup(func() { kern.kc, kern.mc, kern.nc = saved.kc, saved.mc, saved.nc })
			kern.kc, kern.mc, kern.nc = 5, 2*kern.mr, 2
			r := rand.New(rand.NewPCG(3, 4))
			for _, s := range [][3]int{{1, 1, 6}, {7, 9, 11}, {3*kern.mr + 1, 5*kern.nr - 1, 23}, {50, 70, 40}} {
				runAll(t, r, s[0], s[1], s[2])
			}
		})
	}
}

// TestLargeShapes runs random and model-sized shapes, big enough to be split
// across cores.
func TestLargeShapes(t *testing.T) {
	shapes := [][3]int{{12, 384, 384}, {40, 1536, 384}, {37, 384, 1536}, {256, 384, 32}, {40, 40, 32}, {40, 32, 40}, {1, 1, 1000}}
	r := rand.New(rand.NewPCG(5, 6))
	for range 6 {
		shapes = append(shapes, [3]int{1 + r.IntN(300), 1 + r.IntN(300), 1 + r.IntN(700)})
	}
	if testing.Short() || raceEnabled {
		shapes = shapes[:2]
	}
	for _, kern := range testKernels() {
		for _, s := range shapes {
			t.Run(fmt.Sprintf("%s/%dx%dx%d", kern.name, s[0], s[1], s[2]), func(t *testing.T) {
				useKernel(t, kern)
				runAll(t, r, s[0], s[1], s[2])
			})
		}
	}
}

// TestZeroDims: empty products leave c alone, k = 0 gives zeros (or the bias).
func TestZeroDims(t *testing.T) {
	c := []float32{1, 2, 3, 4, 5, 6}
	MatMulT(c, nil, nil, 2, 3, 0)
	for i, v := range c {
		if v != 0 {
			t.Fatalf("k=0: c[%d] = %g, want 0", i, v)
		}
	}
	MatMulTBias(c, nil, nil, []float32{7, 8, 9}, 2, 3, 0)
	if want := []float32{7, 8, 9, 7, 8, 9}; fmt.Sprint(c) != fmt.Sprint(want) {
		t.Fatalf("k=0 with bias: c = %v, want %v", c, want)
	}
	MatMulT(nil, nil, make([]float32, 6), 0, 3, 2)
	MatMul(nil, make([]float32, 6), nil, 3, 0, 2)
}

// TestStrided multiplies one attention head of a fused QKV projection in
// place and checks it against the copied-out head.
func TestStrided(t *testing.T) {
	const seq, hidden, heads, hd = 23, 96, 3, 32
	r := rand.New(rand.NewPCG(7, 8))
	qkv := randMat(r, seq*3*hidden)
	for _, kern := range testKernels() {
		t.Run(kern.name, func(t *testing.T) {
			useKernel(t, kern)
			for h := range heads {
				q := make([]float32, seq*hd)
				kk := make([]float32, seq*hd)
				v := make([]float32, seq*hd)
				for i := range seq {
					copy(q[i*hd:], qkv[i*3*hidden+h*hd:][:hd])
					copy(kk[i*hd:], qkv[i*3*hidden+hidden+h*hd:][:hd])
					copy(v[i*hd:], qkv[i*3*hidden+2*hidden+h*hd:][:hd])
				}
				scores := make([]float32, seq*seq)
				MatMulTStrided(scores, seq, qkv[h*hd:], 3*hidden, qkv[hidden+h*hd:], 3*hidden, seq, seq, hd)
				newReference(q, kk, nil, seq, seq, hd).check(t, "MatMulTStrided", scores, 0)
				// ctx (seq×hidden, head h's columns) = scores · v.
				ctx := make([]float32, seq*hidden)
				MatMulStrided(ctx[h*hd:], hidden, scores, seq, qkv[2*hidden+h*hd:], 3*hidden, seq, hd, seq)
				got := make([]float32, seq*hd)
				for i := range seq {
					copy(got[i*hd:], ctx[i*hidden+h*hd:][:hd])
				}
				newReference(scores, transpose(v, seq, hd), nil, seq, hd, seq).check(t, "MatMulStrided", got, 0)
			}
		})
	}
}

// TestPanics checks that mismatched lengths panic with a message naming the operand.
func TestPanics(t *testing.T) {
	cases := []struct {
		name string
		call func()
	}{
		{"a short", func() { MatMulT(make([]float32, 4), make([]float32, 3), make([]float32, 4), 2, 2, 2) }},
		{"b long", func() { MatMulT(make([]float32, 4), make([]float32, 4), make([]float32, 5), 2, 2, 2) }},
		{"c short", func() { MatMul(make([]float32, 3), make([]float32, 4), make([]float32, 4), 2, 2, 2) }},
		{"bias", func() {
			MatMulTBias(make([]float32, 4), make([]float32, 4), make([]float32, 4), make([]float32, 1), 2, 2, 2)
		}},
		{"negative", func() { MatMulT(nil, nil, nil, -1, 2, 2) }},
		{"stride", func() { MatMulTStrided(make([]float32, 4), 1, make([]float32, 4), 2, make([]float32, 4), 2, 2, 2, 2) }},
		{"strided short", func() { MatMulStrided(make([]float32, 4), 2, make([]float32, 6), 3, make([]float32, 4), 2, 2, 2, 3) }},
		{"packed a", func() { PackB(make([]float32, 4), 2, 2).MatMulT(make([]float32, 4), make([]float32, 3), 2) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				r := recover()
				if r == nil {
					t.Fatal("no panic")
				}
				t.Log(r)
			}()
			tc.call()
		})
	}
}

// TestShortKernelsExact: a product whose last row tile is computed by a
// short kernel equals, bit for bit, the one that pads that tile to the full
// kernel's rows (the sums are the same, in the same order), float32 and
// float16 panels alike, so a query's vector does not depend on its length
// modulo the tile.
func TestShortKernelsExact(t *testing.T) {
	r := rand.New(rand.NewPCG(61, 62))
	for _, kern := range append(testKernels(), f16Kernels()...) {
		if len(kern.short) == 0 {
			continue
		}
		t.Run(kern.name, func(t *testing.T) {
			padded := *kern
			padded.short = nil
			for _, m := range upTo(2*kern.mr + 1) {
				for _, n := range []int{1, kern.nr - 1, kern.nr + 3, 3 * kern.nr} {
					for _, k := range []int{1, 3, 4, 5, 384} {
						a, b, bias := randMat(r, m*k), randHalf(r, n*k), randMat(r, n)
						var got, want []float32
						for _, kk := range []*kernel{kern, &padded} {
							c := make([]float32, m*n)
							if kk.fn16 != nil {
								saved := activeF16
								activeF16 = kk
								p, err := NewPackedF16(PackF16(b, n, k), n, k)
								if err != nil {
									t.Fatal(err)
								}
								p.MatMulTBias(c, a, bias, m)
								activeF16 = saved
							} else {
								saved := active
								active = kk
								PackB(b, n, k).MatMulTBias(c, a, bias, m)
								active = saved
							}
							if got == nil {
								got = c
							} else {
								want = c
							}
						}
						for i := range want {
							if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
								t.Fatalf("m=%d n=%d k=%d: c[%d] = %g with the short kernel, %g padded", m, n, k, i, got[i], want[i])
							}
						}
					}
				}
			}
		})
	}
}
