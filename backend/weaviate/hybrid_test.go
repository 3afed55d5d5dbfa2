package weaviate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/engram-memory/engram/memory"
)

// hybridFixture: 150 memories of random words with random vectors, so that
// leg scores rarely tie.
func hybridFixture() []*memory.Memory {
	words := strings.Fields("apple banana cherry date elder fig grape honeydew kiwi lemon mango nectarine olive papaya quince raspberry")
	r := rand.New(rand.NewPCG(5, 6))
	var out []*memory.Memory
	for i := range 150 {
		n := 4 + r.IntN(20)
		w := make([]string, n)
		for j := range w {
			w[j] = words[r.IntN(len(words))]
		}
		v := make([]float32, 8)
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		out = append(out, mem(fmt.Sprintf("h%03d", i), strings.Join(w, " "), func(m *memory.Memory) {
			m.Embedding = &memory.Embedding{Model: fixtureModel, Dim: 8, Vector: v}
		}))
	}
	return out
}

// TestHybridExplain: the leg ranks read from Weaviate's explainScore (rrf)
// and the leg scores it states (rsf) equal those of the legs run on their
// own, the fused scores follow from them by each fusion's formula, and
// Explain changes nothing but filling in the rest.
func TestHybridExplain(t *testing.T) {
	s := openTest(t, nil)
	ctx := ctxT(t)
	put(t, s, hybridFixture()...)
	const wb, wv = 1.0, 0.4
	q := HybridQuery{
		LegQuery:   LegQuery{Text: "cherry kiwi olive", Vector: []float32{1, -1, 0.5, 0, 0, 2, 0, -0.3}, Model: fixtureModel, K: 30},
		BM25Weight: wb, VectorWeight: wv,
	}
	for _, fusion := range []string{FusionRRF, FusionRSF} {
		t.Run(fusion, func(t *testing.T) {
			q := q
			q.Fusion = fusion
			plain, err := s.Hybrid(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			q.Explain = true
			explained, err := s.Hybrid(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			if len(plain) != q.K || len(explained) != q.K {
				t.Fatalf("%d and %d hits, want %d", len(plain), len(explained), q.K)
			}
			both := 0
			for i := range plain {
				p, e := plain[i], explained[i]
				if p.Memory.ID != e.Memory.ID || p.Score != e.Score {
					t.Fatalf("hit %d: %s %v without explain, %s %v with", i+1, p.Memory.ID, p.Score, e.Memory.ID, e.Score)
				}
				if (p.BM25 == nil) != (e.BM25 == nil) || (p.Vector == nil) != (e.Vector == nil) {
					t.Fatalf("hit %s: explainScore and the separate legs disagree on which legs found it", p.Memory.ID)
				}
				if p.BM25 != nil && p.Vector != nil {
					both++
				}
				switch fusion {
				case FusionRRF:
					want := 0.0
					if p.BM25 != nil {
						if p.BM25.Rank != e.BM25.Rank {
							t.Errorf("hit %s: bm25 rank %d from explainScore, %d from the leg", p.Memory.ID, p.BM25.Rank, e.BM25.Rank)
						}
						want += wb / float64(weaviateRRFK-1+e.BM25.Rank)
					}
					if p.Vector != nil {
						if p.Vector.Rank != e.Vector.Rank {
							t.Errorf("hit %s: vector rank %d from explainScore, %d from the leg", p.Memory.ID, p.Vector.Rank, e.Vector.Rank)
						}
						want += wv / float64(weaviateRRFK-1+e.Vector.Rank)
					}
					if math.Abs(p.Score-want) > 1e-6*want {
						t.Errorf("hit %s: fused %v, want Σ w/(59+rank) = %v", p.Memory.ID, p.Score, want)
					}
				case FusionRSF:
					if p.BM25 != nil && math.Abs(p.BM25.Score-e.BM25.Score) > 1e-5*e.BM25.Score {
						t.Errorf("hit %s: bm25 score %v from explainScore, %v from the leg", p.Memory.ID, p.BM25.Score, e.BM25.Score)
					}
					if p.Vector != nil && math.Abs(p.Vector.Cosine-e.Vector.Cosine) > 1e-5 {
						t.Errorf("hit %s: cosine %v from explainScore, %v from the leg", p.Memory.ID, p.Vector.Cosine, e.Vector.Cosine)
					}
				}
				if i > 0 && p.Score > plain[i-1].Score*(1+1e-6) {
					t.Errorf("hit %d scores above hit %d", i+1, i)
				}
			}
			if both == 0 {
				t.Error("no hit was found by both legs: the fixture does not exercise fusion")
			}
		})
	}
}

// TestAlpha maps Engram's leg weights to Weaviate's alpha (the vector share).
func TestAlpha(t *testing.T) {
	cases := []struct {
		name   string
		wb, wv float64
		want   float64
		bad    bool
	}{
		{"equal weights", 1, 1, 0.5, false},
		{"weak vector leg", 1, 0.1, 0.1 / 1.1, false},
		{"keyword only", 1, 0, 0, false},
		{"vector only", 0, 2, 1, false},
		{"both zero", 0, 0, 0, true},
		{"negative", -1, 1, 0, true},
		{"NaN", math.NaN(), 1, 0, true},
		{"infinite", math.Inf(1), 1, 0, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Alpha(c.wb, c.wv)
			if (err != nil) != c.bad || (!c.bad && got != c.want) {
				t.Fatalf("Alpha(%v, %v) = %v, %v; want %v (error %v)", c.wb, c.wv, got, err, c.want, c.bad)
			}
		})
	}
}
