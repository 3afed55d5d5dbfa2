package engram

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"github.com/engram-memory/engram/embed"
)

// TestCalibrationSeesEveryVector: the memories the calibration index is built
// from carry their stored vectors (the main index keeps them apart from the
// memories), so the vector leg competes over the whole store.
func TestCalibrationSeesEveryVector(t *testing.T) {
	ctx := context.Background()
	e := embed.Func{ModelID: "test:len", F: func(_ context.Context, texts []string) ([][]float32, error) {
		out := make([][]float32, len(texts))
		for i, s := range texts {
			out[i] = []float32{float32(len(s)), 1}
		}
		return out, nil
	}}
	db, err := Open(ctx, filepath.Join(t.TempDir(), "c.db"), Options{Embedder: e})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var mems []*Memory
	for i := range 20 {
		mems = append(mems, &Memory{Text: fmt.Sprintf("memory number %d%s", i, "xxxxxxxxxx"[:i%10])})
	}
	if _, err := db.Add(ctx, mems...); err != nil {
		t.Fatal(err)
	}
	got := db.memoriesWithVectors()
	if len(got) != 20 {
		t.Fatalf("%d memories, want 20", len(got))
	}
	for _, m := range got {
		if m.Embedding == nil || len(m.Embedding.Vector) != 2 {
			t.Fatalf("memory %q has no vector: %+v", m.Text, m.Embedding)
		}
		// Stored normalised: the direction of (len(text), 1).
		want := float64(len(m.Text)) / math.Hypot(float64(len(m.Text)), 1)
		if math.Abs(float64(m.Embedding.Vector[0])-want) > 1e-6 {
			t.Fatalf("memory %q: vector %v, want first component %v", m.Text, m.Embedding.Vector, want)
		}
	}
}
