//go:build amd64 && !purego

package linalg

import "golang.org/x/sys/cpu"

//go:generate go run gen_kernels.go

// The assembly micro-kernels in kernel_amd64.s, written by gen_kernels.go.
// Each needs the instruction set in its name (AVX512 means AVX-512F).

//go:noescape
func kernAVX2_6x16(kc int, a []float32, lda int, b, c []float32, ldc, mode int, bias []float32)

//go:noescape
func kernAVX2F16_6x16(kc int, a []float32, lda int, b []uint16, c []float32, ldc, mode int, bias []float32)

//go:noescape
func kernAVX2_4x16(kc int, a []float32, lda int, b, c []float32, ldc, mode int, bias []float32)

//go:noescape
func kernAVX2F16_4x16(kc int, a []float32, lda int, b []uint16, c []float32, ldc, mode int, bias []float32)

//go:noescape
func kernAVX2_2x16(kc int, a []float32, lda int, b, c []float32, ldc, mode int, bias []float32)

//go:noescape
func kernAVX2F16_2x16(kc int, a []float32, lda int, b []uint16, c []float32, ldc, mode int, bias []float32)

var (
	hasAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA
	hasF16C = hasAVX2 && cpu.X86.HasF16C

	avx2Kernel = &kernel{name: "avx2", mr: 6, nr: 16, fn: kernAVX2_6x16, kc: 2048, mc: 96, nc: 1 << 20,
		short: fourAndTwo(
			&kernel{name: "avx2-2", mr: 2, nr: 16, fn: kernAVX2_2x16},
			&kernel{name: "avx2-4", mr: 4, nr: 16, fn: kernAVX2_4x16})}
	// avx2F16Kernel is avx2Kernel reading float16 panels: the same tile,
	// blocking and order of sums.
	avx2F16Kernel = &kernel{name: "avx2-f16", mr: 6, nr: 16, fn16: kernAVX2F16_6x16, kc: 2048, mc: 96, nc: 1 << 20,
		short: fourAndTwo(
			&kernel{name: "avx2-f16-2", mr: 2, nr: 16, fn16: kernAVX2F16_2x16},
			&kernel{name: "avx2-f16-4", mr: 4, nr: 16, fn16: kernAVX2F16_4x16})}
)

// fourAndTwo is the short kernels of a 6-row kernel: two rows for one or
// two, four for three or four (five take the full tile).
func fourAndTwo(two, four *kernel) []*kernel { return []*kernel{two, two, four, four} }

// f16Kernels lists the float16-panel micro-kernels this machine can run,
// best first; none means PackedF16 products decode the panels at first use.
func f16Kernels() []*kernel {
	if hasF16C {
		return []*kernel{avx2F16Kernel}
	}
	return nil
}

// kernels lists the micro-kernels this machine can run, best first.
func kernels() []*kernel {
	var ks []*kernel
	if hasAVX2 {
		ks = append(ks, avx2Kernel)
	}
	return append(ks, generic)
}

//go:noescape
func kernVNNI_6x64(kc4 int, a []uint8, b []int8, c []float32, ldc int, rowScale, colScale []float32, comp []int32, bias []float32)

var hasVNNI = cpu.X86.HasAVX512F && cpu.X86.HasAVX512VNNI

// qkernels lists the int8 micro-kernels this machine can run, best first.
func qkernels() []*qkernel {
	var ks []*qkernel
	if hasVNNI {
		ks = append(ks, &qkernel{name: "vnni-6x64", mr: 6, nr: 64, fn: kernVNNI_6x64})
	}
	return append(ks, qgeneric)
}

// quantRowAVX512 is in quant_amd64.s.
//
//go:noescape
func quantRowAVX512(dst []uint8, src []float32) float32

// useQuantAsm selects quantRowAVX512; tests turn it off.
var useQuantAsm = cpu.X86.HasAVX512F

// quantizeRow sets dst[p] = round(src[p]/s) + 128 and returns s = max|src|/127.
func quantizeRow(dst []uint8, src []float32) float32 {
	if useQuantAsm && len(src) > 0 {
		return quantRowAVX512(dst, src)
	}
	return quantizeRowGeneric(dst, src)
}

//go:noescape
func kernBF16_8x48(kc2 int, a, b []uint16, c []float32, ldc, mode int, bias []float32)

var hasBF16 = cpu.X86.HasAVX512F && cpu.X86.HasAVX512BF16 && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VL

// bkernels lists the bf16 micro-kernels this machine can run, best first.
func bkernels() []*bkernel {
	var ks []*bkernel
	if hasBF16 {
		ks = append(ks, &bkernel{name: "bf16-8x48", mr: 8, nr: 48, fn: kernBF16_8x48})
	}
	return append(ks, bgeneric)
}

// toBF16RowAVX512 is in quant_amd64.s.
//
//go:noescape
func toBF16RowAVX512(dst []uint16, src []float32)

// toBF16Row rounds src to bf16 into dst (len(dst) ≥ len(src)).
func toBF16Row(dst []uint16, src []float32) {
	if hasBF16 && len(src) > 0 {
		toBF16RowAVX512(dst, src)
		return
	}
	toBF16RowGeneric(dst, src)
}
