//go:build amd64 && !purego

#include "textflag.h"

// The bf16 pairs of float16 panels (bf16f16.go): for each pair of k steps,
// the two 16-value rows of a float16 panel become 16 dwords, each the
// column's two values rounded to bf16 (the first in the low half), as the
// bf16 kernels read B. VCVTPH2PS is exact; VCVTNE2PS2BF16 rounds to nearest
// even, as toBF16 does.

// VPERMW indices: word 2i of the result is word i (row k), word 2i+1 is
// word 16+i (row k+1).
DATA bf16PairIndex<>+0(SB)/8, $0x0011000100100000
DATA bf16PairIndex<>+8(SB)/8, $0x0013000300120002
DATA bf16PairIndex<>+16(SB)/8, $0x0015000500140004
DATA bf16PairIndex<>+24(SB)/8, $0x0017000700160006
DATA bf16PairIndex<>+32(SB)/8, $0x0019000900180008
DATA bf16PairIndex<>+40(SB)/8, $0x001b000b001a000a
DATA bf16PairIndex<>+48(SB)/8, $0x001d000d001c000c
DATA bf16PairIndex<>+56(SB)/8, $0x001f000f001e000e
GLOBL bf16PairIndex<>(SB), RODATA|NOPTR, $64

// func f16PairsBF16(dst, src *uint16, pairs, stride int)
// Reads pairs×32 float16 values from src (two rows of 16 per pair) and
// writes each pair's 16 dwords at dst, then dst+stride bytes, and so on.
TEXT ·f16PairsBF16(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ pairs+16(FP), CX
	MOVQ stride+24(FP), DX
	TESTQ CX, CX
	JZ   done
	VMOVDQU16 bf16PairIndex<>(SB), Z2
loop:
	VCVTPH2PS (SI), Z0
	VCVTPH2PS 32(SI), Z1
	BYTE $0x62; BYTE $0xF2; BYTE $0x77; BYTE $0x48; BYTE $0x72; BYTE $0xD8 // VCVTNE2PS2BF16 Z0, Z1, Z3 (Z3: bf16 of Z0 low, of Z1 high)
	VPERMW Z3, Z2, Z3
	VMOVDQU16 Z3, (DI)
	ADDQ $64, SI
	ADDQ DX, DI
	DECQ CX
	JNZ  loop
	VZEROUPPER
done:
	RET
