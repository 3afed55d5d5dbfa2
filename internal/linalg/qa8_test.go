package linalg

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

// useQA8 makes new int8-activation products use kernel set k.
func useQA8(tb testing.TB, k *qa8Kernel) {
	tb.Helper()
	saved := activeQA8
	activeQA8 = k
	tb.Cleanup(func() { activeQA8 = saved })
}

func qa8Sets() []*qa8Kernel { return append([]*qa8Kernel{qa8Generic}, qa8Kernels()...) }

// qa8Quantize is the test's own quantisation of a block of A: d =
// max|a|/127, q = round-half-even(a·(1/d)); NaN for a block with a NaN or
// an infinity, zero below 2⁻¹²⁶.
func qa8Quantize(blk []float32) (q []int32, d float32) {
	q = make([]int32, len(blk))
	for _, v := range blk {
		d = max(d, abs(v))
	}
	d /= 127
	if math.IsNaN(float64(d)) || math.IsInf(float64(d), 0) {
		return q, float32(math.NaN())
	}
	if d < 0x1p-126 {
		return q, 0
	}
	for p, v := range blk {
		q[p] = int32(math.RoundToEven(float64(v * (1 / d))))
	}
	return q, d
}

// qa8Reference is the int8-activation product by its definition, value by
// value: the weight's blocks as GGML stores them (q row-major), A's blocks
// quantised by qa8Quantize, each block's integer dot product scaled by
// float32(dw·da) and added in block order, then the bias. It also returns
// each result's error bound against the float64 product of the decoded
// weight and A: Σ|w|·da/2 for the rounding of A, plus float32's rounding.
func qa8Reference(f QFormat, q string, a, bias []float32, m, n, k int) (c, bound []float32) {
	bs, blocks := f.BlockSize(), k/QBlockLen
	c, bound = make([]float32, m*n), make([]float32, m*n)
	for i := range m {
		qa := make([][]int32, blocks)
		da := make([]float32, blocks)
		for b := range blocks {
			qa[b], da[b] = qa8Quantize(a[i*k+b*QBlockLen : i*k+(b+1)*QBlockLen])
		}
		for j := range n {
			var acc float32
			var e float64
			for b := range blocks {
				blk := q[(j*blocks+b)*bs : (j*blocks+b+1)*bs]
				dw := halfToFloat(uint16(blk[0]) | uint16(blk[1])<<8)
				var dot int32
				for p := range QBlockLen {
					var w int32
					switch {
					case f == Q8_0:
						w = int32(int8(blk[2+p]))
					case p < 16:
						w = int32(blk[2+p]&0x0f) - 8
					default:
						w = int32(blk[2+p-16]>>4) - 8
					}
					dot += qa[b][p] * w
					e += math.Abs(float64(w)*float64(dw)) * (float64(da[b])/2 + math.Abs(float64(a[i*k+b*QBlockLen+p]))*1e-6)
				}
				acc += float32(float32(dot) * float32(dw*da[b]))
			}
			if bias != nil {
				acc += bias[j]
				e += math.Abs(float64(bias[j])) * 1e-6
			}
			c[i*n+j], bound[i*n+j] = acc, float32(e)+1e-30
		}
	}
	return c, bound
}

// TestQA8Exact holds every int8-activation kernel set to qa8Reference bit
// for bit, in both formats, at every tile height and panel remainder,
// serial and split across workers, with and without bias, A quantised by
// the assembly (where there is one) and by Go; and the result to the
// float64 product within the rounding of A.
func TestQA8Exact(t *testing.T) {
	quants := []bool{false}
	if useQA8Quant {
		quants = append(quants, true)
	}
	for _, ks := range qa8Sets() {
		for _, asm := range quants {
			t.Run(fmt.Sprintf("%s/asm-quantiser=%v", ks.name, asm), func(t *testing.T) {
				saved := useQA8Quant
				useQA8Quant = asm
				t.Cleanup(func() { useQA8Quant = saved })
				qa8ExactCases(t, ks)
			})
		}
	}
}

// qa8ExactCases is TestQA8Exact's cases for kernel set ks.
func qa8ExactCases(t *testing.T, ks *qa8Kernel) {
	useQA8(t, ks)
	r := rand.New(rand.NewPCG(71, 72))
	for _, par := range []bool{false, true} {
		if par {
			forceParallel(t)
		}
		ms := []int{1, 2, 3, 15, 16, 17}
		if !raceEnabled {
			ms = append(ms, 14, 33, 40, 97)
		}
		for _, f := range qFormats {
			for _, m := range ms {
				for _, n := range edges(16) {
					for _, k := range []int{32, 64, 384} {
						qa8Case(t, r, f, m, n, k)
					}
				}
			}
		}
	}
}

func qa8Case(t *testing.T, r *rand.Rand, f QFormat, m, n, k int) {
	t.Helper()
	const guard = 4242
	q := randQ(r, f, n, k)
	a, bias := randMat(r, m*k), randMat(r, n)
	// Outliers, a zero block and a tiny one, as BERT's activations have.
	for i := range m {
		a[i*k+r.IntN(k)] *= 300
		switch r.IntN(4) {
		case 0:
			clear(a[i*k : i*k+QBlockLen])
		case 1:
			for p := range QBlockLen {
				a[i*k+p] *= 1e-38
			}
		}
	}
	p, err := NewPackedQ(f, q, n, k)
	if err != nil {
		t.Fatal(err)
	}
	l := p.Int8Activations()
	if l.N() != n || l.K() != k {
		t.Fatalf("Int8Activations is %d×%d, want %d×%d", l.N(), l.K(), n, k)
	}
	for _, withBias := range []bool{false, true} {
		var bs []float32
		if withBias {
			bs = bias
		}
		want, bound := qa8Reference(f, q, a, bs, m, n, k)
		got := make([]float32, m*n+8)
		for i := m * n; i < len(got); i++ {
			got[i] = guard
		}
		c := got[: m*n : m*n]
		if withBias {
			l.MatMulTBias(c, a, bias, m)
		} else {
			l.MatMulT(c, a, m)
		}
		for i, v := range got[m*n:] {
			if v != guard {
				t.Fatalf("%v m=%d n=%d k=%d: wrote past c at %d", f, m, n, k, m*n+i)
			}
		}
		for i := range want {
			if math.Float32bits(c[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%v m=%d n=%d k=%d bias=%v: c[%d] = %g, reference %g", f, m, n, k, withBias, i, c[i], want[i])
			}
		}
		exactB := qReference(f, q, n, k)
		for i := range m {
			for j := range n {
				s := float64(0)
				for x := range k {
					s += float64(a[i*k+x]) * float64(exactB[j*k+x])
				}
				if withBias {
					s += float64(bias[j])
				}
				if d := math.Abs(float64(c[i*n+j]) - s); !(d <= float64(bound[i*n+j])) {
					t.Fatalf("%v m=%d n=%d k=%d: c[%d,%d] = %g, float64 product %g: error %g over the bound %g", f, m, n, k, i, j, c[i*n+j], s, d, bound[i*n+j])
				}
			}
		}
	}
}

// TestQA8NonFinite: a block of A with a NaN or an infinity makes its row's
// products NaN, not a wrapped integer; the other rows are unchanged.
func TestQA8NonFinite(t *testing.T) {
	for _, ks := range qa8Sets() {
		t.Run(ks.name, func(t *testing.T) {
			useQA8(t, ks)
			r := rand.New(rand.NewPCG(73, 74))
			const m, n, k = 3, 32, 64
			q := randQ(r, Q8_0, n, k)
			p, err := NewPackedQ(Q8_0, q, n, k)
			if err != nil {
				t.Fatal(err)
			}
			for _, bad := range []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))} {
				a := randMat(r, m*k)
				a[k+40] = bad
				c := make([]float32, m*n)
				p.Int8Activations().MatMulT(c, a, m)
				want, _ := qa8Reference(Q8_0, q, a, nil, m, n, k)
				for i, v := range c {
					if math.Float32bits(v) != math.Float32bits(want[i]) && !(isNaN32(v) && isNaN32(want[i])) {
						t.Fatalf("%g: c[%d] = %g, reference %g", bad, i, v, want[i])
					}
					if row := i / n; (row == 1) != isNaN32(v) {
						t.Fatalf("%g: c[%d] = %g (row %d)", bad, i, v, row)
					}
				}
			}
		})
	}
}

// TestQA8Concurrent runs int8-activation products of one weight from many
// goroutines, each split across the workers, against the serial result
// (-race).
func TestQA8Concurrent(t *testing.T) {
	forceParallel(t)
	r := rand.New(rand.NewPCG(75, 76))
	const m, n, k = 37, 70, 96
	for _, f := range qFormats {
		p, err := NewPackedQ(f, randQ(r, f, n, k), n, k)
		if err != nil {
			t.Fatal(err)
		}
		l := p.Int8Activations()
		a, bias := randMat(r, m*k), randMat(r, n)
		want := make([]float32, m*n)
		l.MatMulTBias(want, a, bias, m)
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Go(func() {
				c := make([]float32, m*n)
				for round := range 40 {
					rows := 1 + (g+round)%m
					l.MatMulTBias(c[:rows*n], a[:rows*k], bias, rows)
					if !slices.Equal(c[:rows*n], want[:rows*n]) {
						t.Errorf("%v goroutine %d round %d: %d rows differ from the serial product", f, g, round, rows)
						return
					}
				}
			})
		}
		wg.Wait()
	}
}

// FuzzQA8: any weight bytes and any activation bits (NaN, infinities,
// subnormals) give the int8-activation product of the portable kernel,
// bit for bit (NaN for NaN), in either format.
func FuzzQA8(f *testing.F) {
	f.Add([]byte("\x00\x3c0123456789abcdef"), []byte("\x00\x00\x80\x7f\x00\x00\xc0\x7f"), uint8(1), false)
	f.Add(make([]byte, 3*2*34), []byte{1, 2, 3}, uint8(3), true)
	f.Fuzz(func(t *testing.T, raw, act []byte, nb uint8, q8 bool) {
		qf := Q4_0
		if q8 {
			qf = Q8_0
		}
		bs := qf.BlockSize()
		n := int(nb%40) + 1
		k := QBlockLen * (1 + len(raw)/(n*bs)%4)
		q := make([]byte, n*k/QBlockLen*bs)
		copy(q, raw)
		m := 1 + len(act)%19
		a := make([]float32, m*k)
		r := rand.New(rand.NewPCG(uint64(len(act)), 81))
		for i := range a {
			if 4*i+4 <= len(act) {
				a[i] = math.Float32frombits(binary.LittleEndian.Uint32(act[4*i:]))
			} else {
				a[i] = float32(r.NormFloat64())
			}
		}
		p, err := NewPackedQ(qf, string(q), n, k)
		if err != nil {
			t.Fatal(err)
		}
		got, want := make([]float32, m*n), make([]float32, m*n)
		p.Int8Activations().MatMulT(got, a, m)
		(&QA8{PackedQ: p, kern: qa8Generic}).MatMulT(want, a, m)
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) && !(isNaN32(got[i]) && isNaN32(want[i])) {
				t.Fatalf("%v n=%d k=%d m=%d: c[%d] = %g, portable kernel %g", qf, n, k, m, i, got[i], want[i])
			}
		}
	})
}
