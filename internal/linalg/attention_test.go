package linalg

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// naiveAttention is one head in float64, straight from the definition.
func naiveAttention(q, k, v []float32, ld, n, dh int, scale float32) [][]float64 {
	out := make([][]float64, n)
	for i := range n {
		s := make([]float64, n)
		m := math.Inf(-1)
		for j := range n {
			var dot float64
			for d := range dh {
				dot += float64(q[i*ld+d]) * float64(k[j*ld+d])
			}
			s[j] = float64(scale) * dot
			m = max(m, s[j])
		}
		var sum float64
		for j := range s {
			s[j] = math.Exp(s[j] - m)
			sum += s[j]
		}
		out[i] = make([]float64, dh)
		for j := range n {
			for d := range dh {
				out[i][d] += s[j] / sum * float64(v[j*ld+d])
			}
		}
	}
	return out
}

// TestAttention runs heads of every length around the fast kernel's
// blocks, as a fused projection lays them out (q, k, v column ranges of one
// row), through Attention with and without the AVX-512 kernel: each within
// float32 rounding of the float64 definition, the columns around the head
// as they were, and the kernel's result bit for bit the reference's (the
// same vectors on every CPU).
func TestAttention(t *testing.T) {
	const h, heads = 384, 12
	const dh, ld, ldo = h / heads, 3 * h, h
	scale := float32(1 / math.Sqrt(dh))
	for _, n := range []int{1, 2, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 31, 32, 33, 40, 47, 48, 49, 63, 64, 65, 80, 100, 127, 128, 129, 144, 193, 255, 256, 257} {
		for _, amp := range []float32{1, 8, 40} { // 40: softmax all but one-hot
			t.Run(fmt.Sprintf("n=%d/amp=%g", n, amp), func(t *testing.T) {
				r := rand.New(rand.NewPCG(uint64(n), uint64(amp)))
				qkv := make([]float32, n*ld)
				for i := range qkv {
					qkv[i] = amp * float32(r.NormFloat64())
				}
				hd := r.IntN(heads)
				q, k, v := qkv[hd*dh:], qkv[h+hd*dh:], qkv[2*h+hd*dh:]
				want := naiveAttention(q, k, v, ld, n, dh, scale)
				run := func(fast bool) []float32 {
					defer func(was bool) { useAttnAVX512 = was }(useAttnAVX512)
					useAttnAVX512 = fast
					out := make([]float32, n*ldo)
					for i := range out {
						out[i] = -7
					}
					scratch := make([]float32, AttentionScratch(n, dh))
					for i := range scratch {
						scratch[i] = float32(math.NaN()) // must not leak into the result
					}
					Attention(out[hd*dh:], ldo, q, k, v, ld, n, dh, scale, scratch)
					worst := 0.0
					for i := range n {
						for c := range ldo {
							got := out[i*ldo+c]
							if c < hd*dh || c >= (hd+1)*dh {
								if got != -7 {
									t.Fatalf("fast %v: row %d column %d outside the head changed: %g", fast, i, c, got)
								}
								continue
							}
							worst = max(worst, math.Abs(float64(got)-want[i][c-hd*dh])/float64(amp))
						}
					}
					// A score's float32 rounding grows with its size (amp²
					// here), and e^score carries it into the weights.
					if tol := 1e-6 * (2 + float64(amp*amp)); worst > tol {
						t.Errorf("fast %v: max |error| / amplitude = %.3g, want ≤ %.3g", fast, worst, tol)
					}
					return out
				}
				ref := run(false)
				if !useAttnAVX512 {
					return
				}
				got := run(true)
				for i := range got {
					if math.Float32bits(got[i]) != math.Float32bits(ref[i]) {
						t.Fatalf("row %d column %d: kernel %g (%#x), reference %g (%#x)", i/ldo, i%ldo,
							got[i], math.Float32bits(got[i]), ref[i], math.Float32bits(ref[i]))
					}
				}
			})
		}
	}
}

// TestAttentionNaN: a NaN in a query row makes that output row NaN and no
// other, on either path.
func TestAttentionNaN(t *testing.T) {
	const n, dh, ld = 20, 32, 96
	for _, fast := range []bool{false, true} {
		if fast && !useAttnAVX512 {
			continue
		}
		t.Run(fmt.Sprint("fast=", fast), func(t *testing.T) {
			defer func(was bool) { useAttnAVX512 = was }(useAttnAVX512)
			useAttnAVX512 = fast
			r := rand.New(rand.NewPCG(3, 4))
			qkv := make([]float32, n*ld)
			for i := range qkv {
				qkv[i] = float32(r.NormFloat64())
			}
			qkv[5*ld+3] = float32(math.NaN())
			out := make([]float32, n*dh)
			Attention(out, dh, qkv, qkv[dh:], qkv[2*dh:], ld, n, dh, 0.2, make([]float32, AttentionScratch(n, dh)))
			for i := range n {
				for d := range dh {
					if nan := math.IsNaN(float64(out[i*dh+d])); nan != (i == 5) {
						t.Fatalf("out[%d][%d] = %g", i, d, out[i*dh+d])
					}
				}
			}
		})
	}
}

// FuzzAttention: for any values (NaN, infinities, huge and tiny included)
// and any length the kernel takes (1–256), it gives the reference's result bit for
// bit, NaN where the reference has NaN.
func FuzzAttention(f *testing.F) {
	f.Add(uint8(12), []byte{0, 0, 128, 63, 0, 0, 0, 64})
	f.Add(uint8(40), []byte{0, 0, 128, 127, 0, 0, 192, 127, 1, 0, 0, 0})
	f.Fuzz(func(t *testing.T, nb uint8, data []byte) {
		if !useAttnAVX512 {
			t.Skip("this CPU has no AVX-512 F")
		}
		const dh, ld = 32, 3 * 32
		n := int(nb) + 1
		qkv := make([]float32, n*ld)
		for i := range qkv {
			if len(data) >= 4 {
				o := 4 * (i % (len(data) / 4))
				qkv[i] = math.Float32frombits(uint32(data[o]) | uint32(data[o+1])<<8 | uint32(data[o+2])<<16 | uint32(data[o+3])<<24)
			}
			if i%7 == 3 { // vary the values where data repeats
				qkv[i] *= float32(i%5) - 2
			}
		}
		run := func(fast bool) []float32 {
			defer func(was bool) { useAttnAVX512 = was }(useAttnAVX512)
			useAttnAVX512 = fast
			out := make([]float32, n*dh)
			Attention(out, dh, qkv, qkv[dh:], qkv[2*dh:], ld, n, dh, 0.17677669, make([]float32, AttentionScratch(n, dh)))
			return out
		}
		want, got := run(false), run(true)
		for i := range got {
			g, w := got[i], want[i]
			if g != g && w != w {
				continue
			}
			if math.Float32bits(g) != math.Float32bits(w) {
				t.Fatalf("n=%d: out[%d][%d] = %g (%#x), reference %g (%#x)", n, i/dh, i%dh, g, math.Float32bits(g), w, math.Float32bits(w))
			}
		}
	})
}

// TestMultiHeadAttention: a batch of sequences of mixed lengths (past the
// kernel's 64 and 256 too), few (a task a head) and many (a task a sequence), on
// one worker and on every core, gives each head exactly what Attention
// gives it alone; run under -race it also checks the workers' scratch.
func TestMultiHeadAttention(t *testing.T) {
	const h, heads = 384, 12
	const dh, ld = h / heads, 3 * h
	scale := float32(1 / math.Sqrt(dh))
	for _, c := range []struct {
		name string
		lens []int
	}{
		{"one", []int{12}},
		{"few", []int{3, 70, 300, 40}},
		{"many", []int{40, 1, 17, 64, 65, 33, 40, 40, 2, 12, 9, 50}},
	} {
		for _, workers := range []int{1, 0} {
			t.Run(fmt.Sprintf("%s/workers=%d", c.name, workers), func(t *testing.T) {
				r := rand.New(rand.NewPCG(9, uint64(len(c.lens))))
				starts, rows := make([]int, len(c.lens)), 0
				for i, n := range c.lens {
					starts[i] = rows
					rows += n
				}
				qkv := make([]float32, rows*ld)
				for i := range qkv {
					qkv[i] = 2 * float32(r.NormFloat64())
				}
				got := make([]float32, rows*h)
				MultiHeadAttention(got, qkv, starts, c.lens, h, heads, workers)
				want := make([]float32, rows*h)
				for i, n := range c.lens {
					scratch := make([]float32, AttentionScratch(n, dh))
					for hd := range heads {
						at := starts[i]*ld + hd*dh
						Attention(want[starts[i]*h+hd*dh:], h, qkv[at:], qkv[at+h:], qkv[at+2*h:], ld, n, dh, scale, scratch)
					}
				}
				for i := range got {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("row %d column %d: %g, alone %g", i/h, i%h, got[i], want[i])
					}
				}
			})
		}
	}
}

// BenchmarkAttention: one head of 32 values over a query's, a memory's, a
// document's and a longer sequence's tokens (512: the reference path only), as a fused projection lays it out, with the AVX-512
// kernel and with the reference path (MatMulTStrided, Softmax,
// MatMulStrided).
func BenchmarkAttention(b *testing.B) {
	const h, dh, ld = 384, 32, 3 * 384
	for _, n := range []int{12, 40, 64, 256, 512} {
		for _, fast := range []bool{true, false} {
			if fast && !attnFast(n, dh) {
				continue
			}
			path := "reference"
			if fast {
				path = "kernel"
			}
			b.Run(fmt.Sprintf("n=%d/%s", n, path), func(b *testing.B) {
				defer func(was bool) { useAttnAVX512 = was }(useAttnAVX512)
				useAttnAVX512 = fast
				r := rand.New(rand.NewPCG(1, 2))
				qkv := make([]float32, n*ld)
				for i := range qkv {
					qkv[i] = float32(r.NormFloat64())
				}
				out := make([]float32, n*h)
				scratch := make([]float32, AttentionScratch(n, dh))
				for b.Loop() {
					Attention(out[64:], h, qkv[64:], qkv[h+64:], qkv[2*h+64:], ld, n, dh, 0.17677669, scratch)
				}
				b.ReportMetric(float64(4*n*n*dh)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}
