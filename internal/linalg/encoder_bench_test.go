package linalg

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"time"
)

// The compute of all-MiniLM-L6-v2 with random weights: 6 BERT layers,
// hidden 384, 12 heads of 32, FFN 1536, fused QKV. No tokenizer, embedding
// lookup or pooling: only what this package runs, shaped as the model
// engineer will call it, so the figures bound what the encoder can reach.
const (
	encLayers = 6
	encHidden = 384
	encHeads  = 12
	encHead   = 32
	encFFN    = 1536
)

type encLayer struct {
	qkv, out, ffn1, ffn2     func(c, a, bias []float32, m int)
	bqkv, bout, bffn1, bffn2 []float32
	ln1g, ln1b, ln2g, ln2b   []float32
}

// encoder holds the layers and the scratch of one batch.
type encoder struct {
	layers                 []encLayer
	qkv, ctx, attn, h, out []float32
	scores                 []float32
}

func newEncoder(tb testing.TB, path linearPath, maxRows, maxSeq int) *encoder {
	r := rand.New(rand.NewPCG(41, 42))
	mat := func(n int, scale float64) []float32 {
		s := make([]float32, n)
		for i := range s {
			s[i] = float32(r.NormFloat64() * scale)
		}
		return s
	}
	ones := func(n int) []float32 {
		s := make([]float32, n)
		for i := range s {
			s[i] = 1
		}
		return s
	}
	e := &encoder{}
	for range encLayers {
		sc := 1 / math.Sqrt(encHidden)
		withBias := func(w []float32, n, k int) func(c, a, bias []float32, m int) { return path.prepare(tb, w, n, k) }
		e.layers = append(e.layers, encLayer{
			qkv:   withBias(mat(3*encHidden*encHidden, sc), 3*encHidden, encHidden),
			out:   withBias(mat(encHidden*encHidden, sc), encHidden, encHidden),
			ffn1:  withBias(mat(encFFN*encHidden, sc), encFFN, encHidden),
			ffn2:  withBias(mat(encHidden*encFFN, 1/math.Sqrt(encFFN)), encHidden, encFFN),
			bqkv:  mat(3*encHidden, 0.1),
			bout:  mat(encHidden, 0.1),
			bffn1: mat(encFFN, 0.1),
			bffn2: mat(encHidden, 0.1),
			ln1g:  ones(encHidden), ln1b: mat(encHidden, 0.1),
			ln2g: ones(encHidden), ln2b: mat(encHidden, 0.1),
		})
	}
	e.qkv = make([]float32, maxRows*3*encHidden)
	e.ctx = make([]float32, maxRows*encHidden)
	e.attn = make([]float32, maxRows*encHidden)
	e.h = make([]float32, maxRows*encFFN)
	e.out = make([]float32, maxRows*encHidden)
	e.scores = make([]float32, encHeads*maxSeq*maxSeq)
	return e
}

// forward runs the layers over x: batch sequences of seq tokens, one row
// each, the biases fused into the products.
func (e *encoder) forward(x []float32, batch, seq int) {
	rows := batch * seq
	x = x[:rows*encHidden]
	for _, l := range e.layers {
		qkv := e.qkv[:rows*3*encHidden]
		l.qkv(qkv, x, l.bqkv, rows)
		ctx := e.ctx[:rows*encHidden]
		for s := range batch {
			base := s * seq * 3 * encHidden
			sc := e.scores[:encHeads*seq*seq]
			for h := range encHeads {
				MatMulTStrided(sc[h*seq*seq:(h+1)*seq*seq], seq,
					qkv[base+h*encHead:], 3*encHidden,
					qkv[base+encHidden+h*encHead:], 3*encHidden, seq, seq, encHead)
			}
			Softmax(sc, seq, float32(1/math.Sqrt(encHead)))
			for h := range encHeads {
				MatMulStrided(ctx[s*seq*encHidden+h*encHead:], encHidden,
					sc[h*seq*seq:(h+1)*seq*seq], seq,
					qkv[base+2*encHidden+h*encHead:], 3*encHidden, seq, encHead, seq)
			}
		}
		attn := e.attn[:rows*encHidden]
		l.out(attn, ctx, l.bout, rows)
		AddLayerNorm(attn, x, encHidden, l.ln1g, l.ln1b, 1e-12)
		h := e.h[:rows*encFFN]
		l.ffn1(h, attn, l.bffn1, rows)
		GELU(h)
		l.ffn2(x, h, l.bffn2, rows)
		AddLayerNorm(x, attn, encHidden, l.ln2g, l.ln2b, 1e-12)
	}
}

// BenchmarkEncoder runs the model's compute per linear-layer path: one
// 12-token query, a batch of 32 memories of 40 tokens, one 256-token
// document; threads=2 splits each operation across both cores, procs=2 runs
// one single-threaded encoder per core on separate batches. seqs/s is wall
// time; seqs/cpu-s is per second of CPU received, the figure that survives
// a machine shared with other work.
func BenchmarkEncoder(b *testing.B) {
	cases := []struct {
		name       string
		batch, seq int
	}{
		{"query/seq=12", 1, 12},
		{"memories/batch=32/seq=40", 32, 40},
		{"document/seq=256", 1, 256},
	}
	for _, path := range linearPaths() {
		switch path.name {
		case "fp32-avx2", "fp32-generic", "bf16-8x48", "vnni-6x64", "f16-avx2-f16", "f16-avx512-q", "q4_0-avx512-q", "q8_0-avx512-q", "q4_0-decode+avx2", "q8_0-decode+avx2":
		default:
			continue
		}
		for _, tc := range cases {
			for _, mode := range []string{"threads=1", "threads=2", "procs=2"} {
				if path.name == "fp32-generic" && (tc.batch > 1 || mode != "threads=1") {
					continue
				}
				b.Run(fmt.Sprintf("%s/%s/%s", path.name, tc.name, mode), func(b *testing.B) {
					procs, threads := 1, 1
					switch mode {
					case "threads=2":
						threads = 2
					case "procs=2":
						procs = 2
					}
					defer SetMaxThreads(SetMaxThreads(threads))
					encs := make([]*encoder, procs)
					xs := make([][]float32, procs)
					for p := range procs {
						encs[p] = newEncoder(b, path, tc.batch*tc.seq, tc.seq)
						xs[p] = randMat(rand.New(rand.NewPCG(uint64(p), 43)), tc.batch*tc.seq*encHidden)
					}
					for p := range procs {
						encs[p].forward(xs[p], tc.batch, tc.seq) // grow the scratch
					}
					b.ReportAllocs()
					cpu0 := processCPU()
					start := time.Now()
					for b.Loop() {
						var wg sync.WaitGroup
						for p := range procs {
							wg.Add(1)
							go func() {
								defer wg.Done()
								encs[p].forward(xs[p], tc.batch, tc.seq)
							}()
						}
						wg.Wait()
					}
					seqs := float64(b.N * procs * tc.batch)
					b.ReportMetric(seqs/time.Since(start).Seconds(), "seqs/s")
					if cpu := processCPU() - cpu0; cpu > 0 {
						b.ReportMetric(seqs/cpu.Seconds(), "seqs/cpu-s")
					}
				})
			}
		}
	}
}
