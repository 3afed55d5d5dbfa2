//go:build amd64 && !purego

package linalg

import "golang.org/x/sys/cpu"

//go:generate go run gen_kernels.go

// The assembly micro-kernels in kernel_amd64.s, written by gen_kernels.go.
// Each needs the instruction set in its name (AVX512 means AVX-512F).

//go:noescape
func kernAVX2_6x16(kc int, a, b, c []float32, ldc, mode int, bias []float32)

//go:noescape
func kernAVX512_12x32(kc int, a, b, c []float32, ldc, mode int, bias []float32)

//go:noescape
func kernAVX512_8x48(kc int, a, b, c []float32, ldc, mode int, bias []float32)

//go:noescape
func kernAVX512_14x32(kc int, a, b, c []float32, ldc, mode int, bias []float32)

//go:noescape
func kernAVX512_6x64(kc int, a, b, c []float32, ldc, mode int, bias []float32)

var (
	hasAVX2   = cpu.X86.HasAVX2 && cpu.X86.HasFMA
	hasAVX512 = cpu.X86.HasAVX512F

	avx2Kernel     = &kernel{name: "avx2", mr: 6, nr: 16, fn: kernAVX2_6x16, kc: 256, mc: 96, nc: 1 << 20}
	avx512Kernel   = &kernel{name: "avx512", mr: 12, nr: 32, fn: kernAVX512_12x32, kc: 256, mc: 96, nc: 1 << 20}
	avx512Kernel8  = &kernel{name: "avx512-8x48", mr: 8, nr: 48, fn: kernAVX512_8x48, kc: 256, mc: 96, nc: 1 << 20}
	avx512Kernel14 = &kernel{name: "avx512-14x32", mr: 14, nr: 32, fn: kernAVX512_14x32, kc: 256, mc: 96, nc: 1 << 20}
	avx512Kernel6  = &kernel{name: "avx512-6x64", mr: 6, nr: 64, fn: kernAVX512_6x64, kc: 256, mc: 96, nc: 1 << 20}
)

// kernels lists the micro-kernels this machine can run, best first.
func kernels() []*kernel {
	var ks []*kernel
	if hasAVX512 {
		ks = append(ks, avx512Kernel, avx512Kernel8, avx512Kernel14, avx512Kernel6)
	}
	if hasAVX2 {
		ks = append(ks, avx2Kernel)
	}
	return append(ks, generic)
}
