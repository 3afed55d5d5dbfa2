//go:build !amd64 || purego

package vector

// hasAsm reports whether an assembly dot product is in use.
const hasAsm = false

// dot is the dot product of a and b; len(a) == len(b).
func dot(a, b []float32) float32 { return dotGeneric(a, b) }

// fastInt8 reports whether the integer kernel is fast enough for screening
// to pay: the portable loop is not, so Search scores every row in float32.
func fastInt8() bool { return false }

// dotInt8 is Σ q[i]·c[i] over len(q) items; len(c) >= len(q).
func dotInt8(q []int16, c []int8) int32 { return dotInt8Generic(q, c) }

// dotF32Int8x2 is Σ q[i]·c[i] and Σ q[i]·f[i] over len(q) items.
func dotF32Int8x2(q []float32, c, f []int8) (sc, sf float32) { return dotF32Int8x2Generic(q, c, f) }

// prefetch is a no-op without the assembly kernels.
func prefetch(c []int8) {}

// sketchBlocks is sketchBlocksGeneric.
func sketchBlocks(sq *signQuery, blocks []byte, cols int, out []uint16, inv []float32, pop []uint16, floor float32, masks []uint32) {
	sketchBlocksGeneric(sq, blocks, cols, out, inv, pop, floor, masks)
}
