package recall

import (
	"math"
	"testing"

	"github.com/engram-memory/engram/memory"
)

func TestRelevanceParts(t *testing.T) {
	cases := []struct {
		name string
		got  float64
		want float64
	}{
		{"keyword half of the bound", keywordRelevance(2, 4), 0.5},
		{"keyword above the bound clamps", keywordRelevance(5, 4), 1},
		{"keyword no bound", keywordRelevance(1, 0), 0},
		{"keyword NaN score", keywordRelevance(math.NaN(), 4), 0},
		{"keyword infinite bound", keywordRelevance(1, math.Inf(1)), 0},
		{"vector at the floor", vectorRelevance(0.55, 0.55), 0},
		{"vector below the floor", vectorRelevance(0.2, 0.55), 0},
		{"vector halfway", vectorRelevance(0.775, 0.55), 0.5},
		{"vector identical", vectorRelevance(1, 0.55), 1},
		{"vector floor 1", vectorRelevance(1, 1), 0},
		{"vector NaN", vectorRelevance(math.NaN(), 0.3), 0},
		{"hybrid is the mean", relevance(0.6, 0.2, 2, 0), 0.4},
		{"hybrid, keyword leg silent", relevance(0.6, 0, 2, 0.85), 0.3},
		{"hybrid, a paraphrase: the vector part alone, weighed", relevance(0, 0.4, 2, 0.85), 0.85 * 0.4},
		{"hybrid, a paraphrase under a model without the term: the mean", relevance(0, 0.4, 2, 0), 0.2},
		{"hybrid, vector part well above the keyword part", relevance(0.1, 0.6, 2, 0.85), 0.85 * 0.6},
		{"hybrid, parts close: the mean", relevance(0.5, 0.6, 2, 0.85), 0.55},
		{"single leg is its part", relevance(0.6, 0, 1, 0.85), 0.6},
		{"single vector leg", relevance(0, 0.7, 1, 0.85), 0.7},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if math.Abs(c.got-c.want) > 1e-12 {
				t.Errorf("got %v, want %v", c.got, c.want)
			}
		})
	}
}

// TestBar: each strategy is held to its own bar; a model without a measured
// vector-only bar holds the vector leg alone to its hybrid bar.
func TestBar(t *testing.T) {
	measured := Config{RelevanceBar: 0.16, KeywordBar: 0.28, VectorBar: 0.3}
	unmeasured := Config{RelevanceBar: 0.15, KeywordBar: 0.28}
	cases := []struct {
		cfg      Config
		strategy string
		want     float64
	}{
		{measured, memory.StrategyHybrid, 0.16},
		{measured, memory.StrategyBM25, 0.28},
		{measured, memory.StrategyVector, 0.3},
		{measured, memory.StrategyNative, 0.16},
		{unmeasured, memory.StrategyVector, 0.15},
		{unmeasured, memory.StrategyBM25, 0.28},
	}
	for _, c := range cases {
		if got := c.cfg.Bar(c.strategy); got != c.want {
			t.Errorf("%+v Bar(%s) = %v, want %v", c.cfg, c.strategy, got, c.want)
		}
	}
}
