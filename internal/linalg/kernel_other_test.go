//go:build !amd64 || purego

package linalg

func testKernels() []*kernel { return kernels() }

// fmaKernel: no fused Q4_0 kernel runs here.
func fmaKernel() *kernel { return nil }
