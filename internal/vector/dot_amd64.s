//go:build amd64 && !purego

#include "textflag.h"

// func dotAVX2(a, b []float32) float32
// Requires AVX2 and FMA; len(b) >= len(a). Sums a[i]*b[i] for i < len(a).
TEXT ·dotAVX2(SB), NOSPLIT, $0-52
	MOVQ a_base+0(FP), SI
	MOVQ a_len+8(FP), CX
	MOVQ b_base+24(FP), DI
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	XORQ AX, AX
	MOVQ CX, DX
	ANDQ $-32, DX
	JZ   tail8

loop32:
	VMOVUPS     0(SI)(AX*4), Y4
	VMOVUPS     32(SI)(AX*4), Y5
	VMOVUPS     64(SI)(AX*4), Y6
	VMOVUPS     96(SI)(AX*4), Y7
	VFMADD231PS 0(DI)(AX*4), Y4, Y0
	VFMADD231PS 32(DI)(AX*4), Y5, Y1
	VFMADD231PS 64(DI)(AX*4), Y6, Y2
	VFMADD231PS 96(DI)(AX*4), Y7, Y3
	ADDQ        $32, AX
	CMPQ        AX, DX
	JLT         loop32

tail8:
	MOVQ CX, DX
	ANDQ $-8, DX
	CMPQ AX, DX
	JGE  reduce

loop8:
	VMOVUPS     (SI)(AX*4), Y4
	VFMADD231PS (DI)(AX*4), Y4, Y0
	ADDQ        $8, AX
	CMPQ        AX, DX
	JLT         loop8

reduce:
	VADDPS       Y1, Y0, Y0
	VADDPS       Y3, Y2, Y2
	VADDPS       Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VHADDPS      X0, X0, X0
	VHADDPS      X0, X0, X0

scalar:
	CMPQ        AX, CX
	JGE         done
	VMOVSS      (SI)(AX*4), X1
	VFMADD231SS (DI)(AX*4), X1, X0
	INCQ        AX
	JMP         scalar

done:
	VZEROUPPER
	MOVSS X0, ret+48(FP)
	RET

// func dotInt8AVX2(q []int16, c []int8) int32
// Requires AVX2; len(c) >= len(q). Sums q[i]*c[i] for i < len(q)&^15.
TEXT ·dotInt8AVX2(SB), NOSPLIT, $0-52
	MOVQ  q_base+0(FP), SI
	MOVQ  q_len+8(FP), CX
	MOVQ  c_base+24(FP), DI
	ANDQ  $-16, CX
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	XORQ  AX, AX
	MOVQ  CX, DX
	ANDQ  $-32, DX
	JZ    tail16

loop32:
	VPMOVSXBW (DI)(AX*1), Y2
	VPMOVSXBW 16(DI)(AX*1), Y3
	VPMADDWD  (SI)(AX*2), Y2, Y2
	VPMADDWD  32(SI)(AX*2), Y3, Y3
	VPADDD    Y2, Y0, Y0
	VPADDD    Y3, Y1, Y1
	ADDQ      $32, AX
	CMPQ      AX, DX
	JLT       loop32

tail16:
	CMPQ      AX, CX
	JGE       reduce
	VPMOVSXBW (DI)(AX*1), Y2
	VPMADDWD  (SI)(AX*2), Y2, Y2
	VPADDD    Y2, Y0, Y0

reduce:
	VPADDD       Y1, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0x4e, X0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0xb1, X0, X1
	VPADDD       X1, X0, X0
	VMOVD        X0, AX
	VZEROUPPER
	MOVL         AX, ret+48(FP)
	RET

// func prefetchLines(p *int8, n int)
// Issues PREFETCHT0 for every 64-byte line of p[0:n] (n > 0). A hint: it
// never faults, so a line past a mapping's end is harmless.
TEXT ·prefetchLines(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), AX
	MOVQ n+8(FP), CX
	LEAQ (AX)(CX*1), CX

pf:
	PREFETCHT0 (AX)
	ADDQ       $64, AX
	CMPQ       AX, CX
	JLT        pf
	RET

// func dotF32Int8x2AVX2(q []float32, c, f []int8) (sc, sf float32)
// Requires AVX2 and FMA; len(c), len(f) >= len(q). Sums q[i]*c[i] and
// q[i]*f[i] for i < len(q)&^15: eight codes widened to int32 (VPMOVSXBD),
// converted to float32 and multiplied into two accumulators a sum.
TEXT ·dotF32Int8x2AVX2(SB), NOSPLIT, $0-80
	MOVQ   q_base+0(FP), SI
	MOVQ   q_len+8(FP), CX
	MOVQ   c_base+24(FP), DI
	MOVQ   f_base+48(FP), R8
	ANDQ   $-16, CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	XORQ   AX, AX
	CMPQ   CX, $0
	JEQ    reduce2

loop16:
	VPMOVSXBD   (DI)(AX*1), Y4
	VPMOVSXBD   8(DI)(AX*1), Y5
	VPMOVSXBD   (R8)(AX*1), Y6
	VPMOVSXBD   8(R8)(AX*1), Y7
	VCVTDQ2PS   Y4, Y4
	VCVTDQ2PS   Y5, Y5
	VCVTDQ2PS   Y6, Y6
	VCVTDQ2PS   Y7, Y7
	VMOVUPS     (SI)(AX*4), Y8
	VMOVUPS     32(SI)(AX*4), Y9
	VFMADD231PS Y8, Y4, Y0
	VFMADD231PS Y9, Y5, Y1
	VFMADD231PS Y8, Y6, Y2
	VFMADD231PS Y9, Y7, Y3
	ADDQ        $16, AX
	CMPQ        AX, CX
	JLT         loop16

reduce2:
	VADDPS       Y1, Y0, Y0
	VADDPS       Y3, Y2, Y2
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VHADDPS      X0, X0, X0
	VHADDPS      X0, X0, X0
	VEXTRACTF128 $1, Y2, X3
	VADDPS       X3, X2, X2
	VHADDPS      X2, X2, X2
	VHADDPS      X2, X2, X2
	VZEROUPPER
	MOVSS        X0, sc+72(FP)
	MOVSS        X2, sf+76(FP)
	RET
