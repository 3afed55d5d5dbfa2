package store

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/engram-memory/engram/memory"
)

// withModel is testMemory(id) with a vector of model, or none for "".
func withModel(id, model string) *memory.Memory {
	m := testMemory(id)
	m.Embedding = nil
	if model != "" {
		m.Embedding = &memory.Embedding{Model: model, Dim: 3, Vector: []float32{1, 0, 0}}
	}
	return m
}

// TestLatestModel: the model of the last memory inserted with a vector,
// passing over later ones without; "" for a store with no vector.
func TestLatestModel(t *testing.T) {
	cases := []struct {
		name   string
		models []string // each a memory, inserted in turn ("" none)
		want   string
	}{
		{"empty", nil, ""},
		{"no vector", []string{""}, ""},
		{"one model", []string{"a-v1", "a-v1"}, "a-v1"},
		{"the latest", []string{"a-v1", "b-v2"}, "b-v2"},
		{"later memories without a vector", []string{"a-v1", "b-v2", "", ""}, "b-v2"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, _ := openTemp(t)
			for i, m := range c.models {
				if _, _, err := s.Put(context.Background(), nil, []*memory.Memory{withModel(fmt.Sprint(i), m)}); err != nil {
					t.Fatal(err)
				}
			}
			if got, err := s.LatestModel(context.Background()); err != nil || got != c.want {
				t.Errorf("LatestModel = %q, %v; want %q", got, err, c.want)
			}
		})
	}
}

// BenchmarkLatestModel is what opening a store with no model named reads
// to learn its model (engram.Open), against counting every row's model as
// loading the index does, on 10,000 memories with 384-d vectors:
//
//	go test -run '^$' -bench LatestModel ./internal/store
func BenchmarkLatestModel(b *testing.B) {
	ctx := context.Background()
	s, _ := openTemp(b)
	vec := make([]float32, 384)
	mems := make([]*memory.Memory, 10000)
	for i := range mems {
		m := withModel(fmt.Sprintf("m%05d", i), "bge-small-en-v1.5.2-v2")
		m.Text = strings.Repeat(fmt.Sprintf("memory %d about deploys and caches. ", i), 3)
		m.Embedding.Dim, m.Embedding.Vector = len(vec), vec
		mems[i] = m
	}
	if _, _, err := s.Put(ctx, nil, mems); err != nil {
		b.Fatal(err)
	}
	b.Run("latest", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.LatestModel(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("count", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.EmbeddingCounts(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
}
