//go:build amd64 && !purego

package vector

import "golang.org/x/sys/cpu"

// hasAsm reports whether an assembly dot product is in use.
const hasAsm = true

// useAVX2 selects the AVX2+FMA kernel; tests turn it off to cover the fallback.
var useAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// dotAVX2 is implemented in dot_amd64.s: 32 floats an iteration in four
// 8-wide fused multiply-add accumulators, then an 8-wide and a scalar tail.
// len(b) must be at least len(a).
//
//go:noescape
func dotAVX2(a, b []float32) float32

// dot is the dot product of a and b; len(a) == len(b).
func dot(a, b []float32) float32 {
	if useAVX2 {
		return dotAVX2(a, b)
	}
	return dotGeneric(a, b)
}

// dotInt8AVX2 is implemented in dot_amd64.s: Σ q[i]·c[i] over the first
// len(q)&^15 items, sixteen at a time (sign-extend c to int16, VPMADDWD).
// len(c) must be at least len(q).
//
//go:noescape
func dotInt8AVX2(q []int16, c []int8) int32

// fastInt8 reports whether the integer kernel is fast enough for screening to pay.
func fastInt8() bool { return useAVX2 }

// dotInt8 is Σ q[i]·c[i] over len(q) items; len(c) >= len(q).
func dotInt8(q []int16, c []int8) int32 {
	if !useAVX2 {
		return dotInt8Generic(q, c)
	}
	n := len(q) &^ 15
	s := dotInt8AVX2(q, c)
	if n < len(q) {
		s += dotInt8Generic(q[n:], c[n:])
	}
	return s
}

// dotF32Int8x2AVX2 is implemented in dot_amd64.s: Σ q[i]·c[i] and
// Σ q[i]·f[i] over the first len(q)&^15 items, sixteen at a time (codes
// widened to float32, fused multiply-adds). len(c) and len(f) must be at
// least len(q).
//
//go:noescape
func dotF32Int8x2AVX2(q []float32, c, f []int8) (sc, sf float32)

// dotF32Int8x2 is Σ q[i]·c[i] and Σ q[i]·f[i] over len(q) items; len(c)
// and len(f) are at least len(q).
func dotF32Int8x2(q []float32, c, f []int8) (sc, sf float32) {
	if !useAVX2 {
		return dotF32Int8x2Generic(q, c, f)
	}
	n := len(q) &^ 15
	sc, sf = dotF32Int8x2AVX2(q, c, f)
	if n < len(q) {
		tc, tf := dotF32Int8x2Generic(q[n:], c[n:], f[n:])
		sc, sf = sc+tc, sf+tf
	}
	return sc, sf
}

// prefetchLines is implemented in dot_amd64.s: PREFETCHT0 on each 64-byte
// line of p[0:n], n > 0.
//
//go:noescape
func prefetchLines(p *int8, n int)

// prefetch asks the CPU to bring c into cache ahead of its use, so that the
// memory loads of rows scored one after another overlap instead of each
// waiting on DRAM in turn (rows of a large matrix read in no sequential
// order: a filter's rows, a graph walk's neighbours).
func prefetch(c []int8) {
	if len(c) > 0 {
		prefetchLines(&c[0], len(c))
	}
}

// sketchBlocksAVX2 is implemented in sign_amd64.s: sketchBlocksGeneric with
// AVX2, two VPSHUFB lookups a byte column of 32 rows, then the estimates
// eight at a time. cols must be even.
//
//go:noescape
func sketchBlocksAVX2(tables, blocks []byte, cols int, out []uint16, inv []float32, pop []uint16, f *[4]float32, masks []uint32)

// sketchBlocks is sketchBlocksGeneric, in assembly where there is AVX2.
func sketchBlocks(sq *signQuery, blocks []byte, cols int, out []uint16, inv []float32, pop []uint16, floor float32, masks []uint32) {
	if useAVX2 && cols%2 == 0 && len(out) >= 32 {
		f := [4]float32{sq.twoDelta, sq.twoLo, sq.sum, floor}
		sketchBlocksAVX2(sq.tables, blocks, cols, out, inv, pop, &f, masks)
		return
	}
	sketchBlocksGeneric(sq, blocks, cols, out, inv, pop, floor, masks)
}
