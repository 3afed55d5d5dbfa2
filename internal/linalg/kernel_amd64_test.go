//go:build amd64 && !purego

package linalg

// All the micro-kernels are tested on this machine, whatever active is.
func testKernels() []*kernel { return kernels() }

// fmaKernel is the float32 kernel whose sums the fused Q4_0 kernels give:
// the AVX2 one, every product added in k order with FMA.
func fmaKernel() *kernel { return avx2Kernel }
