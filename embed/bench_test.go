package embed

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
)

func BenchmarkLRU(b *testing.B) {
	for _, n := range []int{1_000, 100_000} {
		keys := make([]string, n)
		for i := range keys {
			keys[i] = fmt.Sprintf("%032x", i)
		}
		vec := fakeVec("v", 384)
		b.Run(fmt.Sprintf("get-hit/n=%d", n), func(b *testing.B) {
			l := NewLRU(n)
			for _, k := range keys {
				_ = l.PutEmbedding(bg, "m", k, vec)
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if _, ok, _ := l.GetEmbedding(bg, "m", keys[i%n]); !ok {
					b.Fatal("miss")
				}
				i++
			}
		})
		b.Run(fmt.Sprintf("put-evict/n=%d", n), func(b *testing.B) {
			l := NewLRU(n / 2)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				_ = l.PutEmbedding(bg, "m", keys[i%n], vec)
				i++
			}
		})
	}
}

// BenchmarkCachedHits is the cost of a fully cached call: hashing plus lookups.
func BenchmarkCachedHits(b *testing.B) {
	for _, n := range []int{64, 1024} {
		b.Run(fmt.Sprintf("texts=%d", n), func(b *testing.B) {
			rec := &recorder{}
			c := Cached(rec.embedder("f:m"), NewLRU(n))
			in := texts(n)
			if _, err := c.Embed(context.Background(), in); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Embed(context.Background(), in); err != nil {
					b.Fatal(err)
				}
			}
			if len(rec.batches) != 1 {
				b.Fatal("cache missed")
			}
		})
	}
}

func BenchmarkDecodeOpenAI(b *testing.B) {
	for _, dim := range []int{384, 1536} {
		b.Run(fmt.Sprintf("n=64/dim=%d", dim), func(b *testing.B) {
			type item struct {
				Index     int       `json:"index"`
				Embedding []float32 `json:"embedding"`
			}
			data := make([]item, 64)
			for i := range data {
				data[i] = item{i, fakeVec(fmt.Sprint(i), dim)}
			}
			body, _ := json.Marshal(map[string]any{"data": data})
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := decodeOpenAI(body, 64, ""); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkOpenAIEmbed is a whole call against a local server.
func BenchmarkOpenAIEmbed(b *testing.B) {
	for _, n := range []int{64, 640} {
		b.Run(fmt.Sprintf("texts=%d/dim=384", n), func(b *testing.B) {
			srv := newFake(b, openAIProtocol, ok(openAIProtocol, 384))
			e := openAIProtocol.open(b, srv.URL, opts{})
			in := texts(n)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := e.Embed(context.Background(), in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
