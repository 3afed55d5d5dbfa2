package static

import (
	"context"
	"strings"
	"testing"
)

// BenchmarkEmbed: one query (about 12 tokens), and a batch of memories.
func BenchmarkEmbed(b *testing.B) {
	e, err := Default()
	if err != nil {
		b.Fatal(err)
	}
	query := "does vitamin d supplementation reduce respiratory infections in children?"
	memory := "We agreed to run the database migration on Saturday night and keep the old cluster for a week, then Alice checks the backups."
	for _, c := range []struct {
		name  string
		texts []string
	}{
		{"query", []string{query}},
		{"memories/n=1000", slicesRepeat(memory, 1000)},
		{"document/bytes=3.4k", []string{strings.Repeat("Exposure to air pollution is linked to cognitive decline in adults. ", 50)}},
	} {
		if _, err := e.Embed(context.Background(), c.texts); err != nil {
			b.Fatal(err)
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := e.Embed(context.Background(), c.texts); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(c.texts)*b.N)/b.Elapsed().Seconds(), "texts/s")
		})
	}
}

func slicesRepeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}
