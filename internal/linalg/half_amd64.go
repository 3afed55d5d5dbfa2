//go:build amd64 && !purego

package linalg

// halvesF16C is half_amd64.s: F16C (VCVTPS2PH), which hasF16C says.
//
//go:noescape
func halvesF16C(dst *uint16, src *float32, n int)

// halves rounds src to binary16 into dst (equal lengths): VCVTPS2PH eight at
// a time where the CPU has F16C, floatToHalf for the rest.
func halves(dst []uint16, src []float32) {
	dst = dst[:len(src)]
	i := 0
	if hasF16C {
		if i = len(src) &^ 7; i > 0 {
			halvesF16C(&dst[0], &src[0], i)
		}
	}
	for ; i < len(src); i++ {
		dst[i] = floatToHalf(src[i])
	}
}
