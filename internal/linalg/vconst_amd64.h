// The vector kernels' constants and their sixteen-lane exp, shared by
// vec_amd64.s and attn_amd64.s (each gets its own copy of the table, from
// this one source). The table is printed by testdata/fit_gelu.py, which also
// explains the polynomials.

#define GELU_P 0
#define GELU_G0 4
#define GELU_G1 8
#define GELU_G2 12
#define GELU_G3 16
#define GELU_G4 20
#define GELU_G5 24
#define GELU_G6 28
#define GELU_G7 32
#define GELU_G8 36
#define EXP_MIN 40
#define EXP_MAX 44
#define LOG2E 48
#define LN2HI 52
#define LN2LO 56
#define EXP_Q0 60
#define EXP_Q1 64
#define EXP_Q2 68
#define EXP_Q3 72
#define EXP_Q4 76
#define ONE 80
#define HALF 84
#define GELU_CLAMP 88
#define ABS_MASK 92
#define SIGN_BIT 96
#define NEG_INF 100
DATA vconst<>+0(SB)/4, $0x3e593924 // GELU_P = 0.2121320366859436, 0.3/√2: t = 1/(1 + GELU_P·|x|)
DATA vconst<>+4(SB)/4, $0xbe04a425 // GELU_G0 = -0.12953241169452667, g, t^8
DATA vconst<>+8(SB)/4, $0x3ef8a19c // GELU_G1 = 0.48560798168182373, g, t^7
DATA vconst<>+12(SB)/4, $0xbf032a84 // GELU_G2 = -0.5123674869537354, g, t^6
DATA vconst<>+16(SB)/4, $0x3f0c3dd8 // GELU_G3 = 0.547818660736084, g, t^5
DATA vconst<>+20(SB)/4, $0xbdc1faa3 // GELU_G4 = -0.09471633285284042, g, t^4
DATA vconst<>+24(SB)/4, $0x3e5c1c9c // GELU_G5 = 0.21495288610458374, g, t^3
DATA vconst<>+28(SB)/4, $0x3e17e480 // GELU_G6 = 0.1483325958251953, g, t^2
DATA vconst<>+32(SB)/4, $0x3e2ed034 // GELU_G7 = 0.17071610689163208, g, t^1
DATA vconst<>+36(SB)/4, $0x3e2d3f9c // GELU_G8 = 0.16918796300888062, g, t^0
DATA vconst<>+40(SB)/4, $0xc2ae0000 // EXP_MIN = -87.0, e^-87 is still a normal float32
DATA vconst<>+44(SB)/4, $0x42b00000 // EXP_MAX = 88.0, e^88 is still finite
DATA vconst<>+48(SB)/4, $0x3fb8aa3b // LOG2E = 1.4426950216293335, log2(e)
DATA vconst<>+52(SB)/4, $0x3f318000 // LN2HI = 0.693359375, ln 2, high part
DATA vconst<>+56(SB)/4, $0xb95e8083 // LN2LO = -0.00021219444170128554, ln 2 - LN2HI
DATA vconst<>+60(SB)/4, $0x3ab511ad // EXP_Q0 = 0.0013814471894875169, q, r^4
DATA vconst<>+64(SB)/4, $0x3c091cc7 // EXP_Q1 = 0.008368677459657192, q, r^3
DATA vconst<>+68(SB)/4, $0x3d2aac78 // EXP_Q2 = 0.04166838526725769, q, r^2
DATA vconst<>+72(SB)/4, $0x3e2aaa49 // EXP_Q3 = 0.1666652113199234, q, r^1
DATA vconst<>+76(SB)/4, $0x3efffffe // EXP_Q4 = 0.4999999403953552, q, r^0
DATA vconst<>+80(SB)/4, $0x3f800000 // ONE = 1.0
DATA vconst<>+84(SB)/4, $0x3f000000 // HALF = 0.5
DATA vconst<>+88(SB)/4, $0x41a00000 // GELU_CLAMP = 20.0, |x| past which Phi is 0 or 1 in float32
DATA vconst<>+92(SB)/4, $0x7fffffff // ABS_MASK, clears the sign bit
DATA vconst<>+96(SB)/4, $0x80000000 // SIGN_BIT, the sign bit
DATA vconst<>+100(SB)/4, $0xff800000 // NEG_INF, -Inf
GLOBL vconst<>(SB), RODATA|NOPTR, $104

// EXPCONSTS16 loads EXPPS16's constants: Z16 EXP_MIN, Z17 EXP_MAX, Z18
// LOG2E, Z19 LN2HI, Z20 LN2LO, Z21–Z25 EXP_Q0–EXP_Q4, Z26 ONE.
#define EXPCONSTS16 \
	VBROADCASTSS vconst<>+EXP_MIN(SB), Z16; \
	VBROADCASTSS vconst<>+EXP_MAX(SB), Z17; \
	VBROADCASTSS vconst<>+LOG2E(SB), Z18; \
	VBROADCASTSS vconst<>+LN2HI(SB), Z19; \
	VBROADCASTSS vconst<>+LN2LO(SB), Z20; \
	VBROADCASTSS vconst<>+EXP_Q0(SB), Z21; \
	VBROADCASTSS vconst<>+EXP_Q1(SB), Z22; \
	VBROADCASTSS vconst<>+EXP_Q2(SB), Z23; \
	VBROADCASTSS vconst<>+EXP_Q3(SB), Z24; \
	VBROADCASTSS vconst<>+EXP_Q4(SB), Z25; \
	VBROADCASTSS vconst<>+ONE(SB), Z26

// EXPPS16 is vec_amd64.s's EXPPS over the sixteen lanes of a Z register,
// its constants in Z16–Z26 (EXPCONSTS16): lane by lane the same operations,
// so the same results. k is a mask register, t1–t3 Z registers, all
// clobbered.
#define EXPPS16(v, t1, t2, t3, k) \
	VCMPPS       $0x15, Z16, v, k; \
	VMAXPS       v, Z16, v; \
	VMINPS       v, Z17, v; \
	VMULPS       Z18, v, t1; \
	VRNDSCALEPS  $0, t1, t1; \
	VFNMADD231PS Z19, t1, v; \
	VFNMADD231PS Z20, t1, v; \
	VMOVAPS      Z21, t2; \
	VFMADD213PS  Z22, v, t2; \
	VFMADD213PS  Z23, v, t2; \
	VFMADD213PS  Z24, v, t2; \
	VFMADD213PS  Z25, v, t2; \
	VMULPS       v, v, t3; \
	VFMADD213PS  v, t3, t2; \
	VADDPS       Z26, t2, t2; \
	VCVTPS2DQ    t1, t1; \
	VPSLLD       $23, t1, t1; \
	VPADDD       t1, t2, v; \
	VMOVAPS.Z    v, k, v
