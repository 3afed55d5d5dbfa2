package e5

import (
	"context"
	"slices"
	"sync"
	"testing"
)

// TestConcurrentEmbed embeds the same memories and queries from 8
// goroutines, 5 rounds each, against one serial call, at both precisions
// (-race): the embedder's scratch and the products' workers are shared.
func TestConcurrentEmbed(t *testing.T) {
	texts := []string{"第一条记忆", "second, longer memory about the deploy key rotation", "三"}
	for _, p := range []Precision{FP32, Int8} {
		e, err := New(Options{Precision: p})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		want, err := e.Embed(ctx, texts)
		if err != nil {
			t.Fatal(err)
		}
		wantQ, err := e.EmbedQuery(ctx, texts)
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Go(func() {
				for round := range 5 {
					embed, w := e.Embed, want
					if (g+round)%2 == 1 {
						embed, w = e.EmbedQuery, wantQ
					}
					got, err := embed(ctx, texts)
					if err != nil {
						t.Error(err)
						return
					}
					for i := range got {
						if !slices.Equal(got[i], w[i]) {
							t.Errorf("%s: goroutine %d round %d: vector %d differs from the serial one", p, g, round, i)
							return
						}
					}
				}
			})
		}
		wg.Wait()
	}
}
