package linalg

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

// f16BF16Pair is a random n×k weight in float16 panels, multiplied in
// place in bf16, and the reference: PackBF16 of the decoded weight.
func f16BF16Pair(t *testing.T, r *rand.Rand, n, k int) (*PackedF16BF16, *PackedBF16) {
	t.Helper()
	data := PackF16(randMat(r, n*k), n, k)
	q, err := NewPackedF16BF16(data, n, k)
	if err != nil {
		t.Fatal(err)
	}
	b, err := UnpackF16(data, n, k)
	if err != nil {
		t.Fatal(err)
	}
	return q, PackBF16(b, n, k)
}

// TestF16BF16Exact: a product over float16 panels in bf16 is bit for bit
// that of PackBF16 over the decoded weight, for every tile remainder, widths
// that end inside a float16 panel and a bf16 block, odd k, with and without
// bias, serial and parallel.
func TestF16BF16Exact(t *testing.T) {
	if !HasBF16() {
		t.Skip("skipped: this CPU has no AVX512_BF16")
	}
	r := rand.New(rand.NewPCG(41, 42))
	mr := activeBF16.mr
	for _, par := range []bool{false, true} {
		if par {
			forceParallel(t)
		}
		for _, m := range append(edges(mr), 12, 40) {
			for _, n := range []int{1, 15, 16, 17, 47, 48, 49, 100, 384} {
				for _, k := range []int{1, 2, 3, 7, 8, 33, 384, 385} {
					q, ref := f16BF16Pair(t, r, n, k)
					a, bias := randMat(r, m*k), randMat(r, n)
					got, want := make([]float32, m*n), make([]float32, m*n)
					for _, withBias := range []bool{false, true} {
						if withBias {
							q.MatMulTBias(got, a, bias, m)
							ref.MatMulTBias(want, a, bias, m)
						} else {
							q.MatMulT(got, a, m)
							ref.MatMulT(want, a, m)
						}
						for i := range got {
							if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
								t.Fatalf("parallel=%t m=%d n=%d k=%d bias=%t: c[%d] = %g, PackBF16 %g", par, m, n, k, withBias, i, got[i], want[i])
							}
						}
					}
				}
			}
		}
	}
}

// TestF16PairsBF16 checks the conversion of float16 row pairs to the bf16
// kernels' B layout against toBF16, over values exact in float16 (zeros,
// subnormals, the largest) and random ones, at two strides.
func TestF16PairsBF16(t *testing.T) {
	if !HasBF16() && !f16PairsPortable {
		t.Skip("skipped: this CPU has no AVX512_BF16")
	}
	r := rand.New(rand.NewPCG(43, 44))
	const pairs = 9
	src := make([]uint16, 32*pairs)
	for i := range src {
		src[i] = uint16(r.Uint32())
		if src[i]&0x7c00 == 0x7c00 { // Inf and NaN: the weights hold neither
			src[i] &^= 0x4000
		}
	}
	src[0], src[1], src[2], src[3] = 0, 0x8000, 0x0001, 0x7bff
	for _, stride := range []int{64, 192} {
		dst := make([]uint16, stride/2*pairs)
		f16PairsBF16(&dst[0], &src[0], pairs, stride)
		for p := range pairs {
			for j := range 16 {
				lo, hi := dst[p*stride/2+2*j], dst[p*stride/2+2*j+1]
				if want := toBF16(halfToFloat(src[32*p+j])); lo != want {
					t.Fatalf("stride %d pair %d column %d: low %#04x, want %#04x", stride, p, j, lo, want)
				}
				if want := toBF16(halfToFloat(src[32*p+16+j])); hi != want {
					t.Fatalf("stride %d pair %d column %d: high %#04x, want %#04x", stride, p, j, hi, want)
				}
			}
		}
	}
}

// TestF16BF16Concurrent multiplies by one weight from many goroutines at
// once (each converting blocks into its own scratch), parked and held,
// many rounds, for -race: every product is bit for bit the serial one.
func TestF16BF16Concurrent(t *testing.T) {
	if !HasBF16() {
		t.Skip("skipped: this CPU has no AVX512_BF16")
	}
	const m, n, k, goroutines = 13, 100, 45, 8
	r := rand.New(rand.NewPCG(45, 46))
	q, err := NewPackedF16BF16(PackF16(randMat(r, n*k), n, k), n, k)
	if err != nil {
		t.Fatal(err)
	}
	bias := randMat(r, n)
	as := make([][]float32, goroutines)
	serial := make([][]float32, goroutines)
	prev := SetMaxThreads(1)
	for g := range as {
		as[g], serial[g] = randMat(r, m*k), make([]float32, m*n)
		q.MatMulTBias(serial[g], as[g], bias, m)
	}
	SetMaxThreads(prev)
	forceParallel(t)
	for _, held := range []bool{false, true} {
		var wg sync.WaitGroup
		errs := make(chan string, goroutines)
		for g := range goroutines {
			wg.Go(func() {
				c := make([]float32, m*n)
				for round := range 30 {
					release := func() {}
					if held {
						release = Hold()
					}
					q.MatMulTBias(c, as[g], bias, m)
					release()
					for i := range c {
						if math.Float32bits(c[i]) != math.Float32bits(serial[g][i]) {
							errs <- fmt.Sprintf("held=%t goroutine %d round %d: c[%d] = %g, serially %g", held, g, round, i, c[i], serial[g][i])
							return
						}
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Fatal(e)
		}
	}
}

// TestF16BF16Pack: Pack's packed weight is PackBF16's of the decoded
// weight, value for value, for widths inside and past a block, odd k.
func TestF16BF16Pack(t *testing.T) {
	if !HasBF16() {
		t.Skip("skipped: this CPU has no AVX512_BF16")
	}
	r := rand.New(rand.NewPCG(47, 48))
	for _, n := range []int{1, 16, 47, 48, 49, 100, 384} {
		for _, k := range []int{1, 2, 7, 384, 385} {
			q, ref := f16BF16Pair(t, r, n, k)
			if got, want := q.Pack(), ref; !slices.Equal(got.data, want.data) || got.kp != want.kp {
				t.Fatalf("n=%d k=%d: packed differently from PackBF16", n, k)
			}
		}
	}
}
