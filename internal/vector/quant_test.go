package vector

import (
	"encoding/binary"
	"math"
	"math/rand"
	"slices"
	"testing"
)

func TestDotInt8MatchesNaive(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	lengths := []int{100, 511, 512, 513, 1024}
	for n := 0; n <= 67; n++ {
		lengths = append(lengths, n)
	}
	for _, kn := range kernels() {
		t.Run(kn.name, func(t *testing.T) {
			useKernel(t, kn.name)
			for _, n := range lengths {
				for trial := 0; trial < 10; trial++ {
					q, c := make([]int16, n), make([]int8, n+trial) // c may be longer
					var want int64
					for i := range c {
						c[i] = int8(r.Intn(256) - 128)
					}
					for i := range q {
						q[i] = int16(r.Intn(255) - 127)
						if trial == 0 { // extremes
							q[i], c[i] = -127, -128
						}
						want += int64(q[i]) * int64(c[i])
					}
					if got := dotInt8(q, c); int64(got) != want {
						t.Fatalf("n=%d trial %d: got %d, want %d", n, trial, got, want)
					}
				}
			}
		})
	}
}

func TestQuantizeBound(t *testing.T) {
	r := rand.New(rand.NewSource(9))
	cases := []struct {
		name string
		v    []float32
	}{
		{"zero", make([]float32, 8)},
		{"one spike", []float32{0, 0, 1, 0}},
		{"spike and dust", []float32{1, 1e-7, -1e-7, 3e-3}},
		{"random 512", randVec(r, 512)},
		{"random 3", randVec(r, 3)},
		{"constant", []float32{0.5, 0.5, 0.5, 0.5}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			codes := make([]int8, len(c.v))
			scale, resid := quantizeInto(codes, c.v)
			var ss float64
			for i, x := range c.v {
				if codes[i] < -127 {
					t.Fatalf("code %d out of range", codes[i])
				}
				e := float64(x) - float64(scale)*float64(codes[i])
				ss += e * e
			}
			if math.Sqrt(ss) > float64(resid) {
				t.Fatalf("residual %g above bound %g", math.Sqrt(ss), resid)
			}
			// The residual's codes: in range, the largest at full scale
			// (the scales come from the largest magnitude), and within
			// their own bound.
			fine := make([]int8, len(c.v))
			fscale, fresid := fineInto(fine, c.v, codes, scale)
			var ss2 float64
			full := [2]bool{}
			for i, x := range c.v {
				if codes[i] < -127 || fine[i] < -127 {
					t.Fatalf("codes %d, %d out of range", codes[i], fine[i])
				}
				full[0] = full[0] || codes[i] == 127 || codes[i] == -127
				full[1] = full[1] || fine[i] == 127 || fine[i] == -127
				e := float64(x) - float64(scale)*float64(codes[i]) - float64(fscale)*float64(fine[i])
				ss2 += e * e
			}
			if math.Sqrt(ss2) > float64(fresid) || fresid > resid {
				t.Fatalf("refined residual %g, bound %g (first %g)", math.Sqrt(ss2), fresid, resid)
			}
			if full[0] != (scale != 0) || full[1] != (fscale != 0) {
				t.Fatalf("no code at ±127 with scales %g, %g", scale, fscale)
			}
		})
	}
}

// TestScreeningHardCases checks the screened search on data built to make
// the int8 bound work hard: near-duplicates, spiky vectors and exact ties.
func TestScreeningHardCases(t *testing.T) {
	r := rand.New(rand.NewSource(13))
	gens := []struct {
		name string
		gen  func(i int) []float32
	}{
		{"near duplicates", func(int) []float32 {
			v := make([]float32, 64)
			for j := range v {
				v[j] = 1 + float32(r.NormFloat64())*1e-4
			}
			return v
		}},
		{"spikes", func(i int) []float32 {
			v := make([]float32, 40)
			v[i%40] = 1
			for j := range v {
				v[j] += float32(r.NormFloat64()) * 1e-3
			}
			return v
		}},
		{"many exact ties", func(i int) []float32 {
			v := make([]float32, 16)
			v[i%3] = 1
			return v
		}},
	}
	for _, kn := range kernels() {
		for _, g := range gens {
			t.Run(kn.name+"/"+g.name, func(t *testing.T) {
				useKernel(t, kn.name)
				setScreening(t, true)
				lowerThresholds(t, 256)
				live := map[uint32][]float32{}
				dim := len(g.gen(0))
				ix := New(dim)
				for i := range 400 {
					v := g.gen(i)
					if err := ix.Set(uint32(i), v); err != nil {
						t.Fatal(err)
					}
					live[uint32(i)] = v
				}
				for trial, k := range []int{1, 5, 50, 399, 400} {
					q := g.gen(trial * 7)
					got, want := ix.Search(q, nil, k), bruteForce(live, q, nil, k)
					if !slices.Equal(got, want) {
						t.Fatalf("k=%d:\n got %v\nwant %v", k, got, want)
					}
				}
			})
		}
	}
}

// FuzzSearchScreened compares the screened search with brute force on
// arbitrary finite vectors: the first byte picks the dimension, the rest are
// float32 components, one vector after another; the first vector is the query.
func FuzzSearchScreened(f *testing.F) {
	f.Add([]byte{3, 0, 0, 128, 63, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 128, 63, 0, 0, 0, 64, 0, 0, 0, 0})
	f.Add(make([]byte, 200))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		dim := int(data[0]%8) + 1
		data = data[1:]
		var vecs [][]float32
		for len(data) >= 4*dim {
			v := make([]float32, dim)
			for i := range v {
				v[i] = finite(binary.LittleEndian.Uint32(data[4*i:]))
			}
			vecs = append(vecs, v)
			data = data[4*dim:]
		}
		if len(vecs) < 2 {
			return
		}
		setScreening(t, true)
		ix := New(dim)
		live := map[uint32][]float32{}
		for i, v := range vecs[1:] {
			if ix.Set(uint32(i), v) == nil {
				live[uint32(i)] = v
			}
		}
		for _, k := range []int{1, 3, len(vecs)} {
			got, want := ix.Search(vecs[0], nil, k), bruteForce(live, vecs[0], nil, k)
			if !slices.Equal(got, want) {
				t.Fatalf("dim %d k %d:\n got %v\nwant %v", dim, k, got, want)
			}
		}
	})
}

// BenchmarkQuantize is a row's two int8 code vectors (quantizeInto, then
// fineInto on what is left), the part of Prepare besides the sketch.
func BenchmarkQuantize(b *testing.B) {
	v, _ := Normalize(benchQuery(512))
	c, f := make([]int8, 512), make([]int8, 512)
	for b.Loop() {
		scale, _ := quantizeInto(c, v)
		fineInto(f, v, c, scale)
	}
}
