// Package rerank reorders a query's top fused candidates with a stronger,
// slower relevance model: a cross-encoder behind an HTTP /rerank endpoint
// (HTTP) or a chat LLM asked to score each document (LLM).
package rerank

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
)

// Score is one document's relevance to the query.
type Score struct {
	// Index is the document's position in the slice passed to Rerank.
	Index int
	// Score is the provider's relevance; higher is better. Its scale is the
	// provider's own (a probability, a logit, 0–10 for LLM).
	Score float64
}

// Reranker scores documents against a query.
type Reranker interface {
	// Name identifies the provider and model ("http:bge-reranker-v2-m3").
	Name() string
	// Rerank returns min(topN, len(docs)) scores, best first (topN <= 0
	// means all). Documents the provider did not score follow the scored
	// ones in input order, carrying the lowest score it gave. Empty docs
	// return nil without a call.
	Rerank(ctx context.Context, query string, docs []string, topN int) ([]Score, error)
}

// ErrInvalidResponse is wrapped by every error about an answer that arrived
// but cannot be used: malformed, or scoring documents that were not sent.
var ErrInvalidResponse = errors.New("invalid rerank response")

// limit is how many scores Rerank returns for n documents.
func limit(topN, n int) int {
	if topN <= 0 || topN > n {
		return n
	}
	return topN
}

// order validates a provider's scores for n documents and returns the first
// topN of them best first: ties by input order, then the unscored documents
// in input order at the lowest score given. scores is not modified.
func order(scores []Score, n, topN int) ([]Score, error) {
	if len(scores) == 0 {
		return nil, fmt.Errorf("%w: no scores for any of the %d documents sent", ErrInvalidResponse, n)
	}
	seen := make([]bool, n)
	low := math.Inf(1)
	for i, s := range scores {
		switch {
		case s.Index < 0 || s.Index >= n:
			return nil, fmt.Errorf("%w: result %d has index %d, outside the %d documents sent", ErrInvalidResponse, i, s.Index, n)
		case seen[s.Index]:
			return nil, fmt.Errorf("%w: result %d scores index %d a second time", ErrInvalidResponse, i, s.Index)
		case math.IsNaN(s.Score) || math.IsInf(s.Score, 0):
			return nil, fmt.Errorf("%w: result %d (index %d) has non-finite score %v", ErrInvalidResponse, i, s.Index, s.Score)
		}
		seen[s.Index] = true
		low = min(low, s.Score)
	}
	out := make([]Score, len(scores), n)
	copy(out, scores)
	slices.SortFunc(out, func(a, b Score) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.Index, b.Index)
	})
	for i, ok := range seen {
		if !ok {
			out = append(out, Score{Index: i, Score: low})
		}
	}
	return out[:limit(topN, n)], nil
}

// Both providers satisfy Reranker.
var (
	_ Reranker = (*HTTP)(nil)
	_ Reranker = (*LLM)(nil)
)
