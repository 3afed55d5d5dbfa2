package glove

import (
	"context"
	"fmt"
	"testing"
)

var benchSentences = []string{
	"which colour scheme does the user like",
	"The user prefers dark themes in every editor they use.",
	"Deploy the getUserName handler to the staging cluster before Friday.",
	"Quarterly revenue grew 8% on strong café sales in Zürich.",
}

func BenchmarkEmbed(b *testing.B) {
	e, err := Default()
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if _, err := e.Embed(ctx, benchSentences[:1]); err != nil { // load outside the timer
		b.Fatal(err)
	}
	for _, n := range []int{1, 1000} {
		texts := make([]string, n)
		for i := range texts {
			texts[i] = benchSentences[i%len(benchSentences)]
		}
		b.Run(fmt.Sprintf("sentences=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := e.Embed(ctx, texts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkFirstUse is the one-time cost the first Embed pays: checksum,
// decode, word index and weight table.
func BenchmarkFirstUse(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		e, err := newEmbedder(&source{data: glove100}, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := e.load(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNew is what a program that never embeds pays: the header only.
func BenchmarkNew(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := New(Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
