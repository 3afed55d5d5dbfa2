package recall

// The relevance signal (explain.relevance, in [0,1]) says how much evidence
// the legs have that a memory is about the query, on a scale that means the
// same thing from one query and one store to the next, unlike fused scores
// (RRF's ~0.016–0.05). A bar on it (Query.MinRelevance, inject's default) lets
// an agent get nothing when nothing is relevant.
//
//   - Keyword part: the memory's BM25 score over the query's full-match bound,
//     Σ over query terms of idf·(k1+1), where a term the store lacks counts at
//     the idf of a term no memory holds. A question about a topic the store
//     lacks keeps its unmatched words in the bound, so matching one common word
//     stays low. A scope of fewer than bm25.RelevanceMinDocs memories is read
//     as that many, the others holding none of the query's words (the
//     backend's Hit.RelevanceScore and Bound): in a store of a few memories
//     every word it holds is common and every word it lacks rare, which would
//     sink a clear match.
//   - Vector part: the cosine mapped onto [0,1] with the model's floor (the
//     cosine an unrelated memory typically reaches) as zero.
//   - The signal of a hybrid result is the mean of the two parts, or, for a
//     model whose vector leg is strong enough on its own (Config.Paraphrase
//     > 0.5), that weight × its vector part when that is more: both legs must
//     agree for a result to score high, except a close paraphrase that shares
//     no word with the query, which the mean would halve. A single-leg search
//     uses its one part.
//
// Measured with tools/relevance on LoCoMo and SciFact (built-in model), the
// mean separates answerable questions from questions about absent topics with
// an AUC of 0.96, against 0.75 for the earlier max(score/present-terms bound,
// cosine). The paraphrase weight is swept per model with engram eval --dataset
// delivery --per-query (the root package's ModelDefaults).

import (
	"math"

	"github.com/engram-memory/engram/backend"
)

// keywordRelevance is a BM25 score over the query's full-match bound, in [0,1].
func keywordRelevance(score, bound float64) float64 {
	if !(bound > 0) || math.IsInf(bound, 0) || math.IsNaN(score) {
		return 0
	}
	return clamp01(score / bound)
}

// relevanceScore is a keyword hit's numerator of the signal: its
// RelevanceScore when the backend set one (a small scope read as a larger
// one), else its BM25 score.
func relevanceScore(h backend.Hit) float64 {
	if h.RelevanceScore > 0 {
		return h.RelevanceScore
	}
	return h.Score
}

// vectorRelevance maps a cosine onto [0,1] with floor as zero: the cosine an
// unrelated memory typically reaches with this model.
func vectorRelevance(cos, floor float64) float64 {
	if floor >= 1 || math.IsNaN(cos) {
		return 0
	}
	return clamp01((cos - floor) / (1 - floor))
}

// relevance combines the parts of the legs that ran (legs is 1 or 2): their
// mean, so a leg that did not return the memory counts as 0.
func relevance(relB, relV float64, legs int, paraphrase float64) float64 {
	if legs <= 1 {
		return clamp01(relB + relV) // only one part can be non-zero
	}
	return clamp01(max((relB+relV)/2, paraphrase*relV))
}

func clamp01(x float64) float64 {
	switch {
	case x > 1:
		return 1
	case x >= 0:
		return x
	default: // negative or NaN
		return 0
	}
}
