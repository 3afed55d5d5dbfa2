package vector

import (
	"fmt"
	"math"
	"math/rand"
	"slices"
	"sync"
	"testing"

	"github.com/engram-memory/engram/internal/docset"
)

// bruteForce is Search's reference: score every live document that allow
// admits, sort them all, keep k.
func bruteForce(live map[uint32][]float32, q []float32, allow *docset.Set, k int) []Hit {
	qn, ok := Normalize(q)
	if !ok || k < 1 {
		return nil
	}
	var all []Hit
	for d, v := range live {
		if allow.Has(d) {
			n, _ := Normalize(v)
			all = append(all, Hit{Doc: d, Cosine: Dot(qn, n)})
		}
	}
	slices.SortFunc(all, func(a, b Hit) int {
		if a.Cosine != b.Cosine {
			if a.Cosine > b.Cosine {
				return -1
			}
			return 1
		}
		return int(int64(a.Doc) - int64(b.Doc))
	})
	if len(all) > k {
		all = all[:k]
	}
	if len(all) == 0 {
		return nil
	}
	return all
}

// fixture builds an index of n random vectors over document numbers spread
// in 0..2n, a few duplicated to force ties, then removes about removeFrac of them.
func fixture(tb testing.TB, r *rand.Rand, n, dim int, removeFrac float64) (*Index, map[uint32][]float32) {
	tb.Helper()
	ix := New(dim)
	live := map[uint32][]float32{}
	var prev []float32
	for len(live) < n {
		d := uint32(r.Intn(2*n + 1))
		v := randVec(r, dim)
		if prev != nil && r.Intn(10) == 0 {
			v = slices.Clone(prev) // exact tie with an earlier document
		}
		if err := ix.Set(d, v); err != nil {
			tb.Fatal(err)
		}
		live[d], prev = v, v
	}
	for d := range live {
		if r.Float64() < removeFrac {
			ix.Remove(d)
			delete(live, d)
		}
	}
	return ix, live
}

func randAllow(r *rand.Rand, limit int, frac float64) *docset.Set {
	if frac < 0 {
		return nil
	}
	s := docset.New(limit)
	for d := 0; d < limit; d++ {
		if r.Float64() < frac {
			s.Add(uint32(d))
		}
	}
	return s
}

// lowerThresholds forces the parallel path onto small inputs.
func lowerThresholds(tb testing.TB, parallelFloats int) {
	tb.Helper()
	savedP := parallelMinFloats
	parallelMinFloats = parallelFloats
	tb.Cleanup(func() { parallelMinFloats = savedP })
}

// setScreening forces int8 screening on every full scan, or off.
func setScreening(tb testing.TB, on bool) {
	tb.Helper()
	savedF, savedK, savedA := quantMinFloats, quantMaxKDivisor, screenAlways
	if on {
		quantMinFloats, quantMaxKDivisor, screenAlways = 0, 1, true
	} else {
		quantMinFloats = math.MaxInt
	}
	tb.Cleanup(func() { quantMinFloats, quantMaxKDivisor, screenAlways = savedF, savedK, savedA })
}

func TestSearchMatchesBruteForce(t *testing.T) {
	cases := []struct {
		name       string
		n, dim, k  int
		allowFrac  float64 // < 0: nil allow
		removeFrac float64
		parFloats  int // parallel threshold override; 0 keeps the default
	}{
		{"tiny all", 5, 3, 3, -1, 0, 0},
		{"k beyond index", 20, 7, 100, -1, 0, 0},
		{"k beyond allowed", 200, 16, 50, 0.05, 0, 0},
		{"k one", 300, 33, 1, -1, 0, 0},
		{"odd dim with removals", 500, 67, 10, -1, 0.3, 0},
		{"sparse allow walks list", 2000, 24, 10, 0.01, 0.1, 0},
		{"dense allow scans rows", 2000, 24, 10, 0.6, 0.1, 0},
		{"allow near threshold", 2000, 8, 25, 0.12, 0, 0},
		{"allow everything", 1000, 12, 10, 1.0, 0, 0},
		{"allow nothing", 1000, 12, 10, 0, 0, 0},
		{"parallel scan", 3000, 32, 20, -1, 0.2, 64},
		{"parallel scan filtered", 3000, 32, 20, 0.5, 0.2, 64},
		{"parallel list walk", 3000, 32, 20, 0.05, 0.2, 64},
		{"parallel k beyond index", 100, 5, 500, -1, 0, 1},
		{"all removed", 50, 4, 5, -1, 1.0, 0},
	}
	for _, kn := range kernels() {
		for _, screen := range []bool{false, true} {
			for _, c := range cases {
				t.Run(fmt.Sprintf("%s/screen=%v/%s", kn.name, screen, c.name), func(t *testing.T) {
					useKernel(t, kn.name)
					setScreening(t, screen)
					if c.parFloats > 0 {
						lowerThresholds(t, c.parFloats)
					}
					r := rand.New(rand.NewSource(int64(c.n*131 + c.dim)))
					ix, live := fixture(t, r, c.n, c.dim, c.removeFrac)
					for trial := 0; trial < 8; trial++ {
						allow := randAllow(r, 2*c.n+1, c.allowFrac)
						q := randVec(r, c.dim)
						if trial == 0 && len(live) > 0 { // a query equal to a stored vector
							for _, v := range live {
								q = slices.Clone(v)
								break
							}
						}
						got := ix.Search(q, allow, c.k)
						want := bruteForce(live, q, allow, c.k)
						if !slices.Equal(got, want) {
							t.Fatalf("trial %d:\n got %v\nwant %v", trial, got, want)
						}
					}
				})
			}
		}
	}
}

func TestSearchDegenerate(t *testing.T) {
	ix := New(3)
	_ = ix.Set(4, []float32{1, 0, 0})
	_ = ix.Set(2, []float32{1, 0, 0})
	_ = ix.Set(9, []float32{0, 1, 0})
	outside := docset.New(100)
	outside.Add(50)
	cases := []struct {
		name  string
		ix    *Index
		q     []float32
		allow *docset.Set
		k     int
		want  []Hit
	}{
		{"k zero", ix, []float32{1, 0, 0}, nil, 0, nil},
		{"k negative", ix, []float32{1, 0, 0}, nil, -1, nil},
		{"wrong dim", ix, []float32{1, 0}, nil, 3, nil},
		{"zero query", ix, []float32{0, 0, 0}, nil, 3, nil},
		{"empty index", New(3), []float32{1, 0, 0}, nil, 3, nil},
		{"empty allow", ix, []float32{1, 0, 0}, docset.New(10), 3, nil},
		{"allow only absent docs", ix, []float32{1, 0, 0}, outside, 3, nil},
		{"unnormalised query, ties by doc", ix, []float32{5, 0, 0}, nil, 3,
			[]Hit{{2, 1}, {4, 1}, {9, 0}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.ix.Search(c.q, c.allow, c.k); !slices.Equal(got, c.want) {
				t.Fatalf("got %v, want %v", got, c.want)
			}
		})
	}
}

// TestSearchConcurrent runs many readers at once; run with -race.
func TestSearchConcurrent(t *testing.T) {
	lowerThresholds(t, 64)
	r := rand.New(rand.NewSource(11))
	ix, live := fixture(t, r, 1500, 20, 0.1)
	qs := make([][]float32, 16)
	for i := range qs {
		qs[i] = randVec(r, 20)
	}
	allow := randAllow(r, 3001, 0.3)
	var wg sync.WaitGroup
	errs := make(chan error, len(qs))
	for i, q := range qs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := allow
			if i%2 == 0 {
				a = nil
			}
			if got, want := ix.Search(q, a, 15), bruteForce(live, q, a, 15); !slices.Equal(got, want) {
				errs <- fmt.Errorf("query %d: got %v, want %v", i, got, want)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
