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
// vector-only bar holds the vector leg alone to its hybrid bar; a model with
// non-Latin bars holds a query less than LatinShare Latin to them (a
// Chinese one, one naming English terms), and an English one naming a
// Greek letter to its Latin bars, as every query of a model without them.
func TestBar(t *testing.T) {
	measured := Config{RelevanceBar: 0.16, KeywordBar: 0.28, VectorBar: 0.3}
	unmeasured := Config{RelevanceBar: 0.15, KeywordBar: 0.28}
	scripts := Config{RelevanceBar: 0.2, KeywordBar: 0.28, VectorBar: 0.28, NonLatinBar: 0.37, NonLatinVectorBar: 0.53}
	halfScripts := Config{RelevanceBar: 0.2, KeywordBar: 0.28, VectorBar: 0.28, NonLatinBar: 0.37}
	const (
		english = "how do we deploy to staging"
		greek   = "TNF-α and IL-1 are pro-inflammatory cytokines" // 0.97 Latin
		chinese = "如何配置 Nginx 反向代理？"
		terms   = "Kubernetes 的 Ingress 怎么设置 TLS？" // 0.67 Latin
	)
	cases := []struct {
		cfg             Config
		strategy, query string
		want            float64
	}{
		{measured, memory.StrategyHybrid, english, 0.16},
		{measured, memory.StrategyBM25, english, 0.28},
		{measured, memory.StrategyVector, english, 0.3},
		{measured, memory.StrategyNative, english, 0.16},
		{measured, memory.StrategyHybrid, chinese, 0.16},
		{unmeasured, memory.StrategyVector, english, 0.15},
		{unmeasured, memory.StrategyBM25, english, 0.28},
		{scripts, memory.StrategyHybrid, english, 0.2},
		{scripts, memory.StrategyHybrid, greek, 0.2},
		{scripts, memory.StrategyVector, greek, 0.28},
		{scripts, memory.StrategyHybrid, chinese, 0.37},
		{scripts, memory.StrategyNative, terms, 0.37},
		{scripts, memory.StrategyVector, chinese, 0.53},
		{scripts, memory.StrategyVector, terms, 0.53},
		{scripts, memory.StrategyBM25, chinese, 0.28},
		{halfScripts, memory.StrategyVector, chinese, 0.28},
		{halfScripts, memory.StrategyHybrid, chinese, 0.37},
	}
	for _, c := range cases {
		if got := c.cfg.Bar(c.strategy, c.query); got != c.want {
			t.Errorf("%+v Bar(%s, %q) = %v, want %v", c.cfg, c.strategy, c.query, got, c.want)
		}
	}
}
