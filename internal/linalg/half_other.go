//go:build !amd64 || purego

package linalg

// halves rounds src to binary16 into dst (equal lengths).
func halves(dst []uint16, src []float32) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = floatToHalf(v)
	}
}
