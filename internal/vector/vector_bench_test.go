package vector

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/engram-memory/engram/internal/docset"
)

// benchIndexes caches one index per size: the 100k×512 one takes ~200 MB.
var benchIndexes = map[[2]int]*Index{}

func benchIndex(b *testing.B, n, dim int) *Index {
	b.Helper()
	if ix, ok := benchIndexes[[2]int{n, dim}]; ok {
		return ix
	}
	r := rand.New(rand.NewSource(1))
	ix := New(dim)
	ix.data = make([]float32, 0, n*dim)
	v := make([]float32, dim)
	for d := range n {
		for i := range v {
			v[i] = r.Float32()*2 - 1
		}
		if err := ix.Set(uint32(d), v); err != nil {
			b.Fatal(err)
		}
	}
	benchIndexes[[2]int{n, dim}] = ix
	return ix
}

func benchAllow(n int, frac float64) *docset.Set {
	if frac >= 1 {
		return nil
	}
	r := rand.New(rand.NewSource(2))
	s := docset.New(n)
	for d := range n {
		if r.Float64() < frac {
			s.Add(uint32(d))
		}
	}
	return s
}

func benchQuery(dim int) []float32 {
	r := rand.New(rand.NewSource(3))
	q := make([]float32, dim)
	for i := range q {
		q[i] = r.Float32()*2 - 1
	}
	return q
}

// BenchmarkSearch is the vector leg at the candidate-pool size (k=50).
func BenchmarkSearch(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		for _, allow := range []struct {
			name string
			frac float64
		}{{"nil", 1}, {"1%", 0.01}} {
			b.Run(fmt.Sprintf("n=%dk,dim=512/allow=%s", n/1000, allow.name), func(b *testing.B) {
				ix := benchIndex(b, n, 512)
				a, q := benchAllow(n, allow.frac), benchQuery(512)
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					ix.Search(q, a, 50)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/vector")
			})
		}
	}
}

// BenchmarkSearchSketch compares the sign-sketch scan, keeping 1500
// candidates (the policy's count at 100k for the hybrid's pool of 51),
// with the exact Search it approximates, unfiltered and with 10% allowed.
func BenchmarkSearchSketch(b *testing.B) {
	const n, dim, k, cands = 100_000, 512, 51, 1500
	ix := benchIndex(b, n, dim)
	q := benchQuery(dim)
	for _, allow := range []struct {
		name string
		frac float64
	}{{"nil", 1}, {"10%", 0.1}} {
		a := benchAllow(n, allow.frac)
		for _, path := range []struct {
			name   string
			search func() []Hit
		}{
			{"sketch", func() []Hit { return ix.SearchSketch(q, a, k, cands) }},
			{"exact", func() []Hit { return ix.Search(q, a, k) }},
		} {
			b.Run(fmt.Sprintf("n=%dk,dim=%d/allow=%s/%s", n/1000, dim, allow.name, path.name), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					path.search()
				}
			})
		}
	}
}

// BenchmarkSearchTuning measures the choices in search.go and quant.go:
// int8 screening on and off, serial against parallel scans by size, and
// walking the allowed list against scanning rows by allowed fraction.
func BenchmarkSearchTuning(b *testing.B) {
	const dim = 512
	for _, n := range []int{1000, 10_000, 100_000} {
		for _, screen := range []bool{false, true} {
			b.Run(fmt.Sprintf("n=%d,dim=%d/screen=%v", n, dim, screen), func(b *testing.B) {
				ix, q := benchIndex(b, n, dim), benchQuery(dim)
				saved := quantMinFloats
				quantMinFloats = 0
				if !screen {
					quantMinFloats = math.MaxInt
				}
				defer func() { quantMinFloats = saved }()
				b.ReportAllocs()
				for b.Loop() {
					ix.Search(q, nil, 50)
				}
			})
		}
	}
	for _, n := range []int{1000, 2500, 5000, 10_000} {
		for _, workers := range []int{1, 2} {
			b.Run(fmt.Sprintf("n=%d,dim=%d/workers=%d", n, dim, workers), func(b *testing.B) {
				ix, q := benchIndex(b, n, dim), benchQuery(dim)
				savedW, savedP, savedQ := maxWorkers, parallelMinFloats, quantMinFloats
				maxWorkers, parallelMinFloats, quantMinFloats = workers, 1, math.MaxInt
				defer func() { maxWorkers, parallelMinFloats, quantMinFloats = savedW, savedP, savedQ }()
				b.ReportAllocs()
				for b.Loop() {
					ix.Search(q, nil, 50)
				}
			})
		}
	}
	for _, frac := range []float64{0.1, 0.25, 0.5} {
		for _, list := range []bool{false, true} {
			b.Run(fmt.Sprintf("n=10k,dim=%d/allow=%g/list=%v", dim, frac, list), func(b *testing.B) {
				ix, q, a := benchIndex(b, 10_000, dim), benchQuery(dim), benchAllow(10_000, frac)
				saved, savedQ := listDivisor, quantMinFloats
				listDivisor, quantMinFloats = 1<<30, math.MaxInt // never list, never screen
				if list {
					listDivisor = 1
				}
				defer func() { listDivisor, quantMinFloats = saved, savedQ }()
				b.ReportAllocs()
				for b.Loop() {
					ix.Search(q, a, 50)
				}
			})
		}
	}
}

func BenchmarkDot(b *testing.B) {
	for _, dim := range []int{100, 384, 512} {
		for _, k := range kernels() {
			b.Run(fmt.Sprintf("dim=%d/%s", dim, k.name), func(b *testing.B) {
				x, y := benchQuery(dim), benchQuery(dim)
				b.ReportAllocs()
				var s float32
				for b.Loop() {
					s += k.fn(x, y)
				}
				_ = s
			})
		}
	}
}

// BenchmarkRefine is refine's kernel on one row's two code vectors, the
// work of each candidate a cascade bounds before reading float32 rows.
func BenchmarkRefine(b *testing.B) {
	for _, dim := range []int{384, 512} {
		for _, k := range kernels() {
			b.Run(fmt.Sprintf("dim=%d/%s", dim, k.name), func(b *testing.B) {
				useKernel(b, k.name)
				q, c, f := benchQuery(dim), make([]int8, dim), make([]int8, dim)
				for i := range c {
					c[i], f[i] = int8(i*7), int8(i*13)
				}
				var s float32
				for b.Loop() {
					sc, sf := dotF32Int8x2(q, c, f)
					s += sc + sf
				}
				_ = s
			})
		}
	}
}

// BenchmarkSearchListed is the exact scan of a filter's rows scattered over
// a matrix far larger than the caches (300k × 512: 150 MB of codes), with
// the screen's prefetch on and off. Rows a filter admits are read in no
// sequential order the hardware prefetcher follows, so each row is a DRAM
// miss unless the load starts early.
func BenchmarkSearchListed(b *testing.B) {
	const n, dim = 300_000, 512
	ix := benchIndex(b, n, dim)
	q := benchQuery(dim)
	defer func(v int) { prefetchAhead = v }(prefetchAhead)
	for _, frac := range []float64{0.05, 0.2} {
		allow := benchAllow(n, frac)
		for _, ahead := range []int{math.MaxInt32, 8} {
			name := fmt.Sprintf("allowed=%g/prefetch=%v", frac, ahead < math.MaxInt32)
			b.Run(name, func(b *testing.B) {
				prefetchAhead = ahead
				for b.Loop() {
					ix.Search(q, allow, 10)
				}
			})
		}
	}
}
