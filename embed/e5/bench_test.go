package e5

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
)

var benchWords = strings.Fields(`the user prefers dark mode in every editor alice birthday is on march
staging database runs postgres on port bob allergic to peanuts team standup happens at every weekday
project uses go and builds without cgo backups are written nightly to an encrypted bucket customer
用户 喜欢 深色 模式 数据库 端口 备份 每晚 写入 加密 存储桶 会议室 投影仪 坏了`)

// benchText returns a deterministic text of exactly tokens ids as a query or
// a memory (<s>, the prefix and </s> included).
func benchText(tb testing.TB, e *Embedder, r *rand.Rand, tokens int, query bool) string {
	tb.Helper()
	var words []string
	for {
		w := benchWords[r.IntN(len(benchWords))]
		n := len(e.Tokenize(strings.Join(append(words, w), " "), query))
		if n > tokens {
			continue
		}
		words = append(words, w)
		if n == tokens {
			return strings.Join(words, " ")
		}
	}
}

// BenchmarkEmbed: one 12-token query, 1,000 and 100 40-token memories in one
// call, one 256-token document; the shapes of embed/bert's BenchmarkEmbed.
func BenchmarkEmbed(b *testing.B) {
	e, err := Default()
	if err != nil {
		b.Fatal(err)
	}
	if _, err := e.Embed(context.Background(), []string{"warm up"}); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name          string
		texts, tokens int
		query         bool
	}{
		{"query/tokens=12", 1, 12, true},
		{"memories/n=1000/tokens=40", 1000, 40, false},
		{"memories/n=100/tokens=40", 100, 40, false},
		{"document/tokens=256", 1, 256, false},
	} {
		r := rand.New(rand.NewPCG(1, 2))
		texts := make([]string, c.texts)
		for i := range texts {
			texts[i] = benchText(b, e, r, c.tokens, c.query)
		}
		embed := e.Embed
		if c.query {
			embed = e.EmbedQuery
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := embed(context.Background(), texts); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(c.texts*b.N)/b.Elapsed().Seconds(), "texts/s")
		})
	}
}

// BenchmarkTokenize: the SentencePiece tokenizer on a 40-token memory.
func BenchmarkTokenize(b *testing.B) {
	e, err := Default()
	if err != nil {
		b.Fatal(err)
	}
	text := benchText(b, e, rand.New(rand.NewPCG(1, 2)), 40, false)
	b.ReportAllocs()
	for b.Loop() {
		e.Tokenize(text, false)
	}
}

// BenchmarkLoad is what a process pays for its first query: New (the file's
// header and tensor table), the layers decoded from Q4_0 and packed (on every
// core), and one short query.
func BenchmarkLoad(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		e, err := New(Options{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := e.EmbedQuery(context.Background(), []string{"如何配置反向代理"}); err != nil {
			b.Fatal(err)
		}
	}
}
