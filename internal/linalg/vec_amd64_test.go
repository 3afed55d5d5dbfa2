//go:build amd64 && !purego

package linalg

import "testing"

// vecPaths lists the vector-kernel paths this machine can run.
func vecPaths() []string {
	if hasAVX2 {
		return []string{"generic", "avx2"}
	}
	return []string{"generic"}
}

// useVec makes GELU and Softmax take the named path until the test ends.
func useVec(tb testing.TB, name string) {
	tb.Helper()
	saved := useVecAVX2
	useVecAVX2 = name == "avx2"
	tb.Cleanup(func() { useVecAVX2 = saved })
}
