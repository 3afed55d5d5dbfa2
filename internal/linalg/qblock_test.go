package linalg

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
)

var qFormats = []QFormat{Q4_0, Q8_0}

// randQ returns n rows of k values (k a multiple of 32) as row-major blocks
// of format f: scales about N(0, 1)/8 (a few of them zero, subnormal or
// negative), integers uniform.
func randQ(r *rand.Rand, f QFormat, n, k int) string {
	bs := f.BlockSize()
	q := make([]byte, n*k/QBlockLen*bs)
	for b := 0; b < len(q); b += bs {
		var h uint16
		switch r.IntN(20) {
		case 0:
			h = 0
		case 1:
			h = uint16(1 + r.IntN(0x3ff)) // subnormal
		default:
			h = floatToHalf(float32(r.NormFloat64() / 8))
		}
		q[b], q[b+1] = byte(h), byte(h>>8)
		for i := 2; i < bs; i++ {
			q[b+i] = byte(r.Uint32())
		}
	}
	return string(q)
}

// qReference decodes row-major blocks value by value, as GGML defines
// them: Q4_0 (q−8)·d, Q8_0 q·d.
func qReference(f QFormat, q string, n, k int) []float32 {
	bs := f.BlockSize()
	out := make([]float32, n*k)
	for i := range n * k / QBlockLen {
		blk := q[i*bs : (i+1)*bs]
		d := float64(halfToFloat(uint16(blk[0]) | uint16(blk[1])<<8))
		o := out[i*QBlockLen : (i+1)*QBlockLen]
		for t := range 16 {
			if f == Q8_0 {
				o[t] = float32(float64(int8(blk[2+t])) * d)
				o[t+16] = float32(float64(int8(blk[18+t])) * d)
				continue
			}
			o[t] = float32(float64(int(blk[2+t]&0x0f)-8) * d)
			o[t+16] = float32(float64(int(blk[2+t]>>4)-8) * d)
		}
	}
	return out
}

// quantizeQ rounds w (n×k, k a multiple of 32) to format f as GGML does:
// per block, Q4_0 d = the value of largest magnitude / −8, Q8_0 d = the
// largest magnitude / 127.
func quantizeQ(f QFormat, w []float32, n, k int) string {
	q := make([]byte, 0, n*k/QBlockLen*f.BlockSize())
	for i := 0; i < len(w); i += QBlockLen {
		blk := w[i : i+QBlockLen]
		var big float32
		for _, v := range blk {
			if abs(v) > abs(big) {
				big = v
			}
		}
		lo, hi, off, dv := -8, 7, 8, big/-8
		if f == Q8_0 {
			lo, hi, off, dv = -127, 127, 0, abs(big)/127
		}
		h := floatToHalf(dv)
		d := halfToFloat(h)
		q = append(q, byte(h), byte(h>>8))
		code := func(v float32) byte {
			if d == 0 {
				return byte(off)
			}
			return byte(min(hi, max(lo, int(math.Round(float64(v/d))))) + off)
		}
		if f == Q8_0 {
			for _, v := range blk {
				q = append(q, code(v))
			}
			continue
		}
		for t := range 16 {
			q = append(q, code(blk[t])|code(blk[t+16])<<4)
		}
	}
	return string(q)
}

func abs(v float32) float32 { return math.Float32frombits(math.Float32bits(v) &^ (1 << 31)) }

// qPath is one way PackedQ multiplies: a fused kernel, or decoding for a
// float32 kernel; twin is the float32 kernel whose sums it must give bit for
// bit.
type qPath struct {
	name  string
	fused *qKernel
	twin  *kernel
}

func qPaths() []qPath {
	var ps []qPath
	for _, k := range testKernels() {
		ps = append(ps, qPath{"decode+" + k.name, nil, k})
	}
	for _, k := range qKernels() {
		ps = append(ps, qPath{k.name, k, fmaKernel()})
	}
	return ps
}

// useQ makes new PackedQ values use path p with cache blocks of kc (a
// multiple of 32 for a fused kernel), its twin likewise.
func useQ(t testing.TB, p qPath, kc int) {
	t.Helper()
	twin := *p.twin
	twin.kc = kc
	useKernel(t, &twin)
	saved := activeQ
	t.Cleanup(func() { activeQ = saved })
	activeQ = nil
	if p.fused != nil {
		k := *p.fused
		k.kc = kc
		activeQ = &k
	}
}

// TestQExact checks PackedQ in both formats on every path bit for bit
// against PackB over the weight decoded by qReference with the path's
// float32 twin, and against the float64 product, at every tile remainder,
// serial and parallel, with small cache blocks too (for the decoding path a
// kc block then starts inside a block); and that Unpack is qReference.
func TestQExact(t *testing.T) {
	for _, path := range qPaths() {
		for _, kc := range []int{path.twin.kc, 5, 64} {
			if path.fused != nil && kc%QBlockLen != 0 {
				continue
			}
			t.Run(fmt.Sprintf("%s/kc=%d", path.name, kc), func(t *testing.T) {
				useQ(t, path, kc)
				mr := path.twin.mr
				if path.fused != nil {
					mr = path.fused.mr
				}
				r := rand.New(rand.NewPCG(61, 62))
				for _, par := range []bool{false, true} {
					if par {
						forceParallel(t)
					}
					ms := edges(mr)
					if !raceEnabled {
						ms = append(ms, 3, 12, 40, 97, 130)
					}
					for _, f := range qFormats {
						for _, m := range ms {
							for _, n := range edges(16) {
								for _, kk := range []int{32, 64, 96, 384} {
									qCase(t, r, f, m, n, kk)
								}
							}
						}
					}
				}
			})
		}
	}
}

func qCase(t *testing.T, r *rand.Rand, f QFormat, m, n, k int) {
	t.Helper()
	const guard = 4242
	q := randQ(r, f, n, k)
	a, bias := randMat(r, m*k), randMat(r, n)
	b := qReference(f, q, n, k)
	p, err := NewPackedQ(f, q, n, k)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range p.Unpack() {
		if math.Float32bits(v) != math.Float32bits(b[i]) {
			t.Fatalf("%v n=%d k=%d: Unpack()[%d] = %g, want %g", f, n, k, i, v, b[i])
		}
	}
	if len(p.Panels()) != QPanelBytes(f, n, k) {
		t.Fatalf("%v n=%d k=%d: %d panel bytes, QPanelBytes says %d", f, n, k, len(p.Panels()), QPanelBytes(f, n, k))
	}
	inPlace, err := NewPackedQPanels(f, string(p.Panels()), n, k)
	if err != nil {
		t.Fatal(err)
	}
	want32 := PackB(b, n, k)
	for _, withBias := range []bool{false, true} {
		got, want := make([]float32, m*n+8), make([]float32, m*n)
		for i := m * n; i < len(got); i++ {
			got[i] = guard
		}
		c := got[: m*n : m*n]
		var ref *reference
		if withBias {
			p.MatMulTBias(c, exact(a), exact(bias), m)
			want32.MatMulTBias(want, a, bias, m)
			ref = newReference(a, b, bias, m, n, k)
		} else {
			p.MatMulT(c, exact(a), m)
			want32.MatMulT(want, a, m)
			ref = newReference(a, b, nil, m, n, k)
		}
		ref.check(t, fmt.Sprintf("PackedQ %v bias=%v", f, withBias), got, guard)
		again := make([]float32, m*n)
		if withBias {
			inPlace.MatMulTBias(again, a, bias, m)
		} else {
			inPlace.MatMulT(again, a, m)
		}
		if !slices.EqualFunc(again, c, func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) }) {
			t.Fatalf("%v m=%d n=%d k=%d: NewPackedQPanels' product differs from NewPackedQ's", f, m, n, k)
		}
		for i := range want {
			if math.Float32bits(c[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%v m=%d n=%d k=%d bias=%v: c[%d] = %g, PackB gives %g", f, m, n, k, withBias, i, c[i], want[i])
			}
		}
	}
}

// TestDecodeQ holds the assembly decoders to the portable ones over every
// scale class and integer, bit for bit.
func TestDecodeQ(t *testing.T) {
	r := rand.New(rand.NewPCG(63, 64))
	for _, f := range qFormats {
		for _, blocks := range []int{1, 2, 3, 12, 48} {
			src := make([]byte, blocks*f.panelBlock())
			for i := range src {
				src[i] = byte(r.Uint32())
			}
			// Every float16 class at least once: zero, subnormal, normal,
			// infinity and NaN, both signs.
			for i, h := range []uint16{0, 0x8000, 1, 0x83ff, 0x3c00, 0xbc00, 0x7bff, 0x7c00, 0xfc00, 0x7e00} {
				src[2*i], src[2*i+1] = byte(h), byte(h>>8)
			}
			want := make([]float32, blocks*QBlockLen*16)
			if f == Q4_0 {
				decodeQ4Generic(want, src, blocks)
			} else {
				decodeQ8Generic(want, src, blocks)
			}
			got := make([]float32, len(want)+1)
			got[len(want)] = 4242
			decodeQ(f, got, src)
			if got[len(want)] != 4242 {
				t.Fatalf("%v blocks=%d: decodeQ wrote past its blocks", f, blocks)
			}
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) && !(isNaN32(got[i]) && isNaN32(want[i])) {
					t.Fatalf("%v blocks=%d: value %d = %g (%#x), the portable decoder gives %g (%#x)", f, blocks, i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
				}
			}
		}
	}
}

func isNaN32(v float32) bool { return v != v }

// TestNewPackedQErrors: a format, shape or length that is not a weight's is
// an error naming them.
func TestNewPackedQErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		f    QFormat
		len  int
		n, k int
		want string
	}{
		{"k not a multiple of 32", Q4_0, 18, 1, 16, "Q4_0 weight of 1×16"},
		{"zero rows", Q8_0, 0, 0, 32, "Q8_0 weight of 0×32"},
		{"negative k", Q4_0, 18, 1, -32, "1×-32"},
		{"short", Q4_0, 35, 2, 32, "35 bytes for a 2×32 Q4_0 weight, want 36"},
		{"long", Q8_0, 69, 2, 32, "69 bytes for a 2×32 Q8_0 weight, want 68"},
		{"unknown format", QFormat(7), 18, 1, 32, "unknown block format QFormat(7)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := NewPackedQ(c.f, string(make([]byte, c.len)), c.n, c.k)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("NewPackedQ(%v, %d bytes, %d, %d): %v, want an error with %q", c.f, c.len, c.n, c.k, err, c.want)
			}
		})
	}
	for _, c := range []struct {
		name string
		f    QFormat
		len  int
		n, k int
		want string
	}{
		{"panels: k not a multiple of 32", Q8_0, 544, 1, 16, "Q8_0 weight of 1×16"},
		{"panels: short", Q4_0, 287, 1, 32, "287 bytes for 1×32 Q4_0 panels, want 288"},
		{"panels: rows past n count", Q8_0, 544, 17, 32, "544 bytes for 17×32 Q8_0 panels, want 1088"},
		{"panels: unknown format", QFormat(3), 288, 1, 32, "unknown block format QFormat(3)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := NewPackedQPanels(c.f, string(make([]byte, c.len)), c.n, c.k)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("NewPackedQPanels(%v, %d bytes, %d, %d): %v, want an error with %q", c.f, c.len, c.n, c.k, err, c.want)
			}
		})
	}
}

// TestQConcurrent runs products of one weight from many goroutines, each
// product split across the workers, against the serial result (-race).
func TestQConcurrent(t *testing.T) {
	forceParallel(t)
	r := rand.New(rand.NewPCG(65, 66))
	const m, n, k = 13, 70, 96
	for _, f := range qFormats {
		p, err := NewPackedQ(f, randQ(r, f, n, k), n, k)
		if err != nil {
			t.Fatal(err)
		}
		a, bias := randMat(r, m*k), randMat(r, n)
		want := make([]float32, m*n)
		p.MatMulTBias(want, a, bias, m)
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Go(func() {
				c := make([]float32, m*n)
				for round := range 50 {
					p.MatMulTBias(c, a, bias, m)
					for i := range c {
						if c[i] != want[i] {
							t.Errorf("%v goroutine %d round %d: c[%d] = %g, want %g", f, g, round, i, c[i], want[i])
							return
						}
					}
				}
			})
		}
		wg.Wait()
	}
}

// FuzzPackedQ: any bytes of a weight's length pack in either format, and
// their product is PackB's over qReference, bit for bit (NaN for NaN).
func FuzzPackedQ(f *testing.F) {
	f.Add([]byte("\x00\x3c0123456789abcdef"), uint8(1), uint8(1), false)
	f.Add(make([]byte, 3*2*34), uint8(3), uint8(3), true)
	f.Fuzz(func(t *testing.T, raw []byte, nb, mb uint8, q8 bool) {
		qf := Q4_0
		if q8 {
			qf = Q8_0
		}
		bs := qf.BlockSize()
		n, m := int(nb%40)+1, int(mb%20)
		k := QBlockLen * (1 + len(raw)/(n*bs)%4)
		q := make([]byte, n*k/QBlockLen*bs)
		copy(q, raw)
		p, err := NewPackedQ(qf, string(q), n, k)
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(uint64(len(raw)), 67))
		a := randMat(r, m*k)
		got, want := make([]float32, m*n), make([]float32, m*n)
		p.MatMulT(got, a, m)
		PackB(qReference(qf, string(q), n, k), n, k).MatMulT(want, a, m)
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) && !(isNaN32(got[i]) && isNaN32(want[i])) {
				t.Fatalf("%v n=%d k=%d m=%d: c[%d] = %g, PackB gives %g", qf, n, k, m, i, got[i], want[i])
			}
		}
	})
}

// BenchmarkNewPackedQ regroups one layer's worth of Q4_0 and Q8_0 rows
// (1,536 × 384) into panels: what a model whose file holds row-major
// blocks pays at load, per matrix.
func BenchmarkNewPackedQ(b *testing.B) {
	r := rand.New(rand.NewPCG(83, 84))
	const n, k = 1536, 384
	for _, f := range qFormats {
		q := randQ(r, f, n, k)
		b.Run(f.String(), func(b *testing.B) {
			b.SetBytes(int64(len(q)))
			for b.Loop() {
				if _, err := NewPackedQ(f, q, n, k); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
