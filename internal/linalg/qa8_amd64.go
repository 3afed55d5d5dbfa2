//go:build amd64 && !purego

package linalg

import "golang.org/x/sys/cpu"

// The int8-activation micro-kernels in qa8kern_amd64.s, written by
// gen_qkern.go (go generate, with qkern_amd64.s): a tile of 2, 4, … 16
// rows of int8 A times one Q4_0 or Q8_0 panel (AVX-512 F, BW and VNNI).

//go:noescape
func kernQA8Q4AVX512_2x16(kb int, a []byte, b []byte, c []float32, ldc int, bias []float32)

//go:noescape
func kernQA8Q4AVX512_4x16(kb int, a []byte, b []byte, c []float32, ldc int, bias []float32)

//go:noescape
func kernQA8Q4AVX512_6x16(kb int, a []byte, b []byte, c []float32, ldc int, bias []float32)

//go:noescape
func kernQA8Q4AVX512_8x16(kb int, a []byte, b []byte, c []float32, ldc int, bias []float32)

//go:noescape
func kernQA8Q4AVX512_10x16(kb int, a []byte, b []byte, c []float32, ldc int, bias []float32)

//go:noescape
func kernQA8Q4AVX512_12x16(kb int, a []byte, b []byte, c []float32, ldc int, bias []float32)

//go:noescape
func kernQA8Q4AVX512_14x16(kb int, a []byte, b []byte, c []float32, ldc int, bias []float32)

//go:noescape
func kernQA8Q4AVX512_16x16(kb int, a []byte, b []byte, c []float32, ldc int, bias []float32)

//go:noescape
func kernQA8Q8AVX512_2x16(kb int, a []byte, b []byte, c []float32, ldc int, bias []float32)

//go:noescape
func kernQA8Q8AVX512_4x16(kb int, a []byte, b []byte, c []float32, ldc int, bias []float32)

//go:noescape
func kernQA8Q8AVX512_6x16(kb int, a []byte, b []byte, c []float32, ldc int, bias []float32)

//go:noescape
func kernQA8Q8AVX512_8x16(kb int, a []byte, b []byte, c []float32, ldc int, bias []float32)

//go:noescape
func kernQA8Q8AVX512_10x16(kb int, a []byte, b []byte, c []float32, ldc int, bias []float32)

//go:noescape
func kernQA8Q8AVX512_12x16(kb int, a []byte, b []byte, c []float32, ldc int, bias []float32)

//go:noescape
func kernQA8Q8AVX512_14x16(kb int, a []byte, b []byte, c []float32, ldc int, bias []float32)

//go:noescape
func kernQA8Q8AVX512_16x16(kb int, a []byte, b []byte, c []float32, ldc int, bias []float32)

// avx512QA8 is the int8-activation kernel set where the CPU has AVX-512
// VNNI (and BW, for VPSHUFB).
var avx512QA8 = &qa8Kernel{
	name: "avx512-vnni",
	fns: [2][8]qa8Fn{
		Q4_0: {kernQA8Q4AVX512_2x16, kernQA8Q4AVX512_4x16, kernQA8Q4AVX512_6x16, kernQA8Q4AVX512_8x16,
			kernQA8Q4AVX512_10x16, kernQA8Q4AVX512_12x16, kernQA8Q4AVX512_14x16, kernQA8Q4AVX512_16x16},
		Q8_0: {kernQA8Q8AVX512_2x16, kernQA8Q8AVX512_4x16, kernQA8Q8AVX512_6x16, kernQA8Q8AVX512_8x16,
			kernQA8Q8AVX512_10x16, kernQA8Q8AVX512_12x16, kernQA8Q8AVX512_14x16, kernQA8Q8AVX512_16x16},
	},
}

// qa8Kernels lists the int8-activation kernels this machine can run, best
// first.
func qa8Kernels() []*qa8Kernel {
	if cpu.X86.HasAVX512F && cpu.X86.HasAVX512VNNI && cpu.X86.HasAVX512BW {
		return []*qa8Kernel{avx512QA8}
	}
	return nil
}

// quantBlock8AVX512 is quantizeBlock8 for a finite block of scale at least
// 2⁻¹²⁶, writing the row's bytes, scale (at sOff) and correction (at
// cOff) where packA puts them; false for any other block, untouched.
//
//go:noescape
func quantBlock8AVX512(dst []byte, src []float32, sOff, cOff int, corr int32) bool

// useQA8Quant selects quantBlock8AVX512; tests turn it off.
var useQA8Quant = cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW

func quantBlock8Fast(dst []byte, src []float32, sOff, cOff int, corr int32) bool {
	return useQA8Quant && quantBlock8AVX512(dst, src, sOff, cOff, corr)
}
