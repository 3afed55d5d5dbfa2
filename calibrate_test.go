package engram_test

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/embed"
)

// noiseEmbedder gives every text a fixed pseudo-random unit vector: a vector
// leg that knows nothing, which calibration must learn to give no weight.
var noiseEmbedder = embed.Func{ModelID: "test:noise", F: func(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		h := fnv.New64a()
		h.Write([]byte(t))
		r := rand.New(rand.NewPCG(h.Sum64(), 1))
		v := make([]float32, 16)
		n := 0.0
		for j := range v {
			v[j] = float32(r.NormFloat64())
			n += float64(v[j] * v[j])
		}
		for j := range v {
			v[j] /= float32(math.Sqrt(n))
		}
		out[i] = v
	}
	return out, nil
}}

// wordyMemories are n memories of 12 words drawn from a small vocabulary.
func wordyMemories(n int) []*engram.Memory {
	r := rand.New(rand.NewPCG(3, 4))
	out := make([]*engram.Memory, n)
	for i := range out {
		words := make([]string, 12)
		for j := range words {
			words[j] = fmt.Sprintf("w%03d", r.IntN(300))
		}
		out[i] = &engram.Memory{ID: fmt.Sprintf("m%03d", i), Text: strings.Join(words, " ")}
	}
	return out
}

func TestCalibrate(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, engram.Options{Embedder: noiseEmbedder})
	add(t, db, wordyMemories(60)...)

	dry, err := db.Calibrate(ctx, engram.CalibrateOptions{DryRun: true, Samples: 40, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if dry.Stored || dry.Queries != 40 || len(dry.Points) != 8 || dry.Method != "heldout" || dry.Model != "test:noise" {
		t.Fatalf("dry run: %+v", dry)
	}
	resp := search(t, db, engram.Query{Query: "w001 w002", NoRecord: true})
	if resp.Fusion.WeightSource != "model" {
		t.Fatalf("a dry run changed the weight source to %s", resp.Fusion.WeightSource)
	}

	// Noise vectors can only push sources down: of the default weights only
	// those next to 0 are within one standard error of it, and the one
	// nearest the model's 0.5 among them is chosen.
	res, err := db.Calibrate(ctx, engram.CalibrateOptions{Samples: 40, Seed: 1, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Chosen > 0.05 || res.Best != 0 {
		t.Fatalf("noise: chose %v (best %v), want a weight next to 0: %+v", res.Chosen, res.Best, res)
	}
	// Between 0 and 1 it must be 0, which switches the vector leg off, so it
	// is stored only when asked.
	offOrOn := []float64{0, 1}
	res, err = db.Calibrate(ctx, engram.CalibrateOptions{Samples: 40, Seed: 1, Weights: offOrOn})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stored || res.Chosen != 0 || res.NotStored == "" {
		t.Fatalf("calibrate without AllowOff: %+v", res)
	}
	if resp := search(t, db, engram.Query{Query: "w001 w002", NoRecord: true}); resp.Fusion.WeightSource != "model" {
		t.Fatalf("a weight of 0 was stored without AllowOff: %+v", resp.Fusion)
	}
	res, err = db.Calibrate(ctx, engram.CalibrateOptions{Samples: 40, Seed: 1, Weights: offOrOn, AllowOff: true})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Stored || res.Chosen != 0 || res.PreviousSource != "model" {
		t.Fatalf("calibrate: %+v", res)
	}
	if res.Points[0].MRR < res.Points[len(res.Points)-1].MRR {
		t.Errorf("noise helped: MRR %v at 0, %v at 1", res.Points[0].MRR, res.Points[len(res.Points)-1].MRR)
	}
	resp = search(t, db, engram.Query{Query: "w001 w002", NoRecord: true})
	if resp.Fusion.WeightSource != "store" || resp.Fusion.Weights["vector"] != 0 {
		t.Fatalf("after calibrate: fusion %+v", resp.Fusion)
	}
	// A fresh handle on the same file reads the stored weight.
	reopened, err := engram.Open(ctx, db.Path(), engram.Options{Embedder: noiseEmbedder})
	if err != nil {
		t.Fatal(err)
	}
	defer reopened.Close()
	if r := search(t, reopened, engram.Query{Query: "w001", NoRecord: true}); r.Fusion.WeightSource != "store" {
		t.Errorf("reopened store: weight source %s", r.Fusion.WeightSource)
	}
}

func TestCalibrateRejects(t *testing.T) {
	ctx := context.Background()
	big := openTest(t, engram.Options{Embedder: noiseEmbedder})
	add(t, big, wordyMemories(40)...)
	small := openTest(t, engram.Options{Embedder: noiseEmbedder})
	add(t, small, wordyMemories(5)...)
	none := openTest(t, engram.Options{NoEmbedder: true})
	add(t, none, wordyMemories(40)...)
	cases := []struct {
		name string
		db   *engram.DB
		opt  engram.CalibrateOptions
		want string
	}{
		{"no embedder", none, engram.CalibrateOptions{}, "needs an embedder"},
		{"unknown method", big, engram.CalibrateOptions{Method: "guess"}, "method \"guess\""},
		{"negative samples", big, engram.CalibrateOptions{Samples: -1}, "must not be negative"},
		{"negative weight", big, engram.CalibrateOptions{Weights: []float64{0, -0.5}}, "weight -0.5"},
		{"NaN weight", big, engram.CalibrateOptions{Weights: []float64{math.NaN()}}, "weight NaN"},
		{"store too small", small, engram.CalibrateOptions{}, "need 30"},
		{"no names to ask with", big, engram.CalibrateOptions{Method: "name"}, "gives 0 pseudo-queries"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := c.db.Calibrate(ctx, c.opt)
			if !errors.Is(err, engram.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want ErrInvalid containing %q", err, c.want)
			}
		})
	}
}
