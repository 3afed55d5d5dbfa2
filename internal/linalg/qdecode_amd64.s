//go:build amd64 && !purego

#include "textflag.h"

// func decodeQ4AVX2(dst []float32, src []byte, blocks int)
//
// Per panel block (288 bytes at SI): the 16 scales d to float32
// (Y8: rows 0–7, Y9: rows 8–15); then for each of the 16 byte groups t, the
// low nibbles are k step t and the high ones k step t+16, each value
// (q−8)·d, exact, stored 16 rows wide.
TEXT ·decodeQ4AVX2(SB), NOSPLIT, $0-56
	MOVQ dst_base+0(FP), DI
	MOVQ src_base+24(FP), SI
	MOVQ blocks+48(FP), CX
	MOVL $0x0f, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Y15
	MOVL $8, AX
	VMOVD AX, X14
	VPBROADCASTD X14, Y14

block:
	VCVTPH2PS (SI), Y8
	VCVTPH2PS 16(SI), Y9
	LEAQ 32(SI), R8
	MOVQ DI, R9
	MOVQ $16, BX

group:
	VPMOVZXBD (R8), Y0
	VPMOVZXBD 8(R8), Y1
	VPAND Y15, Y0, Y2
	VPAND Y15, Y1, Y3
	VPSRLD $4, Y0, Y0
	VPSRLD $4, Y1, Y1
	VPSUBD Y14, Y2, Y2
	VPSUBD Y14, Y3, Y3
	VPSUBD Y14, Y0, Y0
	VPSUBD Y14, Y1, Y1
	VCVTDQ2PS Y2, Y2
	VCVTDQ2PS Y3, Y3
	VCVTDQ2PS Y0, Y0
	VCVTDQ2PS Y1, Y1
	VMULPS Y8, Y2, Y2
	VMULPS Y9, Y3, Y3
	VMULPS Y8, Y0, Y0
	VMULPS Y9, Y1, Y1
	VMOVUPS Y2, (R9)
	VMOVUPS Y3, 32(R9)
	VMOVUPS Y0, 1024(R9)
	VMOVUPS Y1, 1056(R9)
	ADDQ $16, R8
	ADDQ $64, R9
	DECQ BX
	JNZ  group

	ADDQ $288, SI
	ADDQ $2048, DI
	DECQ CX
	JNZ  block
	VZEROUPPER
	RET

// func decodeQ8AVX2(dst []float32, src []byte, blocks int)
//
// Per panel block (544 bytes at SI): the 16 scales d to float32 (Y8: rows
// 0–7, Y9: rows 8–15); then for each k step p, its 16 rows' signed bytes,
// each value q·d, exact, stored 16 rows wide.
TEXT ·decodeQ8AVX2(SB), NOSPLIT, $0-56
	MOVQ dst_base+0(FP), DI
	MOVQ src_base+24(FP), SI
	MOVQ blocks+48(FP), CX

block8:
	VCVTPH2PS (SI), Y8
	VCVTPH2PS 16(SI), Y9
	LEAQ 32(SI), R8
	MOVQ $32, BX

step8:
	VPMOVSXBD (R8), Y0
	VPMOVSXBD 8(R8), Y1
	VCVTDQ2PS Y0, Y0
	VCVTDQ2PS Y1, Y1
	VMULPS Y8, Y0, Y0
	VMULPS Y9, Y1, Y1
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	ADDQ $16, R8
	ADDQ $64, DI
	DECQ BX
	JNZ  step8

	ADDQ $544, SI
	DECQ CX
	JNZ  block8
	VZEROUPPER
	RET
