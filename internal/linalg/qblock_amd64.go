//go:build amd64 && !purego

package linalg

import "golang.org/x/sys/cpu"

//go:generate go run gen_qkern.go

// The fused block-quantised micro-kernels in qkern_amd64.s, written by
// gen_qkern.go: a tile of 2, 4, … 16 rows of packed A times one Q4_0, Q8_0
// or float16 panel (AVX-512F).

//go:noescape
func kernQ4AVX512_2x16(kb int, a []float32, b []byte, c []float32, ldc, mode int, bias []float32)

//go:noescape
func kernQ4AVX512_4x16(kb int, a []float32, b []byte, c []float32, ldc, mode int, bias []float32)

//go:noescape
func kernQ4AVX512_6x16(kb int, a []float32, b []byte, c []float32, ldc, mode int, bias []float32)

//go:noescape
func kernQ4AVX512_8x16(kb int, a []float32, b []byte, c []float32, ldc, mode int, bias []float32)

//go:noescape
func kernQ4AVX512_10x16(kb int, a []float32, b []byte, c []float32, ldc, mode int, bias []float32)

//go:noescape
func kernQ4AVX512_12x16(kb int, a []float32, b []byte, c []float32, ldc, mode int, bias []float32)

//go:noescape
func kernQ4AVX512_14x16(kb int, a []float32, b []byte, c []float32, ldc, mode int, bias []float32)

//go:noescape
func kernQ4AVX512_16x16(kb int, a []float32, b []byte, c []float32, ldc, mode int, bias []float32)

//go:noescape
func kernQ8AVX512_2x16(kb int, a []float32, b []byte, c []float32, ldc, mode int, bias []float32)

//go:noescape
func kernQ8AVX512_4x16(kb int, a []float32, b []byte, c []float32, ldc, mode int, bias []float32)

//go:noescape
func kernQ8AVX512_6x16(kb int, a []float32, b []byte, c []float32, ldc, mode int, bias []float32)

//go:noescape
func kernQ8AVX512_8x16(kb int, a []float32, b []byte, c []float32, ldc, mode int, bias []float32)

//go:noescape
func kernQ8AVX512_10x16(kb int, a []float32, b []byte, c []float32, ldc, mode int, bias []float32)

//go:noescape
func kernQ8AVX512_12x16(kb int, a []float32, b []byte, c []float32, ldc, mode int, bias []float32)

//go:noescape
func kernQ8AVX512_14x16(kb int, a []float32, b []byte, c []float32, ldc, mode int, bias []float32)

//go:noescape
func kernQ8AVX512_16x16(kb int, a []float32, b []byte, c []float32, ldc, mode int, bias []float32)

//go:noescape
func kernF16AVX512_2x16(kb int, a []float32, b []byte, c []float32, ldc, mode int, bias []float32)

//go:noescape
func kernF16AVX512_4x16(kb int, a []float32, b []byte, c []float32, ldc, mode int, bias []float32)

//go:noescape
func kernF16AVX512_6x16(kb int, a []float32, b []byte, c []float32, ldc, mode int, bias []float32)

//go:noescape
func kernF16AVX512_8x16(kb int, a []float32, b []byte, c []float32, ldc, mode int, bias []float32)

//go:noescape
func kernF16AVX512_10x16(kb int, a []float32, b []byte, c []float32, ldc, mode int, bias []float32)

//go:noescape
func kernF16AVX512_12x16(kb int, a []float32, b []byte, c []float32, ldc, mode int, bias []float32)

//go:noescape
func kernF16AVX512_14x16(kb int, a []float32, b []byte, c []float32, ldc, mode int, bias []float32)

//go:noescape
func kernF16AVX512_16x16(kb int, a []float32, b []byte, c []float32, ldc, mode int, bias []float32)

// avx512Q is the fused kernel set where the CPU has AVX-512F.
var avx512Q = &qKernel{
	kernel: kernel{name: "avx512-q", mr: 16, nr: 16, kc: 2048, mc: 96, nc: 1 << 20},
	fns: [3][8]qFn{
		Q4_0: {kernQ4AVX512_2x16, kernQ4AVX512_4x16, kernQ4AVX512_6x16, kernQ4AVX512_8x16,
			kernQ4AVX512_10x16, kernQ4AVX512_12x16, kernQ4AVX512_14x16, kernQ4AVX512_16x16},
		Q8_0: {kernQ8AVX512_2x16, kernQ8AVX512_4x16, kernQ8AVX512_6x16, kernQ8AVX512_8x16,
			kernQ8AVX512_10x16, kernQ8AVX512_12x16, kernQ8AVX512_14x16, kernQ8AVX512_16x16},
		f16Panels: {kernF16AVX512_2x16, kernF16AVX512_4x16, kernF16AVX512_6x16, kernF16AVX512_8x16,
			kernF16AVX512_10x16, kernF16AVX512_12x16, kernF16AVX512_14x16, kernF16AVX512_16x16},
	},
}

// qKernels lists the fused kernels this machine can run, best first; none
// means PackedQ products decode each panel for the float32 kernel.
func qKernels() []*qKernel {
	if cpu.X86.HasAVX512F {
		return []*qKernel{avx512Q}
	}
	return nil
}

// decodeQ4AVX2 and decodeQ8AVX2 are decodeQ4Generic and decodeQ8Generic
// with AVX2 and F16C, in qdecode_amd64.s: sixteen rows' values of one k step
// at a time.
//
//go:noescape
func decodeQ4AVX2(dst []float32, src []byte, blocks int)

//go:noescape
func decodeQ8AVX2(dst []float32, src []byte, blocks int)

// useQAsm selects the assembly decoders; tests turn it off.
var useQAsm = hasF16C

func decodeQ4Blocks(dst []float32, src []byte, blocks int) {
	if useQAsm {
		decodeQ4AVX2(dst, src, blocks)
		return
	}
	decodeQ4Generic(dst, src, blocks)
}

func decodeQ8Blocks(dst []float32, src []byte, blocks int) {
	if useQAsm {
		decodeQ8AVX2(dst, src, blocks)
		return
	}
	decodeQ8Generic(dst, src, blocks)
}
