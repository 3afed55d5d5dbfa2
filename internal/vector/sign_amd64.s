//go:build amd64 && !purego

#include "textflag.h"

// func sketchBlocksAVX2(tables, blocks []byte, cols int, out []uint16, inv []float32, pop []uint16, f *[4]float32, masks []uint32)
// Requires AVX2; cols even and positive; len(out) a multiple of 32, with
// len(blocks) >= len(out)*cols and len(tables) >= 64*cols. For each block
// of 32 rows, byte column m (32 bytes, one a row) is split into nibbles,
// looked up in the tables of groups 2m (low) and 2m+1 (high), and summed:
// at most 120 a byte, 240 for two columns, then added into 16-bit sums of
// the even rows (Y10) and the odd rows (Y11). Those go to out[32b:32b+16]
// and out[32b+16:32b+32]. Then each row's estimate, in the same order,
// inv·((f[0]·s + f[1]·pop) − f[2]) as signQuery.estimate computes it, is
// compared with f[3]: bit j of masks[b] is set when slot j's is at least it.
// Each column pair first prefetches the line 4 KB (two blocks) on: over 64
// MB of blocks, beyond the caches, that took one core from 9.0 to 6.3 ns a
// row (BenchmarkSketchBlocks/kernel, load ~1; 2 KB ahead 6.9, 8 KB 6.2,
// PREFETCHNTA 6.6), against 4.2 ns for blocks in cache (-short). Prefetches
// past the end of blocks do not fault.
// ESTIMATE sets bits invOff/4 to invOff/4+7 of AX where the slots from
// invOff/4 (sums in x, scales at invOff(R11), popcounts at popOff(R12))
// have an estimate of at least Y8. Clobbers Y0, Y1 and CX.
#define ESTIMATE(x, invOff, popOff) \
	VPMOVZXWD x, Y0                \
	VCVTDQ2PS Y0, Y0               \
	VPMOVZXWD popOff(R12), Y1      \
	VCVTDQ2PS Y1, Y1               \
	VMULPS    Y13, Y0, Y0          \
	VMULPS    Y12, Y1, Y1          \
	VADDPS    Y1, Y0, Y0           \
	VSUBPS    Y9, Y0, Y0           \
	VMULPS    invOff(R11), Y0, Y0  \
	VCMPPS    $0x0d, Y8, Y0, Y0    \
	VMOVMSKPS Y0, CX               \
	SHLQ      $(invOff/4), CX      \
	ORQ       CX, AX

TEXT ·sketchBlocksAVX2(SB), NOSPLIT, $0-160
	MOVQ tables_base+0(FP), SI
	MOVQ blocks_base+24(FP), DI
	MOVQ cols+48(FP), R10
	MOVQ out_base+56(FP), R8
	MOVQ out_len+64(FP), R9
	MOVQ inv_base+80(FP), R11
	MOVQ pop_base+104(FP), R12
	MOVQ f+128(FP), AX
	VBROADCASTSS 0(AX), Y13       // 2Δ
	VBROADCASTSS 4(AX), Y12       // 2lo
	VBROADCASTSS 8(AX), Y9        // Σ
	VBROADCASTSS 12(AX), Y8       // floor
	MOVQ masks_base+136(FP), R13
	MOVQ $0x0f0f0f0f0f0f0f0f, AX
	MOVQ AX, X15
	VPBROADCASTQ X15, Y15         // low nibble of each byte
	MOVQ $0x00ff00ff00ff00ff, AX
	MOVQ AX, X14
	VPBROADCASTQ X14, Y14         // low byte of each word
	XORQ BX, BX                   // rows done

block:
	CMPQ  BX, R9
	JGE   done
	VPXOR Y10, Y10, Y10
	VPXOR Y11, Y11, Y11
	MOVQ  SI, CX                  // tables of column m
	XORQ  DX, DX                  // column m

col:
	PREFETCHT0 4096(DI)           // a line two blocks ahead
	VMOVDQU (DI), Y0
	VPSRLW  $4, Y0, Y1
	VPAND   Y15, Y0, Y0
	VPAND   Y15, Y1, Y1
	VMOVDQU (CX), Y2
	VMOVDQU 32(CX), Y3
	VPSHUFB Y0, Y2, Y0
	VPSHUFB Y1, Y3, Y1
	VPADDB  Y1, Y0, Y5
	VMOVDQU 32(DI), Y0
	VPSRLW  $4, Y0, Y1
	VPAND   Y15, Y0, Y0
	VPAND   Y15, Y1, Y1
	VMOVDQU 64(CX), Y2
	VMOVDQU 96(CX), Y3
	VPSHUFB Y0, Y2, Y0
	VPSHUFB Y1, Y3, Y1
	VPADDB  Y1, Y0, Y0
	VPADDB  Y0, Y5, Y5
	VPAND   Y14, Y5, Y6           // even rows' bytes, as words
	VPSRLW  $8, Y5, Y5            // odd rows' bytes, as words
	VPADDW  Y6, Y10, Y10
	VPADDW  Y5, Y11, Y11
	ADDQ    $64, DI
	ADDQ    $128, CX
	ADDQ    $2, DX
	CMPQ    DX, R10
	JLT     col

	VMOVDQU Y10, (R8)(BX*2)
	VMOVDQU Y11, 32(R8)(BX*2)

	// Estimates of slots 0–7, 8–15 (even rows), 16–23, 24–31 (odd rows).
	XORQ AX, AX
	ESTIMATE(X10, 0, 0)
	VEXTRACTI128 $1, Y10, X7
	ESTIMATE(X7, 32, 16)
	ESTIMATE(X11, 64, 32)
	VEXTRACTI128 $1, Y11, X7
	ESTIMATE(X7, 96, 48)
	MOVL AX, (R13)
	ADDQ $4, R13
	ADDQ $128, R11
	ADDQ $64, R12
	ADDQ    $32, BX
	JMP     block

done:
	VZEROUPPER
	RET
