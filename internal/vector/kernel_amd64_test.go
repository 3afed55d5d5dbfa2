//go:build amd64 && !purego

package vector

import "testing"

// kernels lists the dot-product implementations this machine can run.
func kernels() []kernel {
	ks := []kernel{{"generic", dotGeneric}}
	if useAVX2 {
		ks = append(ks, kernel{"avx2", dotAVX2})
	}
	return ks
}

// useKernel makes dot (and so Search) use the named kernel until the test ends.
func useKernel(tb testing.TB, name string) {
	tb.Helper()
	saved := useAVX2
	useAVX2 = name == "avx2"
	tb.Cleanup(func() { useAVX2 = saved })
}
