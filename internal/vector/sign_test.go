package vector

import (
	"bytes"
	"cmp"
	"math"
	"math/bits"
	"math/rand"
	"slices"
	"testing"

	"github.com/engram-memory/engram/internal/docset"
)

// The assembly kernel gives the portable loop's sums and masks for every
// width a sketch has and any number of blocks, on random bits, tables,
// scales and floors, and on the largest entries (the 16-bit sums' worst
// case).
func TestSketchBlocksKernel(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for _, cols := range []int{2, 32, 48, 64, 128, 512} {
		for _, blocks := range []int{1, 2, 3, 9} {
			for _, extreme := range []bool{false, true} {
				sq := &signQuery{tables: make([]byte, 64*cols), sum: float32(r.NormFloat64())}
				sq.twoDelta, sq.twoLo = float32(r.Float64()/100), -float32(r.Float64()/10)
				codes := make([]byte, 32*cols*blocks)
				inv := make([]float32, 32*blocks)
				pop := make([]uint16, 32*blocks)
				for i := range sq.tables {
					// A group's sum is at most 4·15; both lanes alike.
					sq.tables[i] = byte(r.Intn(61))
					if extreme {
						sq.tables[i] = 60
					}
					if i%32 >= 16 {
						sq.tables[i] = sq.tables[i-16]
					}
				}
				for i := range codes {
					codes[i] = byte(r.Intn(256))
				}
				for i := range inv {
					inv[i], pop[i] = float32(r.Float64()/300), uint16(r.Intn(8*cols+1))
				}
				floor := float32(r.NormFloat64() / 10)
				want, got := make([]uint16, 32*blocks), make([]uint16, 32*blocks)
				wantMask, gotMask := make([]uint32, blocks), make([]uint32, blocks)
				sketchBlocksGeneric(sq, codes, cols, want, inv, pop, floor, wantMask)
				sketchBlocks(sq, codes, cols, got, inv, pop, floor, gotMask)
				for i := range want {
					if got[i] != want[i] {
						t.Fatalf("cols %d blocks %d extreme %v: sum %d is %d, portable %d", cols, blocks, extreme, i, got[i], want[i])
					}
				}
				if !slices.Equal(gotMask, wantMask) {
					t.Fatalf("cols %d blocks %d: masks %x, portable %x", cols, blocks, gotMask, wantMask)
				}
				if extreme && want[0] != uint16(120*cols) {
					t.Fatalf("cols %d: largest sum %d, want %d", cols, want[0], 120*cols)
				}
			}
		}
	}
}

// selectBest and bestOf keep the same k hits as sorting all of them, with
// many tied cosines (ties go to the lower Doc).
func TestSelectBest(t *testing.T) {
	r := rand.New(rand.NewSource(9))
	for _, n := range []int{0, 1, 2, 5, 64, 1000} {
		for _, k := range []int{1, 2, 3, 10, 500, 2000} {
			h := make([]Hit, n)
			for i := range h {
				h[i] = Hit{Doc: uint32(i), Cosine: float32(r.Intn(20))}
			}
			want := slices.Clone(h)
			slices.SortFunc(want, func(a, b Hit) int {
				if worse(a, b) {
					return 1
				}
				return -1
			})
			want = want[:min(k, n)]
			b := newBestOf(k)
			for _, i := range r.Perm(n) { // in any order
				if x := h[i]; b.better(x) {
					b.add(x)
				}
			}
			for name, got := range map[string][]Hit{"selectBest": selectBest(slices.Clone(h), k), "bestOf": b.best()} {
				slices.SortFunc(got, func(a, b Hit) int {
					if worse(a, b) {
						return 1
					}
					return -1
				})
				if !slices.Equal(got, want) {
					t.Fatalf("%s n %d k %d: %v, want %v", name, n, k, got, want)
				}
			}
		}
	}
}

// The rotation is orthogonal: it keeps norms and dot products.
func TestRotateOrthogonal(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	for _, dim := range []int{3, 256, 384, 512, 700} {
		u, v := randVec(r, dim), randVec(r, dim)
		ru, rv := make([]float32, signDim(dim)), make([]float32, signDim(dim))
		rotate(ru, u)
		rotate(rv, v)
		if d := math.Abs(float64(Dot(ru, rv) - Dot(u, v))); d > 1e-4 {
			t.Errorf("dim %d: dot %v after, %v before", dim, Dot(ru, rv), Dot(u, v))
		}
		if d := math.Abs(float64(Dot(ru, ru) - Dot(u, u))); d > 1e-4 {
			t.Errorf("dim %d: squared norm %v after, %v before", dim, Dot(ru, ru), Dot(u, u))
		}
	}
}

// A sketch estimate is the formula it stands for, computed directly from the
// rotated vectors in float64, and is close to the true cosine: its error
// over random pairs has mean near 0 and spread near the theory's 0.034 at
// D = 512 (a broken rotation or bit order gives errors of the order of the
// cosines themselves).
func TestSignEstimate(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	const dim = 512
	var sum, sumSq float64
	const pairs = 2000
	for range pairs {
		q, v := randVec(r, dim), randVec(r, dim)
		for i := range v { // correlate them, to spread the cosines
			v[i] += 0.8 * q[i]
		}
		qn, _ := Normalize(q)
		vn, _ := Normalize(v)
		ix := New(dim)
		if err := ix.Set(0, vn); err != nil {
			t.Fatal(err)
		}
		sq := newSignQuery(qn)
		var s [32]uint16
		var m [1]uint32
		sketchBlocks(&sq, ix.signs, signCols(dim), s[:], ix.signInv, ix.signPop, 0, m[:])
		got := sq.estimate(ix.signInv[0], ix.signPop[0], s[signRowLane(0)])

		// The reference: quantised R·q summed over the set bits, in float64.
		rq := make([]float32, signDim(dim))
		rotate(rq, qn)
		rv := make([]float32, signDim(dim))
		rotate(rv, vn)
		var setSum, all, abs float64
		for i, x := range rq {
			u := math.Max(0, math.Min(15, math.Round(float64((x-sq.lo)/sq.delta))))
			if rv[i] > 0 {
				setSum += float64(sq.lo) + float64(sq.delta)*u
			}
			all += float64(x)
			abs += math.Abs(float64(rv[i]))
		}
		want := (2*setSum - all) / abs
		if math.Abs(float64(got)-want) > 1e-4 {
			t.Fatalf("estimate %v, formula %v", got, want)
		}
		e := float64(got - Dot(qn, vn))
		sum += e
		sumSq += e * e
	}
	mean := sum / pairs
	sd := math.Sqrt(sumSq/pairs - mean*mean)
	t.Logf("estimate error: mean %.4f, sd %.4f", mean, sd)
	if math.Abs(mean) > 0.005 || sd < 0.02 || sd > 0.045 {
		t.Errorf("estimate error: mean %.4f, sd %.4f; want about 0 and 0.034", mean, sd)
	}
}

// sketchRef is SearchSketch's specification, computed without the
// sketches, from the index's float32 rows: each row's rotation, and for a
// query each allowed row's sum S of the query's steps over its positive
// components, counted one by one, the same estimate formula, the cands
// best estimates (ties to the lower row), then the exact top k of those.
type sketchRef struct {
	ix      *Index
	rotated [][]float32 // per row
	abs     []float64   // Σ|R·v| per row
}

func newSketchRef(ix *Index) *sketchRef {
	ref := &sketchRef{ix: ix}
	for r := range ix.rowDoc {
		rv := make([]float32, signDim(ix.dim))
		rotate(rv, ix.data[r*ix.dim:(r+1)*ix.dim])
		var abs float64
		for _, x := range rv {
			abs += math.Abs(float64(x))
		}
		ref.rotated, ref.abs = append(ref.rotated, rv), append(ref.abs, abs)
	}
	return ref
}

func (ref *sketchRef) search(q []float32, allow *docset.Set, k, cands int) []Hit {
	ix := ref.ix
	qn, _ := Normalize(q)
	sq := newSignQuery(qn)
	rq := make([]float32, signDim(ix.dim))
	rotate(rq, qn)
	steps := make([]uint16, len(rq))
	for i, x := range rq {
		if sq.delta > 0 {
			steps[i] = uint16(max(0, min(15, math.Round(float64((x-sq.lo)/sq.delta)))))
		}
	}
	est := newTopK(cands)
	for r, doc := range ix.rowDoc {
		if allow != nil && !allow.Has(doc) {
			continue
		}
		var s, pop uint16
		for i, x := range ref.rotated[r] {
			if x > 0 {
				s += steps[i]
				pop++
			}
		}
		est.offer(Hit{Doc: uint32(r), Cosine: sq.estimate(float32(1/ref.abs[r]), pop, s)})
	}
	t := newTopK(k)
	for _, c := range est.h {
		r := int(c.Doc)
		t.offer(Hit{Doc: ix.rowDoc[r], Cosine: dot(qn, ix.data[r*ix.dim:(r+1)*ix.dim])})
	}
	return mergeBest(k, []*topK{t})
}

// SearchSketch is its reference on every shape of index (partial blocks,
// rows moved by removals and replaced in place, rows added by SetRow), with
// and without filters, at candidate counts from 1 to all; with every row a
// candidate it is exact.
func TestSearchSketch(t *testing.T) {
	sampled := map[bool]int{}
	defer func(r, b int) { sketchSampleRuns, sketchSampleRun = r, b }(sketchSampleRuns, sketchSampleRun)
	for _, c := range []struct {
		n, dim int
	}{{1, 8}, {33, 8}, {200, 384}, {1500, 512}, {700, 1000}} {
		r := rand.New(rand.NewSource(int64(c.n)))
		ix := New(c.dim)
		live := map[uint32][]float32{}
		for i := range 3 * c.n {
			doc := uint32(r.Intn(2 * c.n))
			switch i % 5 {
			case 0:
				ix.Remove(doc)
				delete(live, doc)
			case 1:
				v := randVec(r, c.dim)
				row, err := Prepare(v)
				if err != nil || ix.SetRow(doc, row) != nil {
					t.Fatal("SetRow failed")
				}
				live[doc] = v
			default:
				v := randVec(r, c.dim)
				if err := ix.Set(doc, v); err != nil {
					t.Fatal(err)
				}
				live[doc] = v
			}
		}
		few := &docset.Set{}
		for d := uint32(0); d < uint32(2*c.n); d += 3 {
			few.Add(d)
		}
		ref := newSketchRef(ix)
		// The default runs (8 of 8 blocks) sample no index this small; the
		// others sample a few blocks each, from 2 up to 20.
		for _, sampling := range [][2]int{{8, 8}, {2, 1}, {3, 2}, {5, 4}} {
			sketchSampleRuns, sketchSampleRun = sampling[0], sampling[1]
			for qi := range 12 {
				q := randVec(r, c.dim)
				allow := []*docset.Set{nil, few}[qi%2]
				for _, cands := range []int{1, 10, 100, 3 * c.n} {
					got := ix.SearchSketch(q, allow, 10, cands)
					want := ref.search(q, allow, 10, max(cands, 10))
					if !slices.Equal(got, want) {
						t.Fatalf("n %d dim %d sampling %v cands %d: sketch %v, reference %v", c.n, c.dim, sampling, cands, got, want)
					}
					if cands >= ix.Len() {
						if exact := bruteForce(live, q, allow, 10); !sameHits(got, exact) {
							t.Fatalf("n %d dim %d, all candidates: %v, brute force %v", c.n, c.dim, got, exact)
						}
					}
					if qn, ok := Normalize(q); ok && signCols(c.dim) > 0 && sampling[1] == 1 {
						checkSketchFloor(t, ix, qn, allow, max(cands, 10), sampled)
					}
				}
			}
		}
		sketchSampleRuns, sketchSampleRun = 8, 8
	}
	if sampled[true] == 0 {
		t.Fatal("no index was sampled")
	}
}

// checkSketchFloor holds sketchScan to its contract on floors around the
// cands-th best estimate e: the scan from −Inf is ok, from e or any floor
// under it the same best, from just above e not ok unless ties at e leave
// cands rows. It also counts sampled floors (not −Inf) and checks that they
// are under e.
func checkSketchFloor(t *testing.T, ix *Index, qn []float32, allow *docset.Set, cands int, sampled map[bool]int) {
	t.Helper()
	sq := newSignQuery(qn)
	inf := float32(math.Inf(-1))
	all, ok := ix.sketchScan(&sq, allow, cands, inf)
	if !ok {
		t.Fatal("a scan from −Inf is not ok")
	}
	best := slices.Clone(selectBest(all, cands))
	if len(best) < cands {
		return // fewer rows allowed than candidates: no cut to test
	}
	e := float32(math.Inf(1))
	for _, h := range best {
		e = min(e, h.Cosine)
	}
	sortHits := func(h []Hit) []Hit {
		h = slices.Clone(h)
		slices.SortFunc(h, func(a, b Hit) int { return cmp.Compare(a.Doc, b.Doc) })
		return h
	}
	floor := ix.sketchFloor(&sq, allow, cands)
	sampled[!math.IsInf(float64(floor), -1)]++
	for _, f := range []float32{floor, e - 0.01, e} {
		got, ok := ix.sketchScan(&sq, allow, cands, f)
		if !ok || !slices.Equal(sortHits(selectBest(got, cands)), sortHits(best)) {
			t.Fatalf("floor %v under the cut %v: ok %v, %v against %v", f, e, ok, got, best)
		}
	}
	if _, ok := ix.sketchScan(&sq, allow, cands, math.Nextafter32(e, 1)); ok {
		above := 0
		for _, h := range all {
			if h.Cosine > e {
				above++
			}
		}
		if above < cands {
			t.Fatalf("floor above the cut %v is ok with %d rows above it", e, above)
		}
	}
}

// BenchmarkSketchBlocks runs the sketch kernel over 1M rows of 512 bits
// (64 MB, beyond any cache; -short: 32k rows, 2 MB, in cache, the kernel's
// own speed). ns/row is per row.
func BenchmarkSketchBlocks(b *testing.B) {
	blocks, cols := 1<<15, 64
	if testing.Short() {
		blocks = 1 << 10
	}
	r := rand.New(rand.NewSource(1))
	sq := &signQuery{tables: make([]byte, 64*cols), twoDelta: 0.01, twoLo: -0.05, sum: 0.3}
	for i := range sq.tables {
		sq.tables[i] = byte(r.Intn(61))
	}
	codes := make([]byte, 32*cols*blocks)
	for i := range codes {
		codes[i] = byte(r.Intn(256))
	}
	inv, pop := make([]float32, 32*blocks), make([]uint16, 32*blocks)
	for i := range inv {
		inv[i], pop[i] = 1.0/400, 256
	}
	out, masks := make([]uint16, 32*signBatch), make([]uint32, signBatch)
	for _, k := range []struct {
		name string
		f    func(*signQuery, []byte, int, []uint16, []float32, []uint16, float32, []uint32)
	}{{"kernel", sketchBlocks}, {"portable", sketchBlocksGeneric}} {
		b.Run(k.name, func(b *testing.B) {
			blk := 0
			for b.Loop() {
				if blk+signBatch > blocks {
					blk = 0
				}
				k.f(sq, codes[blk*32*cols:(blk+signBatch)*32*cols], cols, out, inv[blk*32:(blk+signBatch)*32], pop[blk*32:(blk+signBatch)*32], 1, masks)
				blk += signBatch
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*32*signBatch), "ns/row")
		})
	}
}

// fwht is the Walsh–Hadamard transform: the matrix H with H[i][j] =
// (−1)^popcount(i&j), applied naively.
func TestFWHT(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	for _, n := range []int{4, 8, 256, 512} {
		v := randVec(r, n)
		got := slices.Clone(v)
		fwht(got)
		for i := range n {
			var want float64
			for j, x := range v {
				if bits.OnesCount(uint(i&j))%2 == 0 {
					want += float64(x)
				} else {
					want -= float64(x)
				}
			}
			if math.Abs(float64(got[i])-want) > 1e-3 {
				t.Fatalf("n %d: component %d is %v, want %v", n, i, got[i], want)
			}
		}
	}
}

// BenchmarkSignInto is the sketch's share of Set and Prepare at 512-d.
func BenchmarkSignInto(b *testing.B) {
	v, _ := Normalize(benchQuery(512))
	code, buf := make([]byte, signCols(512)), make([]float32, signDim(512))
	for b.Loop() {
		signInto(code, v, buf)
	}
}

// FuzzSketchBlocks: on any bits, tables (entries at most 60, both lanes
// alike, as newSignQuery makes them), scales, popcounts and floor, the
// assembly kernel's sums and masks are the portable loop's.
func FuzzSketchBlocks(f *testing.F) {
	f.Add([]byte{0, 1, 7, 200, 3, 9, 250, 17})
	f.Add(bytes.Repeat([]byte{0xff}, 300))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 4 {
			return
		}
		cols, blocks := 2*(1+int(data[0]%8)), 1+int(data[1]%3)
		floor := (float32(data[2]) - 128) / 64
		data = data[3:]
		at := func(i int) byte { return data[i%len(data)] }
		sq := &signQuery{tables: make([]byte, 64*cols), twoDelta: float32(at(0)) / 512, twoLo: -float32(at(1)) / 256, sum: float32(at(2)) / 64}
		for i := range sq.tables {
			sq.tables[i] = at(i) % 61
			if i%32 >= 16 {
				sq.tables[i] = sq.tables[i-16]
			}
		}
		codes := make([]byte, 32*cols*blocks)
		for i := range codes {
			codes[i] = at(7*i + 3)
		}
		inv, pop := make([]float32, 32*blocks), make([]uint16, 32*blocks)
		for i := range inv {
			inv[i], pop[i] = float32(at(5*i+1))/4096, uint16(at(3*i+2))
		}
		want, got := make([]uint16, 32*blocks), make([]uint16, 32*blocks)
		wantMask, gotMask := make([]uint32, blocks), make([]uint32, blocks)
		sketchBlocksGeneric(sq, codes, cols, want, inv, pop, floor, wantMask)
		sketchBlocks(sq, codes, cols, got, inv, pop, floor, gotMask)
		if !slices.Equal(got, want) || !slices.Equal(gotMask, wantMask) {
			t.Fatalf("cols %d blocks %d: kernel %v / %x, portable %v / %x", cols, blocks, got, gotMask, want, wantMask)
		}
	})
}
