package vector

// Dot returns the dot product of a and b over the first min(len(a), len(b))
// components. On amd64 with AVX2 and FMA it runs in assembly; elsewhere (or
// built with the purego tag) it is a plain Go loop with eight accumulators.
func Dot(a, b []float32) float32 {
	n := min(len(a), len(b))
	return dot(a[:n], b[:n])
}

// dotGeneric is the portable dot product. Eight independent accumulators
// break the add-latency chain so the loop runs at load throughput instead of
// one add per four cycles; it was ~22% faster than the plain loop at 384-d.
// len(b) must be at least len(a).
func dotGeneric(a, b []float32) float32 {
	n := len(a)
	b = b[:n]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	i := 0
	for ; i+8 <= n; i += 8 {
		aa := a[i : i+8 : i+8]
		bb := b[i : i+8 : i+8]
		s0 += aa[0] * bb[0]
		s1 += aa[1] * bb[1]
		s2 += aa[2] * bb[2]
		s3 += aa[3] * bb[3]
		s4 += aa[4] * bb[4]
		s5 += aa[5] * bb[5]
		s6 += aa[6] * bb[6]
		s7 += aa[7] * bb[7]
	}
	for ; i < n; i++ {
		s0 += a[i] * b[i]
	}
	return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
}
