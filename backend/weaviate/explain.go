package weaviate

import (
	"math"
	"regexp"
	"strconv"
	"sync"
)

// Weaviate's hybrid explainScore (usecases/traverser/hybrid/hybrid_fusion.go,
// v1.38) names, per leg ("keyword" for BM25, "vector"), what the leg gave a
// hit: under rankedFusion the contribution w/(60+i), i the 0-based rank;
// under relativeScoreFusion the leg's original score and its normalised one.
// Compiled on first use, not at every engram process's start.
var (
	explainRanked = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`Result Set (keyword|vector)[^)]*\) Document [0-9a-f-]+ contributed ([-+0-9.eE]+) to the score`)
	})
	explainRelative = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`Result Set (keyword|vector)[^)]*\) Document [0-9a-f-]+: original score ([-+0-9.eE]+), normalized score: ([-+0-9.eE]+)`)
	})
)

// weaviateRRFK is the k of Weaviate's rankedFusion, w/(k+i) with i from 0:
// in Engram's 1-based terms, k = 59.
const weaviateRRFK = 60

// legExplain is what explainScore says about one leg of one hit.
type legExplain struct {
	contribution float64 // rankedFusion: w/(60+i); 0 if not given
	original     float64 // relativeScoreFusion: the leg's own score
}

// rank recovers the leg's 1-based rank from a rankedFusion contribution with
// leg weight w: i = w/c - 60. It is 0 when it cannot (other fusions, a zero
// weight or contribution, a value that is not close to a whole rank).
func (l legExplain) rank(fusion string, w float64) int {
	if fusion != FusionRRF || !(l.contribution > 0) || !(w > 0) {
		return 0
	}
	i := w/l.contribution - weaviateRRFK
	r := math.Round(i)
	// contributions are float32: allow their relative error, ~6e-8 of (60+i)
	if r < 0 || r > MaxK || math.Abs(i-r) > 1e-3*(1+r/1000) {
		return 0
	}
	return int(r) + 1
}

// parseExplain reads explainScore into its legs. Unknown text is ignored: a
// leg it does not mention is absent.
func parseExplain(s string) map[string]legExplain {
	out := map[string]legExplain{}
	for _, m := range explainRanked().FindAllStringSubmatch(s, -1) {
		c, err := strconv.ParseFloat(m[2], 64)
		if err == nil {
			out[m[1]] = legExplain{contribution: c}
		}
	}
	for _, m := range explainRelative().FindAllStringSubmatch(s, -1) {
		o, err := strconv.ParseFloat(m[2], 64)
		if err == nil {
			out[m[1]] = legExplain{original: o}
		}
	}
	return out
}
