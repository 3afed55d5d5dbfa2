package vector

// Sign sketches: one bit a dimension for every row, so a scan of a large
// index reads 64 bytes a row (512-d) instead of the int8 codes' 512, and
// ranks rows approximately. The estimator is RaBitQ's (Gao & Long, 2024):
//
// A row v (unit length) is rotated by a fixed random orthogonal map R,
// padded to D = signDim(dim) components, and kept as the signs b of R·v. Its
// quantised direction ō = (2b − 1)/√D is a unit vector with ⟨ō, R·v⟩ = a =
// Σ|(R·v)ᵢ|/√D (about 0.8). For a query q, ⟨q, v⟩ = ⟨R·q, R·v⟩, estimated
// without bias as ⟨ō, R·q⟩ / a. Because R is random, the estimate's error is
// about √((1 − a²)/(a²(D − 1))) ≈ 0.034 at D = 512, whatever the data.
//
// Per query, R·q is quantised to 4-bit unsigned steps, lo + Δ·u (u in
// 0..15), so the sum of R·q over a row's set bits is lo·popcount(b) + Δ·S
// with S the sum of u over the set bits. S is read four bits at a time from
// sixteen-entry tables (entry x of group g: the sum of u over the bits of x
// among components 4g..4g+3), the lookup VPSHUFB does 32 at once: rows are
// stored in blocks of 32, byte m of each row's bits side by side, so one
// load brings byte m of 32 rows and two lookups score their 8 components
// (sign_amd64.s; PQ "fast scan" uses the same layout). The estimate is then
//
//	(2·Σ_{bᵢ=1} (R·q)ᵢ − Σᵢ (R·q)ᵢ) / Σ|(R·v)ᵢ|
//
// so a row keeps its bits, its popcount and 1/Σ|(R·v)ᵢ|: 70 bytes at 512-d.
// Dimensions above signMaxDim have no sketches (S would overflow 16 bits).
//
// An estimate is not a bound: SearchSketch keeps the best few thousand rows
// by it (the cut is the caller's) and ranks those exactly, through the int8
// screen and the float32 kernel. What the cut costs in recall is measured
// (TestSketchRecall, engram bench), not proven.
//
// R is two rounds of random sign flips, each followed by a normalised
// Walsh–Hadamard transform (orthogonal, D·log₂D additions); the flips come
// from a fixed seed, so codes never depend on the data or on a run.

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"

	"github.com/engram-memory/engram/internal/docset"
	"github.com/engram-memory/engram/internal/parallel"
)

// signDim is the rotated dimension for vectors of dim components: the next
// power of two, at least 256 (one 32-byte block of bits).
func signDim(dim int) int {
	d := 256
	for d < dim && d <= math.MaxInt/2 {
		d *= 2
	}
	return d
}

// signMaxDim is the largest rotated dimension with sketches: each block's
// sums are 16-bit, at most 120 a byte of bits (and flipsOf has a slot for
// each of 256..4096).
const signMaxDim = 4096

// signCols is the bytes of bits a row of dim components keeps, 0 when the
// dimension is too large for sketches.
func signCols(dim int) int {
	if dim > signMaxDim {
		return 0
	}
	if d := signDim(dim); d <= signMaxDim {
		return d / 8
	}
	return 0
}

// signRounds is the number of flip-and-transform rounds of the rotation.
const signRounds = 2

// signSeed fixes the rotation's flips (so written codes stay valid).
const signSeed = 0x5167_6e5f_636f_6465

// flipsOf holds, for each rotated dimension 2^(8+i), the rotation's flips
// times 1/√D (each round's normalisation folded in), made on first use.
var flipsOf [5]struct {
	once sync.Once
	f    [signRounds][]float32
}

// flips returns the rotation's scaled ±1 factors for rotated dimension d.
func flips(d int) *[signRounds][]float32 {
	i := bits.TrailingZeros(uint(d)) - 8
	e := &flipsOf[i]
	e.once.Do(func() {
		r := rand.New(rand.NewPCG(signSeed, uint64(d)))
		scale := float32(1 / math.Sqrt(float64(d)))
		for k := range e.f {
			e.f[k] = make([]float32, d)
			for j := range e.f[k] {
				e.f[k][j] = float32(r.IntN(2)*2-1) * scale
			}
		}
	})
	return &e.f
}

// rotate writes R·v into dst (len signDim(len(v)), at most signMaxDim).
func rotate(dst, v []float32) {
	copy(dst, v)
	clear(dst[len(v):])
	for _, f := range flips(len(dst)) {
		for i := range dst {
			dst[i] *= f[i]
		}
		fwht(dst)
	}
}

// fwht is the unnormalised Walsh–Hadamard transform of v in place
// (len(v) a power of two, at least 4).
func fwht(v []float32) {
	// The first two levels at once, four components at a time (their
	// slices are too short for the general loop to pay).
	for i := 0; i+4 <= len(v); i += 4 {
		x := v[i : i+4 : i+4]
		a, b, c, d := x[0]+x[1], x[0]-x[1], x[2]+x[3], x[2]-x[3]
		x[0], x[1], x[2], x[3] = a+c, b+d, a-c, b-d
	}
	for h := 4; h < len(v); h *= 2 {
		for i := 0; i < len(v); i += 2 * h {
			a, b := v[i:i+h], v[i+h:i+2*h]
			for j := range a {
				a[j], b[j] = a[j]+b[j], a[j]-b[j]
			}
		}
	}
}

// signInto writes the signs of unit vector v's rotation into code
// (signCols(len(v)) bytes; component i is bit i%8 of byte i/8) and returns
// 1/Σ|(R·v)ᵢ| and the number of bits set. buf is scratch of
// signDim(len(v)) floats.
func signInto(code []byte, v, buf []float32) (inv float32, pop uint16) {
	rotate(buf, v)
	clear(code)
	var abs float64
	n := 0
	for i, x := range buf {
		if x > 0 {
			code[i/8] |= 1 << (i % 8)
			n++
		}
		abs += math.Abs(float64(x))
	}
	if abs == 0 {
		return 0, uint16(n)
	}
	return float32(1 / abs), uint16(n)
}

// signQuery is a query ready for the sketch: for each group g of four
// rotated components, a 32-byte table whose entries x and 16+x are the sum
// of the quantised steps u over the bits of x (both 16-byte lanes alike, as
// VPSHUFB reads them). Group 2m is the low half of byte m, 2m+1 the high.
type signQuery struct {
	tables []byte
	lo     float32 // R·q ≈ lo + delta·u
	delta  float32
	sum    float32 // Σ (R·q)ᵢ

	twoDelta, twoLo float32 // the estimate's factors
}

func newSignQuery(qn []float32) signQuery {
	d := signDim(len(qn))
	rq := make([]float32, d)
	rotate(rq, qn)
	lo, hi := rq[0], rq[0]
	var sum float32
	for _, x := range rq {
		lo, hi = min(lo, x), max(hi, x)
		sum += x
	}
	sq := signQuery{tables: make([]byte, 32*d/4), lo: lo, delta: (hi - lo) / 15, sum: sum}
	sq.twoDelta, sq.twoLo = 2*sq.delta, 2*sq.lo
	if sq.delta == 0 {
		return sq // every component is lo: every S is 0
	}
	for g := range d / 4 {
		var u [4]byte
		for t := range u {
			u[t] = byte(max(0, min(15, math.Round(float64((rq[4*g+t]-lo)/sq.delta)))))
		}
		tab := sq.tables[32*g : 32*g+32]
		for x := range 16 {
			var e byte
			for t := range u {
				if x>>t&1 == 1 {
					e += u[t]
				}
			}
			tab[x], tab[16+x] = e, e
		}
	}
	return sq
}

// signRowLane returns where, in a kernel's output for one block, the sum of
// the block's row l is: the kernel writes the even rows' sums, then the odd.
func signRowLane(l int) int { return l/2 + l%2*16 }

// signSlot is row r's place in the kernel's output order, where signInv and
// signPop keep it too, so a scan reads all three in step.
func signSlot(r int) int { return r&^31 + signRowLane(r&31) }

// laneRow inverts signRowLane.
func laneRow(j int) int { return j%16*2 + j/16 }

// sketchBlocksGeneric is the portable kernel: for each block b of 32 rows
// (32 rows × cols bytes, byte m of rows 0..31 side by side), the 32 rows'
// S in slot order (signRowLane) into out[32b:], and in masks[b] a bit for
// each slot whose estimate (from inv and pop, in slot order) is at least
// floor.
func sketchBlocksGeneric(sq *signQuery, blocks []byte, cols int, out []uint16, inv []float32, pop []uint16, floor float32, masks []uint32) {
	tables := sq.tables
	for b := range len(out) / 32 {
		blk := blocks[b*32*cols : (b+1)*32*cols]
		for l := range 32 {
			var s int
			for m := range cols {
				x := blk[m*32+l]
				s += int(tables[64*m+int(x&15)]) + int(tables[64*m+32+int(x>>4)])
			}
			out[32*b+signRowLane(l)] = uint16(s)
		}
		var mask uint32
		for j := 32 * b; j < 32*b+32; j++ {
			if sq.estimate(inv[j], pop[j], out[j]) >= floor {
				mask |= 1 << (j - 32*b)
			}
		}
		masks[b] = mask
	}
}

// estimate is a row's approximate cosine to the query from its sketch sum s,
// its scale inv and its popcount: inv·(2Δ·s + 2lo·pop − Σ).
func (sq *signQuery) estimate(inv float32, pop uint16, s uint16) float32 {
	return inv * (sq.twoDelta*float32(s) + sq.twoLo*float32(pop) - sq.sum)
}

// putSign stores row r's sketch: its bits (signInto's layout) in the block
// layout, and its scale and popcount.
func (ix *Index) putSign(r int, code []byte, inv float32, pop uint16) {
	cols := len(code)
	blk := ix.signs[r/32*32*cols:]
	for m, x := range code {
		blk[m*32+r%32] = x
	}
	ix.signInv[signSlot(r)], ix.signPop[signSlot(r)] = inv, pop
}

// moveSign copies row from's sketch to row to's place and clears from's.
func (ix *Index) moveSign(to, from int) {
	cols := signCols(ix.dim)
	if cols == 0 {
		return
	}
	src, dst := ix.signs[from/32*32*cols:], ix.signs[to/32*32*cols:]
	for m := range cols {
		dst[m*32+to%32] = src[m*32+from%32]
		src[m*32+from%32] = 0
	}
	t, f := signSlot(to), signSlot(from)
	ix.signInv[t], ix.signPop[t] = ix.signInv[f], ix.signPop[f]
	ix.signInv[f], ix.signPop[f] = 0, 0
}

// sketchRow writes row r's sketch from its float32 row; the sketch arrays
// already have the row.
func (ix *Index) sketchRow(r int) {
	cols := signCols(ix.dim)
	if cols == 0 {
		return
	}
	code := make([]byte, cols)
	inv, pop := signInto(code, ix.data[r*ix.dim:(r+1)*ix.dim], make([]float32, signDim(ix.dim)))
	ix.putSign(r, code, inv, pop)
}

// growSigns makes room in the sketch arrays for row r (the next row).
func (ix *Index) growSigns(r int) {
	cols := signCols(ix.dim)
	if cols == 0 {
		return
	}
	if r%32 == 0 {
		ix.signs = append(ix.signs, make([]byte, 32*cols)...)
		ix.signInv = append(ix.signInv, make([]float32, 32)...)
		ix.signPop = append(ix.signPop, make([]uint16, 32)...)
	}
}

// shrinkSigns drops the last row (already cleared) from the sketch arrays.
func (ix *Index) shrinkSigns(last int) {
	cols := signCols(ix.dim)
	if cols == 0 {
		return
	}
	if last%32 == 0 {
		ix.signs = ix.signs[:last*cols]
		ix.signInv, ix.signPop = ix.signInv[:last], ix.signPop[:last]
	}
}

// signBatch is how many blocks of 32 rows the kernel scores between heap
// updates; sketchMinRows is the least work of each goroutine of a sketch
// scan. Each goroutine keeps its own cands best, so a second one costs a
// second selection: at 100k synthetic rows (TestHarness, 100 queries, load
// ~1) one goroutine took 1.24 ms p50 (1.31 ms CPU) and two 1.95 ms (2.14
// ms CPU); at 1M two took 7.3 ms in engram bench's vector leg.
const (
	signBatch     = 8
	sketchMinRows = 1 << 18
)

// sketchSampleRuns runs of sketchSampleRun blocks are what sketchFloor
// samples (2048 rows); variables so that tests sample small indexes.
var sketchSampleRuns, sketchSampleRun = 8, 8

// SearchSketch is an approximate Search for large indexes: every allowed row
// is ranked by its sign sketch, the cands best are kept, and those are
// searched exactly (the int8 screen, then float32), so the hits are Search's
// whenever its top k are among the cands. With cands at least the allowed
// rows, or no sketches (a dimension over signMaxDim), it is Search.
func (ix *Index) SearchSketch(q []float32, allow *docset.Set, k, cands int) []Hit {
	n := len(ix.rowDoc)
	admitted := n
	if allow != nil {
		admitted = min(admitted, allow.Len())
	}
	cols := signCols(ix.dim)
	if cols == 0 || cands >= admitted || k < 1 || n == 0 || len(q) != ix.dim {
		return ix.Search(q, allow, k)
	}
	qn, ok := Normalize(q)
	if !ok {
		return nil
	}
	cands = max(cands, k)
	sq := newSignQuery(qn)
	all, ok := ix.sketchScan(&sq, allow, cands, ix.sketchFloor(&sq, allow, cands))
	if !ok {
		all, _ = ix.sketchScan(&sq, allow, cands, float32(math.Inf(-1)))
	}
	all = selectBest(all, cands)
	rows := make([]int32, len(all))
	for i, h := range all {
		rows[i] = int32(h.Doc)
	}
	// In row order the exact search reads the rows' codes forwards through
	// memory, not scattered in the order of their estimates.
	slices.Sort(rows)
	return ix.searchRows(qn, rows, k)
}

// sketchScan offers every allowed row whose sketch estimate reaches floor
// to a bestOf of cands per goroutine, and returns their best, at most
// cands a goroutine. ok reports that those include the cands best allowed
// rows: true when floor is −Inf, or when at least cands rows reached it
// (then the cands-th best estimate is at least floor).
func (ix *Index) sketchScan(sq *signQuery, allow *docset.Set, cands int, floor float32) (all []Hit, ok bool) {
	n := len(ix.rowDoc)
	cols := signCols(ix.dim)
	blocks := (n + 31) / 32
	workers := min(runtime.GOMAXPROCS(0), maxWorkers, max(1, n/sketchMinRows))
	bests := make([]*bestOf, workers)
	parallel.Split(workers, blocks, func(w, lo, hi int) {
		t := newBestOf(cands)
		t.floor = floor
		bests[w] = t
		var sums [32 * signBatch]uint16
		var masks [signBatch]uint32
		for b := lo; b < hi; b += signBatch {
			e := min(b+signBatch, hi)
			inv, pop := ix.signInv[b*32:e*32], ix.signPop[b*32:e*32]
			sketchBlocks(sq, ix.signs[b*32*cols:e*32*cols], cols, sums[:32*(e-b)], inv, pop, t.floor, masks[:e-b])
			for i, m := range masks[:e-b] {
				for ; m != 0; m &= m - 1 {
					j := 32*i + bits.TrailingZeros32(m)
					r := b*32 + 32*i + laneRow(j&31)
					x := Hit{Doc: uint32(r), Cosine: sq.estimate(inv[j], pop[j], sums[j])}
					if r >= n || !t.better(x) || allow != nil && !allow.Has(ix.rowDoc[r]) {
						continue // a slot past the last row, no longer good enough, or not allowed
					}
					t.add(x)
				}
			}
		}
	})
	for _, t := range bests {
		all = append(all, t.best()...)
	}
	return all, math.IsInf(float64(floor), -1) || len(all) >= cands
}

// sketchFloor guesses, from a sample of the blocks, an estimate that
// somewhat more than cands allowed rows reach, so that a scan starting
// from it offers few rows beyond its final cands: with the floor starting
// at −Inf, every row is offered until the first cands are held, and the
// floor then rises in steps (at 100k rows that selection took a fifth of
// a scan's CPU). A guess too high is caught by sketchScan's ok, and costs
// a second scan. The sample is sketchSampleRuns evenly spaced runs of
// sketchSampleRun blocks, each read in one kernel call (scattered single
// blocks cost 60 ns a row in engram's vector leg at 100k, each a string of
// DRAM misses, against 5 for the scan); the top cands rows are expected at
// sampled/n of the rate in the sample, and the floor is the estimate of the
// sample's allowed row at rank 1.5 times that expectation plus three of its
// standard deviations (a Poisson count's) plus 8. It is −Inf when the runs
// would cover more than half the blocks.
func (ix *Index) sketchFloor(sq *signQuery, allow *docset.Set, cands int) float32 {
	n := len(ix.rowDoc)
	cols := signCols(ix.dim)
	blocks := (n + 31) / 32
	runs, run := sketchSampleRuns, sketchSampleRun
	if blocks < 2*runs*run {
		return float32(math.Inf(-1))
	}
	var sums [32 * signBatch]uint16
	var masks [signBatch]uint32
	sample := make([]Hit, 0, 32*runs*run)
	slots := 0
	for i := range runs {
		lo := i*blocks/runs + (blocks/runs-run)/2
		for b := lo; b < lo+run; b += signBatch {
			e := min(b+signBatch, lo+run)
			inv, pop := ix.signInv[b*32:e*32], ix.signPop[b*32:e*32]
			sketchBlocks(sq, ix.signs[b*32*cols:e*32*cols], cols, sums[:32*(e-b)], inv, pop, float32(math.Inf(-1)), masks[:e-b])
			for j := range 32 * (e - b) {
				r := b*32 + j&^31 + laneRow(j&31)
				if r >= n || allow != nil && !allow.Has(ix.rowDoc[r]) {
					continue
				}
				sample = append(sample, Hit{Doc: uint32(r), Cosine: sq.estimate(inv[j], pop[j], sums[j])})
			}
			slots += 32 * (e - b)
		}
	}
	expect := float64(cands) * float64(slots) / float64(n)
	rank := int(1.5*expect + 3*math.Sqrt(expect) + 8)
	if rank >= len(sample) {
		return float32(math.Inf(-1))
	}
	floor := float32(math.Inf(1))
	for _, h := range selectBest(sample, rank) {
		floor = min(floor, h.Cosine)
	}
	return floor
}

// bestOf keeps the k best hits offered (by worse's order), for less than a
// heap costs: a hit better than the k-th best so far, (floor, floorDoc), is
// appended, and when 2k are held the best k are selected and the k-th
// updated. Callers drop hits that are not better before offering them.
// Against topK in SearchSketch (TestHarness at 100k synthetic rows, two
// runs each, load under 1): 1.15–1.66 against 1.54–1.82 ms of CPU a search
// with 1000 candidates, 2.67–3.13 against 4.09–4.79 ms with 4000.
type bestOf struct {
	k        int
	floor    float32
	floorDoc uint32
	h        []Hit
}

func newBestOf(k int) *bestOf {
	return &bestOf{k: k, floor: float32(math.Inf(-1)), floorDoc: math.MaxUint32, h: make([]Hit, 0, 2*k)}
}

func (b *bestOf) add(x Hit) {
	b.h = append(b.h, x)
	if len(b.h) == 2*b.k {
		b.h = selectBest(b.h, b.k)
		kth := b.h[0]
		for _, y := range b.h[1:] {
			if worse(y, kth) {
				kth = y
			}
		}
		b.floor, b.floorDoc = kth.Cosine, kth.Doc
	}
}

// better reports whether x beats the k-th best so far.
func (b *bestOf) better(x Hit) bool { return worse(Hit{Doc: b.floorDoc, Cosine: b.floor}, x) }

// best returns the k best hits offered, in no order.
func (b *bestOf) best() []Hit { return selectBest(b.h, b.k) }

// selectBest moves the k best of h (by worse's order) to its front and
// returns them, in no order: quickselect, linear on average.
func selectBest(h []Hit, k int) []Hit {
	if k >= len(h) {
		return h
	}
	lo, hi := 0, len(h)-1
	for lo < hi {
		mid := lo + (hi-lo)/2
		// Median of three as the pivot, moved to hi.
		if worse(h[lo], h[mid]) {
			h[lo], h[mid] = h[mid], h[lo]
		}
		if worse(h[mid], h[hi]) {
			h[mid], h[hi] = h[hi], h[mid]
			if worse(h[lo], h[mid]) {
				h[lo], h[mid] = h[mid], h[lo]
			}
		}
		h[mid], h[hi] = h[hi], h[mid]
		p := h[hi]
		i := lo
		for j := lo; j < hi; j++ {
			if worse(p, h[j]) { // h[j] better than the pivot
				h[i], h[j] = h[j], h[i]
				i++
			}
		}
		h[i], h[hi] = h[hi], h[i]
		switch {
		case i == k || i == k-1:
			return h[:k]
		case i < k:
			lo = i + 1
		default:
			hi = i - 1
		}
	}
	return h[:k]
}

// searchRows is the exact top k of the listed rows.
func (ix *Index) searchRows(qn []float32, rows []int32, k int) []Hit {
	k = min(k, len(rows))
	if k == 0 {
		return nil
	}
	// The int8 screen pays on any number of these rows (unlike a scan's,
	// whose rows are read in order anyway): they lie scattered, and each
	// float32 row is four times its codes.
	workers := min(runtime.GOMAXPROCS(0), maxWorkers, max(1, len(rows)*ix.dim/parallelMinFloats))
	if (fastInt8() || screenAlways) && k <= len(rows)/quantMaxKDivisor {
		return ix.searchQuant(qn, rows, nil, k, workers)
	}
	t := newTopK(k)
	ix.scoreRows(qn, rows, t)
	return mergeBest(k, []*topK{t})
}
