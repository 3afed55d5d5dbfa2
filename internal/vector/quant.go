package vector

// Int8 screening keeps exact search exact while reading a quarter of the
// bytes. Each row v is also stored as int8 codes c with a scale s (v ≈ s·c)
// and the norm of its rounding residual ‖v − s·c‖. A query q is quantised the
// same way to q̂. Since q·v = q̂·v̂ + q̂·(v − v̂) + (q − q̂)·v and ‖v‖ = 1,
// Cauchy–Schwarz bounds the error of the cheap integer score:
//
//	|q·v − q̂·v̂| ≤ ‖q̂‖·‖v − v̂‖ + ‖q − q̂‖ (+ float32 rounding of the exact kernel)
//
// Pass one scores every row in int8 and takes τ, the k-th largest lower
// bound; at least k rows truly score τ or more, so no row whose upper bound
// is below τ can be in the top k. Pass two refines the rows whose upper bound
// reaches τ with the residual's codes (v ≈ s·c + s₂·c₂, off by ‖v − s·c −
// s₂·c₂‖, some hundred times less) against the float32 query, and by the same
// argument keeps the rows whose refined upper bound reaches the k-th refined
// lower bound: near ties at the cut, typically a few besides the k. Only those
// are scored with the float32 kernel, which Search's plain path uses too, so
// both paths return identical hits while reading a few float32 rows (which,
// mapped from a snapshot, become resident only as they are read).

import (
	"math"
	"sync"
	"unsafe"

	"github.com/engram-memory/engram/internal/docset"
	"github.com/engram-memory/engram/internal/parallel"
)

// Screening applies to searches with at least quantMinFloats of work
// (rows × dim) and k at most 1/quantMaxKDivisor of the admitted rows.
var (
	quantMinFloats   = 1 << 20
	quantMaxKDivisor = 16
	// screenAlways screens even where the int8 kernel is the slow portable
	// one; tests set it to cover that kernel.
	screenAlways = false
	// prefetchAhead is how many listed rows ahead a screen prefetches.
	prefetchAhead = 8
)

// maxAbs is the largest |x| of finite v (0 for none), by comparison rather
// than the builtin max (see fineInto).
func maxAbs(v []float32) float32 {
	var m float32
	for _, x := range v {
		if a := float32(math.Abs(float64(x))); a > m {
			m = a
		}
	}
	return m
}

// quantizeInto writes v's int8 codes into c and returns the scale and an
// upper bound on the residual norm ‖v − scale·c‖.
func quantizeInto(c []int8, v []float32) (scale, resid float32) {
	m := maxAbs(v)
	if m == 0 {
		clear(c)
		return 0, 0
	}
	scale = m / 127
	var ss float64
	for i, x := range v {
		q := max(-127, min(127, math.Round(float64(x)/float64(scale))))
		c[i] = int8(q)
		e := float64(x) - float64(scale)*q
		ss += e * e
	}
	return scale, roundUp(math.Sqrt(ss))
}

// fineInto writes into f the int8 codes of v's residual after its codes c at
// scale, and returns their scale and an upper bound on the norm of what is
// left, ‖v − scale·c − fscale·f‖.
func fineInto(f []int8, v []float32, c []int8, scale float32) (fscale, fresid float32) {
	var m float64
	for i, x := range v {
		// A comparison, not the builtin max, whose NaN and signed-zero
		// rules chain every step on the last (half of this function's
		// time); the rows are finite.
		if a := math.Abs(float64(x) - float64(scale)*float64(c[i])); a > m {
			m = a
		}
	}
	if m == 0 {
		clear(f)
		return 0, 0
	}
	fs := float32(m / 127)
	var ss float64
	for i, x := range v {
		e := float64(x) - float64(scale)*float64(c[i])
		q := max(-127, min(127, math.Round(e/float64(fs))))
		f[i] = int8(q)
		d := e - float64(fs)*q
		ss += d * d
	}
	return fs, roundUp(math.Sqrt(ss))
}

// refine is row r's score against the float32 query qn, from both its codes,
// with a bound on its distance from the float32 kernel's score of the row:
// the residual left (‖qn‖ = 1), the kernel's rounding and this sum's.
func (ix *Index) refine(qn []float32, r int) (approx, bound float64) {
	c := ix.codes[r*ix.dim : (r+1)*ix.dim]
	f := ix.fine[r*ix.dim : (r+1)*ix.dim]
	s, fs := ix.qscale[r], ix.fscale[r]
	sc, sf := dotF32Int8x2(qn, c, f)
	// Each product and sum rounds at 2⁻²⁴ relative; scaled back, the terms'
	// magnitudes sum to at most about ‖qn‖·‖v‖ = 1 plus the residuals, so
	// (dim+8)·2⁻²² covers these sums' rounding and the kernel's, with room.
	approx = float64(s)*float64(sc) + float64(fs)*float64(sf)
	return approx, float64(ix.fresid[r]) + float64(ix.dim+8)*0x1p-22 + 1e-6
}

// mappedData reports whether the float32 rows are mapped from a snapshot.
func (ix *Index) mappedData() bool {
	return len(ix.maps) > 0 && ix.maps.Has(unsafe.Pointer(unsafe.SliceData(ix.data)))
}

// cascade scores candidate rows through refine and returns the best k by
// the float32 kernel, reading float32 rows only for the candidates whose
// refined upper bound reaches the k-th best refined lower bound. With fewer
// than k+1 candidates, or float32 rows on the heap (where refining costs more
// than the reads it saves), every candidate is read. It may reorder rows.
func (ix *Index) cascade(qn []float32, rows []int32, k int) []Hit {
	read := rows
	if len(rows) > k && ix.mappedData() {
		read = ix.nearCut(qn, rows, k)
	}
	if onCascade != nil {
		onCascade(len(rows), len(read))
	}
	t := newTopK(k)
	buf := make([]float32, ix.dim)
	for _, r := range read {
		t.offer(Hit{Doc: ix.rowDoc[r], Cosine: dot(qn, ix.rowF32(int(r), buf))})
	}
	return mergeBest(k, []*topK{t})
}

// onCascade, when set (tests), learns how many candidates each cascade had
// and how many float32 rows it read.
var onCascade func(candidates, read int)

// nearCut keeps, in rows' own storage, the rows whose refined upper bound
// reaches the k-th best refined lower bound.
func (ix *Index) nearCut(qn []float32, rows []int32, k int) []int32 {
	ub := make([]float32, len(rows))
	lows := newTopK(k)
	floor, full := lows.floor()
	for i, r := range rows {
		approx, bound := ix.refine(qn, int(r))
		ub[i] = float32(approx + bound)
		if lb := float32(approx - bound); !full || lb > floor {
			lows.offer(Hit{Doc: uint32(i), Cosine: lb})
			floor, full = lows.floor()
		}
	}
	tau := float32(-math.MaxFloat32)
	if lbs := mergeBest(k, []*topK{lows}); len(lbs) == k {
		tau = lbs[k-1].Cosine
	}
	kept := rows[:0]
	for i, r := range rows {
		if ub[i] >= tau {
			kept = append(kept, r)
		}
	}
	return kept
}

// roundUp converts x to a float32 no smaller than x.
func roundUp(x float64) float32 {
	f := float32(x)
	if float64(f) < x {
		f = math.Nextafter32(f, float32(math.Inf(1)))
	}
	return f
}

// quantQuery is a query in int16 codes (what the integer kernel multiplies)
// with the norms the error bound needs.
type quantQuery struct {
	codes []int16
	scale float64
	norm  float64 // ‖q̂‖
	resid float64 // ‖q − q̂‖
}

func newQuantQuery(q []float32) quantQuery {
	c := make([]int8, len(q))
	scale, resid := quantizeInto(c, q)
	qq := quantQuery{codes: make([]int16, len(q)), scale: float64(scale), resid: float64(resid)}
	var ss float64
	for i, x := range c {
		qq.codes[i] = int16(x)
		ss += float64(x) * float64(x)
	}
	qq.norm = qq.scale * math.Sqrt(ss) * (1 + 1e-12)
	return qq
}

// dotF32Int8x2Generic is the portable twin of refine's kernel: Σ q[i]·c[i]
// and Σ q[i]·f[i] over len(q) items, two lanes each.
func dotF32Int8x2Generic(q []float32, c, f []int8) (sc, sf float32) {
	c, f = c[:len(q)], f[:len(q)]
	var c0, c1, f0, f1 float32
	i := 0
	for ; i+2 <= len(q); i += 2 {
		c0 += q[i] * float32(c[i])
		f0 += q[i] * float32(f[i])
		c1 += q[i+1] * float32(c[i+1])
		f1 += q[i+1] * float32(f[i+1])
	}
	for ; i < len(q); i++ {
		c0 += q[i] * float32(c[i])
		f0 += q[i] * float32(f[i])
	}
	return c0 + c1, f0 + f1
}

// dotInt8Generic is the portable integer kernel: Σ q[i]·c[i] over len(q) items.
// Codes are within ±127, so the sum fits an int32 for any dim below 133,000.
func dotInt8Generic(q []int16, c []int8) int32 {
	c = c[:len(q)]
	var s0, s1, s2, s3 int32
	i := 0
	for ; i+4 <= len(q); i += 4 {
		s0 += int32(q[i]) * int32(c[i])
		s1 += int32(q[i+1]) * int32(c[i+1])
		s2 += int32(q[i+2]) * int32(c[i+2])
		s3 += int32(q[i+3]) * int32(c[i+3])
	}
	for ; i < len(q); i++ {
		s0 += int32(q[i]) * int32(c[i])
	}
	return s0 + s1 + s2 + s3
}

// scratch holds pass one's upper bounds, pooled to spare 4 bytes a row per search.
var scratchPool sync.Pool

// searchQuant is Search with int8 screening over the listed rows, or over
// every row (skipping those allow rejects) when rows is nil. It returns the
// same hits as scoring each of those rows with the float32 kernel.
func (ix *Index) searchQuant(qn []float32, rows []int32, allow *docset.Set, k, workers int) []Hit {
	dim := ix.dim
	work := len(ix.rowDoc)
	if rows != nil {
		work = len(rows)
	}
	row := func(p int) int {
		if rows != nil {
			return int(rows[p])
		}
		return p
	}
	qq := newQuantQuery(qn)
	var ub []float32 // ub[p]: upper bound on position p's float32 score
	if p, ok := scratchPool.Get().(*[]float32); ok && cap(*p) >= work {
		ub = (*p)[:work]
	} else {
		ub = make([]float32, work)
	}
	defer scratchPool.Put(&ub)
	// Float32 rounding of the exact kernel, of the bounds and of the norms.
	slack := float64(dim+8)*0x1p-23 + 1e-6
	fixed := qq.resid + slack

	lows := make([]*topK, workers) // k largest lower bounds
	parallel.Split(workers, work, func(w, lo, hi int) {
		t := newTopK(k)
		lows[w] = t
		floor, full := t.floor()
		for p := lo; p < hi; p++ {
			r := row(p)
			if rows != nil && p+prefetchAhead < hi {
				// Listed rows are scattered: start the loads a few rows ahead.
				n := int(rows[p+prefetchAhead])
				prefetch(ix.codes[n*dim : (n+1)*dim])
			}
			if rows == nil && allow != nil && !allow.Has(ix.rowDoc[r]) {
				ub[p] = float32(math.Inf(-1))
				continue
			}
			approx := qq.scale * float64(ix.qscale[r]) * float64(dotInt8(qq.codes, ix.codes[r*dim:(r+1)*dim]))
			bound := qq.norm*float64(ix.qresid[r]) + fixed
			ub[p] = float32(approx + bound + 1e-6)
			if lb := float32(approx - bound - 1e-6); !full || lb > floor {
				t.offer(Hit{Doc: uint32(p), Cosine: lb})
				floor, full = t.floor()
			}
		}
	})
	tau := float32(-math.MaxFloat32) // above the -Inf of rows not allowed
	if lbs := mergeBest(k, lows); len(lbs) == k {
		tau = lbs[k-1].Cosine
	}
	var survivors []int32
	for p := range work {
		if ub[p] >= tau {
			survivors = append(survivors, int32(row(p)))
		}
	}
	return ix.cascade(qn, survivors, k)
}
