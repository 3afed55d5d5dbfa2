package bert

import (
	"context"
	"fmt"
	"github.com/engram-memory/engram/internal/linalg"
	"math/rand/v2"
	"strings"
	"testing"
)

var benchWords = strings.Fields(`the user prefers dark mode in every editor alice birthday is on march
staging database runs postgres on port bob allergic to peanuts team standup happens at every weekday
project uses go and builds without cgo backups are written nightly to an encrypted bucket customer
asked for the report in pdf meeting room has a broken projector she takes her coffee black release
train leaves every second thursday we went camping near the lake and it rained the whole time
vitamin supplementation reduces the risk of respiratory infections in children regular exercise
improves memory performance in older adults mutations increase lifetime risk of cancer`)

// benchText returns a deterministic text of exactly tokens ids ([CLS] and [SEP] included).
func benchText(tb testing.TB, e *Embedder, r *rand.Rand, tokens int) string {
	tb.Helper()
	var words []string
	for {
		w := benchWords[r.IntN(len(benchWords))]
		ids, err := e.Tokenize(strings.Join(append(words, w), " "))
		if err != nil {
			tb.Fatal(err)
		}
		if len(ids) > tokens {
			continue
		}
		words = append(words, w)
		if len(ids) == tokens {
			return strings.Join(words, " ")
		}
	}
}

func benchEmbedder(b *testing.B) *Embedder { return warm(b, Default) }

// warm returns the embedder of get, its weights loaded.
func warm(b *testing.B, get func() (*Embedder, error)) *Embedder {
	b.Helper()
	e, err := get()
	if err != nil {
		b.Fatal(err)
	}
	if _, err := e.Embed(context.Background(), []string{"warm up"}); err != nil {
		b.Fatal(err)
	}
	return e
}

// BenchmarkEmbed: one 12-token query, 1,000 40-token memories in one call,
// one 256-token document, with all-MiniLM-L6-v2.
func BenchmarkEmbed(b *testing.B) { benchEmbed(b, benchEmbedder(b)) }

// BenchmarkEmbedBGESmall: the same texts with bge-small-en-v1.5 (12 layers
// to MiniLM's 6: about twice the work a token).
func BenchmarkEmbedBGESmall(b *testing.B) { benchEmbed(b, warm(b, DefaultBGESmall)) }

func benchEmbed(b *testing.B, e *Embedder) {
	for _, c := range []struct {
		name          string
		texts, tokens int
	}{
		{"query/tokens=12", 1, 12},
		{"memories/n=1000/tokens=40", 1000, 40},
		{"memories/n=100/tokens=40", 100, 40},
		{"document/tokens=256", 1, 256},
	} {
		r := rand.New(rand.NewPCG(1, 2))
		texts := make([]string, c.texts)
		for i := range texts {
			texts[i] = benchText(b, e, r, c.tokens)
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := e.Embed(context.Background(), texts); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(c.texts*b.N)/b.Elapsed().Seconds(), "texts/s")
		})
	}
}

// BenchmarkTokenize: the tokenizer alone.
func BenchmarkTokenize(b *testing.B) {
	e := benchEmbedder(b)
	w, _ := e.load()
	r := rand.New(rand.NewPCG(1, 2))
	for _, tokens := range []int{12, 40, 256} {
		text := benchText(b, e, r, tokens)
		b.Run(fmt.Sprintf("tokens=%d", tokens), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(text)))
			var ids []int32
			for b.Loop() {
				ids = w.tok.Encode(ids[:0], text)
			}
		})
	}
	doc := strings.Repeat("Exposure to air pollution (PM2.5) is linked to cognitive décline in 4,212 adults. ", 40)
	b.Run("document/bytes=3.4k/untruncated", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(doc)))
		var ids []int32
		for b.Loop() {
			ids = w.tok.Encode(ids[:0], doc)
		}
	})
}

// BenchmarkLoad is what a new process pays for its first query: from New
// to the first vector of a 12-token query, the model file parsed and its
// weights made ready for the kernels, at each precision. "in-place"
// multiplies by the file's float16 panels where they lie (the default on a
// CPU with a float16 kernel; at bf16 where the CPU multiplies in bf16);
// "decoded" converts and packs them first, as a CPU without one does.
func BenchmarkLoad(b *testing.B) {
	query := []string{"which port does the staging database listen on"}
	for _, prec := range []Precision{FP32, BF16} {
		for _, c := range []struct {
			name    string
			inPlace bool
		}{{"in-place", true}, {"decoded", false}} {
			b.Run(string(prec)+"/"+c.name, func(b *testing.B) {
				if c.inPlace && !inPlace() {
					b.Skip("this CPU has no float16 kernel")
				}
				saved := inPlace
				inPlace = func() bool { return c.inPlace }
				b.Cleanup(func() { inPlace = saved })
				b.ReportAllocs()
				for b.Loop() {
					e, err := New(Options{Precision: prec})
					if err != nil {
						b.Fatal(err)
					}
					if _, err := e.Embed(context.Background(), query); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkPackBF16 times packing the built-in model's bf16 layers from the
// float16 panels used in place (packAfter: what an embedder does once, in
// the background), and reports the packed weights' size:
//
//	go test -run '^$' -bench PackBF16 ./embed/bert
func BenchmarkPackBF16(b *testing.B) {
	if !linalg.HasBF16() || !inPlace() {
		b.Skip("this CPU has no AVX512_BF16 or float16 kernel")
	}
	e, err := New(Options{Precision: BF16})
	if err != nil {
		b.Fatal(err)
	}
	w, err := e.load()
	if err != nil {
		b.Fatal(err)
	}
	var bytes int
	for b.Loop() {
		packed := w.packed()
		bytes = 0
		for _, l := range packed.layers {
			for _, m := range []linear{l.qkv, l.out, l.ffIn, l.ffOut} {
				p := m.(*linalg.PackedBF16)
				bytes += 2 * p.N() * ((p.K() + 1) &^ 1) // bf16 pairs; the built-in widths fill whole panels
			}
		}
	}
	b.ReportMetric(float64(bytes)/(1<<20), "MiB")
}
