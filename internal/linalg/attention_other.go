//go:build !amd64 || purego

package linalg

// useAttnAVX512 is always false without assembly: every head takes the
// reference path.
var useAttnAVX512 = false

func attnFast(n, dh int) bool { return false }

func attn32(n int, q, k, v []float32, ld int, out []float32, ldo int, scale float32, scratch []float32) {
	panic("linalg: no attention kernel")
}
