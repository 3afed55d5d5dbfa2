//go:build amd64 && !purego

#include "textflag.h"

// Vector kernels: erf-GELU and row softmax, eight floats at a time with a
// masked load and store for the last 1–7, so no length is ever over-read.
// The constant table is vconst_amd64.h's, printed by testdata/fit_gelu.py,
// which also explains the polynomials.

#include "vconst_amd64.h"

// vmask<>+4·(8−r) holds eight int32 lane masks, the first r of them set.
DATA vmask<>+0(SB)/8, $0xffffffffffffffff
DATA vmask<>+8(SB)/8, $0xffffffffffffffff
DATA vmask<>+16(SB)/8, $0xffffffffffffffff
DATA vmask<>+24(SB)/8, $0xffffffffffffffff
DATA vmask<>+32(SB)/8, $0
DATA vmask<>+40(SB)/8, $0
DATA vmask<>+48(SB)/8, $0
DATA vmask<>+56(SB)/8, $0
GLOBL vmask<>(SB), RODATA|NOPTR, $64

// EXPPS sets v to e^v lane by lane: n = round(v·log₂e), r = v − n·ln2,
// e^v = 2ⁿ·(1 + r + r²·q(r)). Below EXP_MIN it is 0 (the true value is not a
// normal float32), above EXP_MAX it saturates at e^88, NaN stays NaN.
// t1–t4 are clobbered.
#define EXPPS(v, t1, t2, t3, t4) \
	VBROADCASTSS vconst<>+EXP_MIN(SB), t1; \
	VCMPPS       $0x15, t1, v, t4; \
	VMAXPS       v, t1, v; \
	VBROADCASTSS vconst<>+EXP_MAX(SB), t1; \
	VMINPS       v, t1, v; \
	VBROADCASTSS vconst<>+LOG2E(SB), t1; \
	VMULPS       t1, v, t1; \
	VROUNDPS     $0, t1, t1; \
	VBROADCASTSS vconst<>+LN2HI(SB), t2; \
	VFNMADD231PS t2, t1, v; \
	VBROADCASTSS vconst<>+LN2LO(SB), t2; \
	VFNMADD231PS t2, t1, v; \
	VBROADCASTSS vconst<>+EXP_Q0(SB), t2; \
	VBROADCASTSS vconst<>+EXP_Q1(SB), t3; \
	VFMADD213PS  t3, v, t2; \
	VBROADCASTSS vconst<>+EXP_Q2(SB), t3; \
	VFMADD213PS  t3, v, t2; \
	VBROADCASTSS vconst<>+EXP_Q3(SB), t3; \
	VFMADD213PS  t3, v, t2; \
	VBROADCASTSS vconst<>+EXP_Q4(SB), t3; \
	VFMADD213PS  t3, v, t2; \
	VMULPS       v, v, t3; \
	VFMADD213PS  v, t3, t2; \
	VBROADCASTSS vconst<>+ONE(SB), t3; \
	VADDPS       t3, t2, t2; \
	VCVTPS2DQ    t1, t1; \
	VPSLLD       $23, t1, t1; \
	VPADDD       t1, t2, v; \
	VANDPS       t4, v, v

// GELU8 sets Y5 to GELU(Y0) = Y0·Φ(Y0); Y1–Y9 are clobbered.
// Needs Y15 = ABS_MASK, Y14 = ONE, Y13 = HALF, Y12 = SIGN_BIT.
#define GELU8 \
	VANDPS       Y15, Y0, Y1; \
	VBROADCASTSS vconst<>+GELU_CLAMP(SB), Y2; \
	VMINPS       Y1, Y2, Y1; \
	VBROADCASTSS vconst<>+GELU_P(SB), Y2; \
	VFMADD213PS  Y14, Y1, Y2; \
	VDIVPS       Y2, Y14, Y2; \
	VBROADCASTSS vconst<>+GELU_G0(SB), Y3; \
	VBROADCASTSS vconst<>+GELU_G1(SB), Y4; \
	VFMADD213PS  Y4, Y2, Y3; \
	VBROADCASTSS vconst<>+GELU_G2(SB), Y4; \
	VFMADD213PS  Y4, Y2, Y3; \
	VBROADCASTSS vconst<>+GELU_G3(SB), Y4; \
	VFMADD213PS  Y4, Y2, Y3; \
	VBROADCASTSS vconst<>+GELU_G4(SB), Y4; \
	VFMADD213PS  Y4, Y2, Y3; \
	VBROADCASTSS vconst<>+GELU_G5(SB), Y4; \
	VFMADD213PS  Y4, Y2, Y3; \
	VBROADCASTSS vconst<>+GELU_G6(SB), Y4; \
	VFMADD213PS  Y4, Y2, Y3; \
	VBROADCASTSS vconst<>+GELU_G7(SB), Y4; \
	VFMADD213PS  Y4, Y2, Y3; \
	VBROADCASTSS vconst<>+GELU_G8(SB), Y4; \
	VFMADD213PS  Y4, Y2, Y3; \
	VMULPS       Y1, Y1, Y4; \
	VMOVAPS      Y4, Y5; \
	VFMSUB231PS  Y1, Y1, Y5; \
	VMULPS       Y13, Y4, Y4; \
	VMULPS       Y13, Y5, Y5; \
	VXORPS       Y12, Y4, Y4; \
	EXPPS(Y4, Y6, Y7, Y8, Y9); \
	VFNMADD231PS Y5, Y4, Y4; \
	VMULPS       Y2, Y4, Y4; \
	VMULPS       Y3, Y4, Y4; \
	VMULPS       Y13, Y4, Y4; \
	VSUBPS       Y4, Y14, Y5; \
	VBLENDVPS    Y0, Y4, Y5, Y5; \
	VMULPS       Y0, Y5, Y5

// func geluAVX2(x []float32)
// Requires AVX2 and FMA. Replaces x[i] with x[i]·Φ(x[i]).
TEXT ·geluAVX2(SB), NOSPLIT, $0-24
	MOVQ         x_base+0(FP), SI
	MOVQ         x_len+8(FP), CX
	VBROADCASTSS vconst<>+ABS_MASK(SB), Y15
	VBROADCASTSS vconst<>+ONE(SB), Y14
	VBROADCASTSS vconst<>+HALF(SB), Y13
	VBROADCASTSS vconst<>+SIGN_BIT(SB), Y12
	MOVQ         CX, DX
	SHRQ         $3, DX
	JZ           tail

loop:
	VMOVUPS (SI), Y0
	GELU8
	VMOVUPS Y5, (SI)
	ADDQ    $32, SI
	DECQ    DX
	JNZ     loop

tail:
	ANDQ       $7, CX
	JZ         done
	LEAQ       vmask<>+32(SB), AX
	SHLQ       $2, CX
	SUBQ       CX, AX
	VMOVDQU    (AX), Y11
	VMASKMOVPS (SI), Y11, Y0
	GELU8
	VMASKMOVPS Y5, Y11, (SI)

done:
	VZEROUPPER
	RET

// HMAXPS and HADDPS reduce the eight lanes of v to lane 0 of its low half
// (x is v's X register) and broadcast the result to all of v; tx is clobbered.
#define HMAXPS(v, x, tx) \
	VEXTRACTF128 $1, v, tx; \
	VMAXPS       tx, x, x; \
	VPERMILPS    $0x4e, x, tx; \
	VMAXPS       tx, x, x; \
	VPERMILPS    $0xb1, x, tx; \
	VMAXPS       tx, x, x; \
	VBROADCASTSS x, v

#define HADDPS(v, x, tx) \
	VEXTRACTF128 $1, v, tx; \
	VADDPS       tx, x, x; \
	VPERMILPS    $0x4e, x, tx; \
	VADDPS       tx, x, x; \
	VPERMILPS    $0xb1, x, tx; \
	VADDPS       tx, x, x; \
	VBROADCASTSS x, v

// func softmaxAVX2(x []float32, scale float32)
// Requires AVX2 and FMA; len(x) ≥ 1. Replaces x with softmax(scale·x):
// m = max(scale·x), x[i] = e^(scale·x[i] − m) / Σ e^(scale·x[j] − m).
TEXT ·softmaxAVX2(SB), NOSPLIT, $0-28
	MOVQ         x_base+0(FP), SI
	MOVQ         x_len+8(FP), CX
	VBROADCASTSS scale+24(FP), Y1
	MOVQ         CX, DX
	ANDQ         $7, DX
	LEAQ         vmask<>+32(SB), AX
	SHLQ         $2, DX
	SUBQ         DX, AX
	VMOVDQU      (AX), Y11               // tail lanes (none when len%8 == 0)
	SHRQ         $3, CX                  // full vectors
	VBROADCASTSS vconst<>+NEG_INF(SB), Y10

	// Pass 1: Y0 = max(scale·x).
	VMOVAPS Y10, Y0
	MOVQ    SI, DI
	MOVQ    CX, DX
	TESTQ   DX, DX
	JZ      max_tail

max_loop:
	VMULPS  (DI), Y1, Y2
	VMAXPS  Y2, Y0, Y0
	ADDQ    $32, DI
	DECQ    DX
	JNZ     max_loop

max_tail:
	VMASKMOVPS (DI), Y11, Y2
	VMULPS     Y2, Y1, Y2
	VBLENDVPS  Y11, Y2, Y10, Y2
	VMAXPS     Y2, Y0, Y0
	HMAXPS(Y0, X0, X2)

	// Pass 2: x[i] = e^(scale·x[i] − m), Y3 = Σ.
	VXORPS Y3, Y3, Y3
	MOVQ   SI, DI
	MOVQ   CX, DX
	TESTQ  DX, DX
	JZ     exp_tail

exp_loop:
	VMOVUPS     (DI), Y4
	VFMSUB213PS Y0, Y1, Y4
	EXPPS(Y4, Y5, Y6, Y7, Y8)
	VADDPS      Y4, Y3, Y3
	VMOVUPS     Y4, (DI)
	ADDQ        $32, DI
	DECQ        DX
	JNZ         exp_loop

exp_tail:
	VMASKMOVPS  (DI), Y11, Y4
	VFMSUB213PS Y0, Y1, Y4
	EXPPS(Y4, Y5, Y6, Y7, Y8)
	VANDPS      Y11, Y4, Y4
	VADDPS      Y4, Y3, Y3
	VMASKMOVPS  Y4, Y11, (DI)
	HADDPS(Y3, X3, X2)
	VBROADCASTSS vconst<>+ONE(SB), Y2
	VDIVPS       Y3, Y2, Y3

	// Pass 3: x[i] /= Σ.
	MOVQ  SI, DI
	MOVQ  CX, DX
	TESTQ DX, DX
	JZ    div_tail

div_loop:
	VMULPS  (DI), Y3, Y4
	VMOVUPS Y4, (DI)
	ADDQ    $32, DI
	DECQ    DX
	JNZ     div_loop

div_tail:
	VMASKMOVPS (DI), Y11, Y4
	VMULPS     Y4, Y3, Y4
	VMASKMOVPS Y4, Y11, (DI)
	VZEROUPPER
	RET

// SUMPD adds the eight floats of f (a Y register, fx its X half) to the
// float64 accumulators s0 and s1; t is a Y scratch register.
#define SUMPD(f, fx, s0, s1, t, tx) \
	VCVTPS2PD    fx, t; \
	VADDPD       t, s0, s0; \
	VEXTRACTF128 $1, f, tx; \
	VCVTPS2PD    tx, t; \
	VADDPD       t, s1, s1

// SQSUMPD adds the squares of the eight floats of f to s0 and s1.
#define SQSUMPD(f, fx, s0, s1, t, tx) \
	VCVTPS2PD    fx, t; \
	VFMADD231PD  t, t, s0; \
	VEXTRACTF128 $1, f, tx; \
	VCVTPS2PD    tx, t; \
	VFMADD231PD  t, t, s1

// HSUMPD sets the low float64 of s0 to the sum of the lanes of s0 and s1.
#define HSUMPD(s0, s0x, s1, s1x) \
	VADDPD       s1, s0, s0; \
	VEXTRACTF128 $1, s0, s1x; \
	VADDPD       s1x, s0x, s0x; \
	VPERMILPD    $1, s0x, s1x; \
	VADDSD       s1x, s0x, s0x

// func layerNormAVX2(x, res, gamma, beta []float32, eps float32)
// Requires AVX2 and FMA; len(x) = len(gamma) = len(beta) ≥ 1 and res is
// empty or as long as x. Sets x = LayerNorm(x + res)·gamma + beta with the
// mean and the (two-pass) variance summed in float64.
TEXT ·layerNormAVX2(SB), NOSPLIT, $0-100
	MOVQ    x_base+0(FP), SI
	MOVQ    x_len+8(FP), CX
	MOVQ    res_base+24(FP), R8
	MOVQ    res_len+32(FP), R9
	MOVQ    gamma_base+48(FP), R10
	MOVQ    beta_base+72(FP), R11
	MOVQ    CX, DX
	ANDQ    $7, DX
	LEAQ    vmask<>+32(SB), AX
	SHLQ    $2, DX
	SUBQ    DX, AX
	VMOVDQU (AX), Y11          // tail lanes
	MOVQ    CX, BX
	SHRQ    $3, BX             // full vectors

	// Pass 1: x += res; Y0+Y1 = Σx in float64.
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	XORQ   AX, AX
	MOVQ   BX, DX
	TESTQ  R9, R9
	JZ     sum_test

add_test:
	TESTQ DX, DX
	JZ    add_tail

add_loop:
	VMOVUPS (SI)(AX*4), Y4
	VADDPS  (R8)(AX*4), Y4, Y4
	VMOVUPS Y4, (SI)(AX*4)
	SUMPD(Y4, X4, Y0, Y1, Y5, X5)
	ADDQ    $8, AX
	DECQ    DX
	JNZ     add_loop

add_tail:
	VMASKMOVPS (SI)(AX*4), Y11, Y4
	VMASKMOVPS (R8)(AX*4), Y11, Y5
	VADDPS     Y5, Y4, Y4
	VMASKMOVPS Y4, Y11, (SI)(AX*4)
	SUMPD(Y4, X4, Y0, Y1, Y5, X5)
	JMP        mean

sum_test:
	TESTQ DX, DX
	JZ    sum_tail

sum_loop:
	VMOVUPS (SI)(AX*4), Y4
	SUMPD(Y4, X4, Y0, Y1, Y5, X5)
	ADDQ    $8, AX
	DECQ    DX
	JNZ     sum_loop

sum_tail:
	VMASKMOVPS (SI)(AX*4), Y11, Y4
	SUMPD(Y4, X4, Y0, Y1, Y5, X5)

mean:
	HSUMPD(Y0, X0, Y1, X1)
	CVTSQ2SD    CX, X6           // n
	VDIVSD      X6, X0, X0       // mean (float64)
	VCVTSD2SS   X0, X0, X7
	VBROADCASTSS X7, Y7          // mean (float32)

	// Pass 2: Y0+Y1 = Σ(x − mean)² in float64.
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	XORQ   AX, AX
	MOVQ   BX, DX
	TESTQ  DX, DX
	JZ     var_tail

var_loop:
	VMOVUPS (SI)(AX*4), Y4
	VSUBPS  Y7, Y4, Y4
	SQSUMPD(Y4, X4, Y0, Y1, Y5, X5)
	ADDQ    $8, AX
	DECQ    DX
	JNZ     var_loop

var_tail:
	VMASKMOVPS (SI)(AX*4), Y11, Y4
	VSUBPS     Y7, Y4, Y4
	VANDPS     Y11, Y4, Y4
	SQSUMPD(Y4, X4, Y0, Y1, Y5, X5)
	HSUMPD(Y0, X0, Y1, X1)
	VDIVSD      X6, X0, X0       // variance
	VMOVSS      eps+96(FP), X5
	VCVTSS2SD   X5, X5, X5
	VADDSD      X5, X0, X0
	VSQRTSD     X0, X0, X0
	MOVQ        $0x3ff0000000000000, DX
	MOVQ        DX, X5           // 1.0
	VDIVSD      X0, X5, X0       // 1/√(var+eps)
	VCVTSD2SS   X0, X0, X6
	VBROADCASTSS X6, Y6

	// Pass 3: x = (x − mean)·inv·gamma + beta.
	XORQ  AX, AX
	MOVQ  BX, DX
	TESTQ DX, DX
	JZ    norm_tail

norm_loop:
	VMOVUPS     (SI)(AX*4), Y4
	VSUBPS      Y7, Y4, Y4
	VMULPS      Y6, Y4, Y4
	VMOVUPS     (R11)(AX*4), Y5
	VFMADD231PS (R10)(AX*4), Y4, Y5
	VMOVUPS     Y5, (SI)(AX*4)
	ADDQ        $8, AX
	DECQ        DX
	JNZ         norm_loop

norm_tail:
	VMASKMOVPS  (SI)(AX*4), Y11, Y4
	VSUBPS      Y7, Y4, Y4
	VMULPS      Y6, Y4, Y4
	VMASKMOVPS  (R10)(AX*4), Y11, Y8
	VMASKMOVPS  (R11)(AX*4), Y11, Y5
	VFMADD231PS Y8, Y4, Y5
	VMASKMOVPS  Y5, Y11, (SI)(AX*4)
	VZEROUPPER
	RET

// GELU16 is GELU8 over sixteen lanes: Z5 = GELU(Z0); Z1–Z9, K2 and K3 are
// clobbered. Needs Z15 = ABS_MASK, Z14 = ONE, Z13 = HALF, Z12 = SIGN_BIT,
// Z11 = 0 and EXPCONSTS16's Z16–Z26. The same operations lane by lane as
// GELU8 (the sign blend a
// signed compare with zero), so the same results.
#define GELU16 \
	VPANDD       Z15, Z0, Z1; \
	VBROADCASTSS vconst<>+GELU_CLAMP(SB), Z2; \
	VMINPS       Z1, Z2, Z1; \
	VBROADCASTSS vconst<>+GELU_P(SB), Z2; \
	VFMADD213PS  Z14, Z1, Z2; \
	VDIVPS       Z2, Z14, Z2; \
	VBROADCASTSS vconst<>+GELU_G0(SB), Z3; \
	VBROADCASTSS vconst<>+GELU_G1(SB), Z4; \
	VFMADD213PS  Z4, Z2, Z3; \
	VBROADCASTSS vconst<>+GELU_G2(SB), Z4; \
	VFMADD213PS  Z4, Z2, Z3; \
	VBROADCASTSS vconst<>+GELU_G3(SB), Z4; \
	VFMADD213PS  Z4, Z2, Z3; \
	VBROADCASTSS vconst<>+GELU_G4(SB), Z4; \
	VFMADD213PS  Z4, Z2, Z3; \
	VBROADCASTSS vconst<>+GELU_G5(SB), Z4; \
	VFMADD213PS  Z4, Z2, Z3; \
	VBROADCASTSS vconst<>+GELU_G6(SB), Z4; \
	VFMADD213PS  Z4, Z2, Z3; \
	VBROADCASTSS vconst<>+GELU_G7(SB), Z4; \
	VFMADD213PS  Z4, Z2, Z3; \
	VBROADCASTSS vconst<>+GELU_G8(SB), Z4; \
	VFMADD213PS  Z4, Z2, Z3; \
	VMULPS       Z1, Z1, Z4; \
	VMOVAPS      Z4, Z5; \
	VFMSUB231PS  Z1, Z1, Z5; \
	VMULPS       Z13, Z4, Z4; \
	VMULPS       Z13, Z5, Z5; \
	VPXORD       Z12, Z4, Z4; \
	EXPPS16(Z4, Z6, Z7, Z8, K3); \
	VFNMADD231PS Z5, Z4, Z4; \
	VMULPS       Z2, Z4, Z4; \
	VMULPS       Z3, Z4, Z4; \
	VMULPS       Z13, Z4, Z4; \
	VSUBPS       Z4, Z14, Z5; \
	VPCMPD       $1, Z11, Z0, K2; \
	VBLENDMPS    Z4, Z5, K2, Z5; \
	VMULPS       Z0, Z5, Z5

// func geluAVX512(x []float32)
// Requires AVX-512 F. geluAVX2 sixteen lanes at a time, the last 1–15
// through a lane mask: the same result for every value.
TEXT ·geluAVX512(SB), NOSPLIT, $0-24
	MOVQ         x_base+0(FP), SI
	MOVQ         x_len+8(FP), CX
	VBROADCASTSS vconst<>+ABS_MASK(SB), Z15
	VBROADCASTSS vconst<>+ONE(SB), Z14
	VBROADCASTSS vconst<>+HALF(SB), Z13
	VBROADCASTSS vconst<>+SIGN_BIT(SB), Z12
	VPXORD       Z11, Z11, Z11
	EXPCONSTS16
	MOVQ         CX, DX
	SHRQ         $4, DX
	JZ           tail

loop:
	VMOVUPS (SI), Z0
	GELU16
	VMOVUPS Z5, (SI)
	ADDQ    $64, SI
	DECQ    DX
	JNZ     loop

tail:
	ANDQ  $15, CX
	JZ    done
	MOVL  $1, AX
	SHLL  CX, AX
	DECL  AX
	KMOVW AX, K1
	VMOVUPS.Z (SI), K1, Z0
	GELU16
	VMOVUPS Z5, K1, (SI)

done:
	VZEROUPPER
	RET
