package synth

import (
	"context"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"runtime"
	"strconv"
	"sync"

	"github.com/engram-memory/engram/embed"
)

// ModelID names the synthetic embedder's vectors, with their dimension.
func (c *Corpus) ModelID() string { return "synth-v1-" + strconv.Itoa(c.cfg.Dim) }

// Embedder returns an embed.Func over Vector: real work per text (a word-vector
// sum), but a few microseconds, so benchmarks measure search, not a model. Large
// batches are split over the CPUs.
func (c *Corpus) Embedder() embed.Func {
	return embed.Func{ModelID: c.ModelID(), F: func(ctx context.Context, texts []string) ([][]float32, error) {
		out := make([][]float32, len(texts))
		workers := min(runtime.GOMAXPROCS(0), max(len(texts)/32, 1))
		var wg sync.WaitGroup
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := w; i < len(texts); i += workers {
					out[i] = c.Vector(texts[i])
				}
			}()
		}
		wg.Wait()
		return out, ctx.Err()
	}}
}

// Vector embeds a text: the sum of its words' vectors, L2-normalised. Known
// words have fixed vectors near their topic's centroid; any other token (an
// identifier, a typo) gets a random direction derived from its hash. A text
// with no word gets nil, as the embed.Embedder contract asks.
func (c *Corpus) Vector(text string) []float32 {
	words := Words(text)
	if len(words) == 0 {
		return nil
	}
	dim := c.cfg.Dim
	v := make([]float32, dim)
	var tmp []float32
	for _, w := range words {
		if rank, ok := c.wordIndex[w]; ok {
			row := c.wordVec[int(rank)*dim : (int(rank)+1)*dim]
			for i, x := range row {
				v[i] += x
			}
			continue
		}
		if tmp == nil {
			tmp = make([]float32, dim)
		}
		h := fnv.New64a()
		h.Write([]byte(w))
		gaussianUnit(rand.New(rand.NewPCG(h.Sum64(), c.cfg.Seed)), tmp)
		for i, x := range tmp {
			v[i] += x
		}
	}
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	if ss == 0 {
		return nil
	}
	inv := float32(1 / math.Sqrt(ss))
	for i := range v {
		v[i] *= inv
	}
	return v
}

// Words splits text into lower-case ASCII words: runs of letters, digits and
// '_'; everything else separates. (Identifiers such as "a-b.ts" become parts.)
func Words(text string) []string {
	var out []string
	start := -1
	flush := func(end int) {
		if start >= 0 {
			out = append(out, lowerASCII(text[start:end]))
			start = -1
		}
	}
	for i := 0; i < len(text); i++ {
		ch := text[i]
		if ch == '_' || ch >= '0' && ch <= '9' || ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= 0x80 {
			if start < 0 {
				start = i
			}
			continue
		}
		flush(i)
	}
	flush(len(text))
	return out
}

func lowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] >= 'A' && s[i] <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if b[j] >= 'A' && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}
