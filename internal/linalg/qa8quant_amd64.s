//go:build amd64 && !purego

#include "textflag.h"

DATA qa8const<>+0(SB)/4, $0x7fffffff  // abs mask
DATA qa8const<>+4(SB)/4, $0x42fe0000  // 127.0
DATA qa8const<>+8(SB)/4, $0x3f800000  // 1.0
DATA qa8const<>+12(SB)/4, $0x00800000 // 2⁻¹²⁶
DATA qa8const<>+16(SB)/4, $0x7f7fffff // the largest float32
DATA qa8const<>+20(SB)/4, $127
DATA qa8const<>+24(SB)/4, $-127
GLOBL qa8const<>(SB), RODATA|NOPTR, $28

// func quantBlock8AVX512(dst []byte, src []float32, sOff, cOff int, corr int32) bool
// Requires AVX-512F and BW; len(src) ≥ 32, len(dst) ≥ max(32, sOff+4,
// cOff+4). quantizeBlock8's arithmetic for a finite block whose scale is at
// least 2⁻¹²⁶: d = max|src|/127, dst[p] = round-half-even(src[p]·(1/d))
// clamped to ±127, d at dst[sOff:], −corr·Σdst at dst[cOff:]; it returns
// true. For any other block it writes nothing and returns false.
TEXT ·quantBlock8AVX512(SB), NOSPLIT, $0-73
	MOVQ     dst_base+0(FP), DI
	MOVQ     src_base+24(FP), SI
	VMOVUPS  (SI), Z0
	VMOVUPS  64(SI), Z1
	VCMPPS   $3, Z0, Z0, K1 // NaN lanes
	VCMPPS   $3, Z1, Z1, K2
	KORW     K1, K2, K1
	KORTESTW K1, K1
	JNZ      slow

	VPBROADCASTD  qa8const<>+0(SB), Z7
	VPANDD        Z0, Z7, Z2
	VPANDD        Z1, Z7, Z3
	VMAXPS        Z3, Z2, Z2
	VEXTRACTF32X8 $1, Z2, Y3
	VMAXPS        Y3, Y2, Y2
	VEXTRACTF128  $1, Y2, X3
	VMAXPS        X3, X2, X2
	VPERMILPS     $0x4e, X2, X3
	VMAXPS        X3, X2, X2
	VPERMILPS     $0xb1, X2, X3
	VMAXPS        X3, X2, X2             // max|src|
	VDIVSS        qa8const<>+4(SB), X2, X2 // d
	VUCOMISS      qa8const<>+12(SB), X2
	JCS           slow                   // d < 2⁻¹²⁶
	VUCOMISS      qa8const<>+16(SB), X2
	JHI           slow                   // d infinite

	VMOVSS       qa8const<>+8(SB), X3
	VDIVSS       X2, X3, X3 // 1/d
	VBROADCASTSS X3, Z3
	VMULPS       Z3, Z0, Z0
	VMULPS       Z3, Z1, Z1
	VCVTPS2DQ    Z0, Z0
	VCVTPS2DQ    Z1, Z1
	VPBROADCASTD qa8const<>+20(SB), Z4
	VPBROADCASTD qa8const<>+24(SB), Z5
	VPMINSD      Z4, Z0, Z0
	VPMAXSD      Z5, Z0, Z0
	VPMINSD      Z4, Z1, Z1
	VPMAXSD      Z5, Z1, Z1
	VPMOVDB      Z0, (DI)
	VPMOVDB      Z1, 16(DI)

	VPADDD        Z1, Z0, Z0
	VEXTRACTI32X8 $1, Z0, Y1
	VPADDD        Y1, Y0, Y0
	VEXTRACTI128  $1, Y0, X1
	VPADDD        X1, X0, X0
	VPSHUFD       $0x4e, X0, X1
	VPADDD        X1, X0, X0
	VPSHUFD       $0xb1, X0, X1
	VPADDD        X1, X0, X0
	VMOVD         X0, AX
	IMULL         corr+64(FP), AX
	NEGL          AX
	MOVQ          sOff+48(FP), R8
	VMOVSS        X2, (DI)(R8*1)
	MOVQ          cOff+56(FP), R9
	MOVL          AX, (DI)(R9*1)
	MOVB          $1, ret+72(FP)
	VZEROUPPER
	RET

slow:
	MOVB $0, ret+72(FP)
	VZEROUPPER
	RET
