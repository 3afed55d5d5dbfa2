//go:build amd64 && !purego

package linalg

// All the micro-kernels are tested on this machine, whatever active is.
func testKernels() []*kernel { return kernels() }
