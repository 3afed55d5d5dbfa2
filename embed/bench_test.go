package embed

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
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

// BenchmarkScriptsUnread times Latin.Unread on a 1.5 KB English abstract
// (the vector leg's hits on SciFact), the same with two accented letters
// first, and Chinese text, against the loop it replaced; and Latin.Share,
// which the vector leg runs on each hit (it counts every letter):
//
//	go test -run '^$' -bench ScriptsUnread ./embed
func BenchmarkScriptsUnread(b *testing.B) {
	english := strings.Repeat("Cold-start latency of the first query comes from loading the embedding model; later queries reuse it. ", 15)
	accented := "Déjà vu: " + english // not all ASCII: counted, until the rest cannot tip it
	chinese := strings.Repeat("如何在 MySQL 中创建只读用户？配置反向代理的超时。", 20)
	for _, c := range []struct{ name, text string }{{"english", english}, {"accented", accented}, {"chinese", chinese}} {
		b.Run(c.name+"/fast", func(b *testing.B) {
			b.SetBytes(int64(len(c.text)))
			for range b.N {
				Latin.Unread(c.text)
			}
		})
		b.Run(c.name+"/reference", func(b *testing.B) {
			b.SetBytes(int64(len(c.text)))
			for range b.N {
				unreadReference(Latin, c.text)
			}
		})
		b.Run(c.name+"/share", func(b *testing.B) {
			b.SetBytes(int64(len(c.text)))
			for range b.N {
				Latin.Share(c.text)
			}
		})
	}
}
