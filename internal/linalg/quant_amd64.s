//go:build amd64 && !purego

#include "textflag.h"

DATA qconst<>+0(SB)/4, $0x7fffffff // abs mask
DATA qconst<>+4(SB)/4, $0x42fe0000 // 127.0
DATA qconst<>+8(SB)/4, $0x3f800000 // 1.0
DATA qconst<>+12(SB)/4, $128
GLOBL qconst<>(SB), RODATA|NOPTR, $16

// func quantRowAVX512(dst []uint8, src []float32) float32
// Requires AVX-512F; len(dst) ≥ len(src) ≥ 1. Returns s = max|src|/127 and
// sets dst[p] = round-half-even(src[p]·(1/s)) + 128 (all 128 when s = 0).
TEXT ·quantRowAVX512(SB), NOSPLIT, $0-52
	MOVQ         dst_base+0(FP), DI
	MOVQ         src_base+24(FP), SI
	MOVQ         src_len+32(FP), CX
	VPBROADCASTD qconst<>+0(SB), Z7
	MOVQ         CX, BX
	SHRQ         $4, BX                 // full vectors
	ANDQ         $15, CX
	MOVL         $1, AX
	SHLL         CX, AX
	DECL         AX
	KMOVW        AX, K1                 // tail lanes

	VPXORD Z0, Z0, Z0
	MOVQ   SI, R8
	MOVQ   BX, DX
	TESTQ  DX, DX
	JZ     max_tail

max_loop:
	VPANDD (R8), Z7, Z1
	VMAXPS Z1, Z0, Z0
	ADDQ   $64, R8
	DECQ   DX
	JNZ    max_loop

max_tail:
	VMOVUPS.Z    (R8), K1, Z1
	VPANDD       Z1, Z7, Z1
	VMAXPS       Z1, Z0, Z0
	VEXTRACTF32X8 $1, Z0, Y1
	VMAXPS       Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VMAXPS       X1, X0, X0
	VPERMILPS    $0x4e, X0, X1
	VMAXPS       X1, X0, X0
	VPERMILPS    $0xb1, X0, X1
	VMAXPS       X1, X0, X0          // max|src|
	VDIVSS       qconst<>+4(SB), X0, X0 // s = max/127
	VMOVSS       X0, ret+48(FP)
	VXORPS       X2, X2, X2
	VUCOMISS     X2, X0
	JEQ          zero
	VMOVSS       qconst<>+8(SB), X1
	VDIVSS       X0, X1, X1          // 1/s
	JMP          quant

zero:
	VXORPS X1, X1, X1

quant:
	VBROADCASTSS X1, Z1
	VPBROADCASTD qconst<>+12(SB), Z6
	MOVQ         BX, DX
	TESTQ        DX, DX
	JZ           q_tail

q_loop:
	VMULPS    (SI), Z1, Z2
	VCVTPS2DQ Z2, Z2
	VPADDD    Z6, Z2, Z2
	VPMOVUSDB Z2, (DI)
	ADDQ      $64, SI
	ADDQ      $16, DI
	DECQ      DX
	JNZ       q_loop

q_tail:
	VMOVUPS.Z (SI), K1, Z2
	VMULPS    Z2, Z1, Z2
	VCVTPS2DQ Z2, Z2
	VPADDD    Z6, Z2, Z2
	VPMOVUSDB Z2, K1, (DI)
	VZEROUPPER
	RET

// func toBF16RowAVX512(dst []uint16, src []float32)
// Requires AVX512_BF16, AVX512BW and AVX512VL; len(dst) ≥ len(src) ≥ 1.
// Rounds src to bf16 (nearest, ties to even) with VCVTNEPS2BF16, which the
// Go assembler does not know: it is spelled out as bytes (Z0 → Y1).
TEXT ·toBF16RowAVX512(SB), NOSPLIT, $0-48
	MOVQ  dst_base+0(FP), DI
	MOVQ  src_base+24(FP), SI
	MOVQ  src_len+32(FP), CX
	MOVQ  CX, BX
	SHRQ  $4, BX
	ANDQ  $15, CX
	MOVL  $1, AX
	SHLL  CX, AX
	DECL  AX
	KMOVW AX, K1
	TESTQ BX, BX
	JZ    tail

loop:
	VMOVUPS (SI), Z0
	BYTE $0x62; BYTE $0xf2; BYTE $0x7e; BYTE $0x48; BYTE $0x72; BYTE $0xc8 // VCVTNEPS2BF16 Z0, Y1
	VMOVDQU Y1, (DI)
	ADDQ    $64, SI
	ADDQ    $32, DI
	DECQ    BX
	JNZ     loop

tail:
	VMOVUPS.Z (SI), K1, Z0
	BYTE $0x62; BYTE $0xf2; BYTE $0x7e; BYTE $0x48; BYTE $0x72; BYTE $0xc8 // VCVTNEPS2BF16 Z0, Y1
	VMOVDQU16 Y1, K1, (DI)
	VZEROUPPER
	RET
