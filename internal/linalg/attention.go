package linalg

import (
	"fmt"
	"math"
	"runtime"
	"sync/atomic"
)

// attnFastScratch is the scratch of the AVX-512 head kernel over n keys:
// Kᵀ in chunks of 32 rows of 64 keys, then n rows of probabilities, 16 a
// block.
func attnFastScratch(n int) int {
	blocks := (n + 15) / 16
	return (blocks+3)/4*32*64 + n*blocks*16
}

// AttentionScratch is how many values of scratch Attention needs for a head
// of dh values over n tokens.
func AttentionScratch(n, dh int) int {
	if attnFast(n, dh) {
		return attnFastScratch(n)
	}
	return n * n
}

// Attention sets out (n rows of dh values, row i at out[i·ldo]) to one
// attention head, softmax(scale·Q·Kᵀ)·V, over n tokens whose rows of Q, K
// and V start every ld values of q, k and v: the column ranges of a fused
// Q|K|V projection, used in place. scratch holds AttentionScratch(n, dh)
// values. Where the CPU has AVX-512 and the head is 32 values over at most
// 256 tokens, one kernel does the head (up to 64 tokens, a query or a
// memory, with its scores in registers); otherwise it is MatMulTStrided,
// Softmax and MatMulStrided. The kernel's sums run in their order: the
// result is the same bit for bit.
func Attention(out []float32, ldo int, q, k, v []float32, ld, n, dh int, scale float32, scratch []float32) {
	checkDims("Attention", n, n, dh)
	checkStrided("Attention", "q", q, n, dh, ld)
	checkStrided("Attention", "k", k, n, dh, ld)
	checkStrided("Attention", "v", v, n, dh, ld)
	checkStrided("Attention", "out", out, n, dh, ldo)
	if need := AttentionScratch(n, dh); len(scratch) < need {
		panic(fmt.Sprintf("linalg.Attention: len(scratch) = %d, need %d", len(scratch), need))
	}
	if n == 0 || dh == 0 {
		return
	}
	if attnFast(n, dh) {
		attn32(n, q, k, v, ld, out, ldo, scale, scratch)
		return
	}
	attentionRef(out, ldo, q, k, v, ld, n, dh, scale, scratch)
}

// attentionRef is Attention through the general products: the reference
// the fast kernel is tested against, and the path for other shapes.
func attentionRef(out []float32, ldo int, q, k, v []float32, ld, n, dh int, scale float32, scratch []float32) {
	s := scratch[:n*n]
	MatMulTStrided(s, n, q, ld, k, ld, n, n, dh)
	Softmax(s, n, scale)
	MatMulStrided(out, ldo, s, n, v, ld, n, dh, n)
}

// MultiHeadAttention fills ctx (rows of h values) with every head of every
// sequence of a batch: qkv holds the fused Q|K|V projection (rows of 3h
// values, Q, K and V each h columns of heads heads), the sequences' rows one
// after another, sequence i starting at row starts[i] with lens[i] rows; a
// token sees only its own sequence's tokens, which is what an attention mask
// does for a padded batch. The heads go to up to workers goroutines (0:
// GOMAXPROCS): a task is one head or, with sequences enough to go round,
// all of a sequence's heads in turn (the kernel prefetches the next head's
// rows, which then are in this core's cache).
func MultiHeadAttention(ctx, qkv []float32, starts, lens []int, h, heads, workers int) {
	if len(starts) != len(lens) || heads <= 0 || h%heads != 0 {
		panic(fmt.Sprintf("linalg.MultiHeadAttention: %d starts, %d lengths, %d heads over %d values", len(starts), len(lens), heads, h))
	}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	dh, ld := h/heads, 3*h
	scale := float32(1 / math.Sqrt(float64(dh)))
	per := 1
	if len(lens) >= 4*workers {
		per = heads
	}
	tasks := len(lens) * heads / per
	var next atomic.Int64
	Parallel(min(workers, tasks), func(int) {
		ws := workspaces.Get().(*workspace)
		defer workspaces.Put(ws)
		for t := int(next.Add(1) - 1); t < tasks; t = int(next.Add(1) - 1) {
			si, hd0 := t*per/heads, t*per%heads
			n, r := lens[si], starts[si]
			scratch := grow(&ws.attn, AttentionScratch(n, dh))
			for hd := hd0; hd < hd0+per; hd++ {
				at := r*ld + hd*dh
				Attention(ctx[r*h+hd*dh:], h, qkv[at:], qkv[at+h:], qkv[at+2*h:], ld, n, dh, scale, scratch)
			}
		}
	})
}
