//go:build !amd64 || purego

package linalg

func testKernels() []*kernel { return kernels() }
