package linalg

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// randHalf returns n values exactly representable in float16, about N(0, 1).
func randHalf(r *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = halfToFloat(floatToHalf(float32(r.NormFloat64())))
	}
	return s
}

// f16Twin is the float32 kernel whose sums a float16 kernel must reproduce
// bit for bit: the same tile and blocking.
func f16Twin(t *testing.T, k16 *kernel) *kernel {
	t.Helper()
	for _, k := range kernels() {
		if k.fn != nil && k.mr == k16.mr && k.nr == k16.nr && k.kc == k16.kc && k.mc == k16.mc {
			return k
		}
	}
	t.Fatalf("no float32 twin of %s", k16.name)
	return nil
}

// TestF16Exact checks every float16-panel kernel bit for bit against PackB
// over the decoded weight with its float32 twin, and against the float64
// product, at every tile remainder, serial and parallel, with small cache
// blocks too; the fused kernels (AVX-512, for k a multiple of 32) likewise
// against the FMA kernel; and that PackF16 and UnpackF16 round-trip.
func TestF16Exact(t *testing.T) {
	ks := f16Kernels()
	if len(ks) == 0 {
		t.Skip("this CPU has no float16 kernel; bert's tests cover the decoding fallback")
	}
	type run struct {
		name  string
		k16   *kernel
		fused *qKernel
		kc    int
	}
	var runs []run
	for _, k16 := range ks {
		runs = append(runs, run{k16.name, k16, nil, k16.kc}, run{k16.name, k16, nil, 5})
	}
	for _, q := range qKernels() {
		runs = append(runs, run{q.name, ks[0], q, q.kc}, run{q.name, ks[0], q, 64})
	}
	for _, c := range runs {
		t.Run(fmt.Sprintf("%s/kc=%d", c.name, c.kc), func(t *testing.T) {
			k32 := *f16Twin(t, c.k16)
			kf := *c.k16
			k32.kc, kf.kc = c.kc, c.kc
			useKernel(t, &k32)
			saved, savedQ := activeF16, activeQ
			activeF16, activeQ = &kf, nil
			mr := kf.mr
			if c.fused != nil {
				q := *c.fused
				q.kc = c.kc
				activeQ, mr = &q, q.mr
			}
			t.Cleanup(func() { activeF16, activeQ = saved, savedQ })
			r := rand.New(rand.NewPCG(51, 52))
			for _, par := range []bool{false, true} {
				if par {
					forceParallel(t)
				}
				for _, m := range edges(mr) {
					for _, n := range edges(F16Panel) {
						for _, k := range []int{1, 2, 3, 5, 8, 9, 32, 33, 64, 384} {
							f16Case(t, r, m, n, k)
						}
					}
				}
			}
		})
	}
}

func f16Case(t *testing.T, r *rand.Rand, m, n, k int) {
	t.Helper()
	const guard = 4242
	a, b, bias := randMat(r, m*k), randHalf(r, n*k), randMat(r, n)
	data := PackF16(b, n, k)
	back, err := UnpackF16(data, n, k)
	if err != nil {
		t.Fatal(err)
	}
	for i := range b {
		if back[i] != b[i] {
			t.Fatalf("n=%d k=%d: UnpackF16(PackF16(b))[%d] = %g, want %g", n, k, i, back[i], b[i])
		}
	}
	p, err := NewPackedF16(data, n, k)
	if err != nil {
		t.Fatal(err)
	}
	q := PackB(b, n, k)
	for _, withBias := range []bool{false, true} {
		got, want := make([]float32, m*n+8), make([]float32, m*n)
		for i := m * n; i < len(got); i++ {
			got[i] = guard
		}
		c := got[: m*n : m*n]
		var ref *reference
		if withBias {
			p.MatMulTBias(c, exact(a), exact(bias), m)
			q.MatMulTBias(want, a, bias, m)
			ref = newReference(a, b, bias, m, n, k)
		} else {
			p.MatMulT(c, exact(a), m)
			q.MatMulT(want, a, m)
			ref = newReference(a, b, nil, m, n, k)
		}
		ref.check(t, fmt.Sprintf("PackedF16 bias=%v", withBias), got, guard)
		for i := range want {
			if math.Float32bits(c[i]) != math.Float32bits(want[i]) {
				t.Fatalf("m=%d n=%d k=%d bias=%v: c[%d] = %g, PackB gives %g", m, n, k, withBias, i, c[i], want[i])
			}
		}
	}
}

// TestF16Errors: wrong lengths and shapes are refused, not read past.
func TestF16Errors(t *testing.T) {
	for _, c := range []struct {
		name string
		len  int
		n, k int
	}{
		{"short", F16PanelLen(17, 3) - 1, 17, 3},
		{"long", F16PanelLen(16, 3) + 1, 16, 3},
		{"unpadded", 17 * 3, 17, 3},
		{"zero n", 0, 0, 3},
		{"negative k", 16, 1, -1},
	} {
		if _, err := UnpackF16(make([]uint16, c.len), c.n, c.k); err == nil {
			t.Errorf("%s: UnpackF16 accepted %d values for %d×%d", c.name, c.len, c.n, c.k)
		}
		if _, err := NewPackedF16(make([]uint16, c.len), c.n, c.k); err == nil {
			t.Errorf("%s: NewPackedF16 accepted %d values for %d×%d", c.name, c.len, c.n, c.k)
		}
	}
}

// TestHalfConversions: round trip of every float16 bit pattern (NaNs stay
// NaN), and ties to even.
func TestHalfConversions(t *testing.T) {
	for h := range 1 << 16 {
		f := halfToFloat(uint16(h))
		back := floatToHalf(f)
		if f != f {
			if back&0x7c00 != 0x7c00 || back&0x3ff == 0 {
				t.Fatalf("NaN %#04x came back as %#04x", h, back)
			}
			continue
		}
		if back != uint16(h) {
			t.Fatalf("%#04x → %g → %#04x", h, f, back)
		}
	}
	if got := floatToHalf(1 + 0x1p-11); got != 0x3c00 {
		t.Errorf("1+2⁻¹¹ (a tie) = %#04x, want 0x3c00 (even)", got)
	}
	if got := floatToHalf(1 + 3*0x1p-11); got != 0x3c02 {
		t.Errorf("1+3·2⁻¹¹ (a tie) = %#04x, want 0x3c02 (even)", got)
	}
}
