//go:build amd64 && !purego

package linalg

import "golang.org/x/sys/cpu"

//go:generate go run gen_attn.go

// attn32AVX512 is in attn_amd64.s, written by gen_attn.go.
//
//go:noescape
func attn32AVX512(n int, q, k, v []float32, ld int, out []float32, ldo int, scale float32, scratch []float32)

// useAttnAVX512 says whether heads of 32 values over up to 256 tokens take
// the AVX-512 kernel; tests switch it off to run the reference.
var useAttnAVX512 = cpu.X86.HasAVX512F

func attnFast(n, dh int) bool { return useAttnAVX512 && dh == 32 && n >= 1 && n <= 256 }

func attn32(n int, q, k, v []float32, ld int, out []float32, ldo int, scale float32, scratch []float32) {
	attn32AVX512(n, q, k, v, ld, out, ldo, scale, scratch)
}
