package fusion

// MMR computes maximal marginal relevance (Carbonell & Goldstein, "The Use of
// MMR, Diversity-Based Reranking for Reordering Documents and Producing
// Summaries", SIGIR 1998): it picks results one at a time, each time taking
// the candidate that maximises λ·relevance − (1−λ)·(highest cosine to any
// result already picked). Near-duplicates of a picked result lose their
// place to the next distinct one, so the top of the list is not one memory
// repeated.

import "math"

// DefaultLambda is the relevance/diversity trade-off the recall pipeline uses
// when a query names none (DESIGN §1): mostly relevance, some diversity.
const DefaultLambda = 0.7

// Candidate is one result to diversify. Relevance is its score from the
// previous stage (any scale, higher is better); Vector is L2-normalised and
// may be nil.
type Candidate struct {
	ID        string
	Relevance float64
	Vector    []float32
}

// Pick is one MMR choice, in pick order. PreRank is the candidate's 1-based
// position in the input; Relevance its min-max normalised relevance;
// Redundancy its highest cosine to the candidates picked before it (0 when
// none is comparable); Score = λ·Relevance − (1−λ)·Redundancy when picked.
type Pick struct {
	ID         string
	PreRank    int
	Relevance  float64
	Redundancy float64
	Score      float64
}

// MMR greedily picks min(k, len(cands)) candidates by maximal marginal
// relevance. Relevance is min-max normalised to [0,1] over the candidates
// (all equal → 1; NaN and -Inf → 0, +Inf → 1). Cosine is the dot product of
// the vectors, clamped to [-1,1]; a nil vector, vectors of different
// lengths, or a NaN product make a pair incomparable, so a candidate with a
// nil vector has redundancy 0. Ties go to the earlier PreRank. λ outside
// [0,1] is clamped; NaN means DefaultLambda.
func MMR(cands []Candidate, lambda float64, k int) []Pick {
	k = min(k, len(cands))
	if k <= 0 {
		return []Pick{}
	}
	switch {
	case math.IsNaN(lambda):
		lambda = DefaultLambda
	case lambda < 0:
		lambda = 0
	case lambda > 1:
		lambda = 1
	}

	var m minMax
	for _, c := range cands {
		m.add(c.Relevance)
	}
	rel := make([]float64, len(cands))
	for i, c := range cands {
		rel[i] = m.norm(c.Relevance)
	}

	// red[i] is candidate i's highest cosine to the picks so far, valid
	// where seen[i]; it is updated with each new pick, so the whole run costs
	// k·n dot products.
	red := make([]float64, len(cands))
	seen := make([]bool, len(cands))
	picked := make([]bool, len(cands))
	out := make([]Pick, 0, k)
	for len(out) < k {
		best, bestScore := -1, 0.0
		for i := range cands {
			if picked[i] {
				continue
			}
			if s := lambda*rel[i] - (1-lambda)*red[i]; best < 0 || s > bestScore {
				best, bestScore = i, s
			}
		}
		picked[best] = true
		out = append(out, Pick{
			ID:         cands[best].ID,
			PreRank:    best + 1,
			Relevance:  rel[best],
			Redundancy: red[best],
			Score:      bestScore,
		})
		v := cands[best].Vector
		if len(v) == 0 {
			continue
		}
		for i, c := range cands {
			if picked[i] || len(c.Vector) != len(v) {
				continue
			}
			cos, ok := cosine(v, c.Vector)
			if ok && (!seen[i] || cos > red[i]) {
				red[i], seen[i] = cos, true
			}
		}
	}
	return out
}

// cosine is the dot product of two equal-length normalised vectors, clamped
// to [-1,1] against rounding; ok is false when it is NaN.
func cosine(a, b []float32) (float64, bool) {
	d := dot(a, b)
	if math.IsNaN(d) {
		return 0, false
	}
	return math.Max(-1, math.Min(1, d)), true
}

// dot sums a[i]·b[i] in float64 with four accumulators. len(b) must be at
// least len(a).
func dot(a, b []float32) float64 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += float64(a[i]) * float64(b[i])
		s1 += float64(a[i+1]) * float64(b[i+1])
		s2 += float64(a[i+2]) * float64(b[i+2])
		s3 += float64(a[i+3]) * float64(b[i+3])
	}
	for ; i < len(a); i++ {
		s0 += float64(a[i]) * float64(b[i])
	}
	return (s0 + s1) + (s2 + s3)
}
