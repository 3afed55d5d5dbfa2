package calibrate

import (
	"context"
	"fmt"
	"math"
)

// DefaultWeights are the vector-leg weights tried, BM25's being 1.
var DefaultWeights = []float64{0, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 1}

// SearchFunc ranks memory ids for query with the vector leg at weight w.
type SearchFunc func(ctx context.Context, query string, w float64) ([]string, error)

// Point is one weight's outcome.
type Point struct {
	Weight float64 `json:"weight"`
	MRR    float64 `json:"mrr"`
	// SE is the standard error of MRR over the pseudo-queries.
	SE float64 `json:"se"`
	// Hit1 is the share of pseudo-queries whose source ranked first.
	Hit1 float64 `json:"hit1"`
}

// Result is a sweep's outcome: every weight tried and the one chosen.
type Result struct {
	Method  string  `json:"method"`
	Queries int     `json:"queries"`
	Points  []Point `json:"points"`
	Best    float64 `json:"best"`
}

// Sweep runs every pseudo-query at every weight and picks, by the
// one-standard-error rule (Hastie, Tibshirani & Friedman, The Elements of
// Statistical Learning, §7.10), among the weights whose MRR of the source
// memory is within one standard error of the best MRR, the one nearest prior
// (the model's measured default): a move away from it must earn its place by
// more than the noise of a few hundred pseudo-queries. A NaN prior means the
// smallest such weight. Weights must be finite and ≥ 0.
func Sweep(ctx context.Context, set Set, weights []float64, prior float64, search SearchFunc) (Result, error) {
	if len(set.Queries) == 0 {
		return Result{}, fmt.Errorf("calibrate: no pseudo-queries (method %s): the store has no memory long enough", set.Method)
	}
	if len(weights) == 0 {
		weights = DefaultWeights
	}
	res := Result{Method: set.Method, Queries: len(set.Queries)}
	n := float64(len(set.Queries))
	for _, w := range weights {
		if math.IsNaN(w) || math.IsInf(w, 0) || w < 0 {
			return Result{}, fmt.Errorf("calibrate: weight %v must be a finite number ≥ 0", w)
		}
		p := Point{Weight: w}
		var sq float64
		for _, q := range set.Queries {
			ids, err := search(ctx, q.Query, w)
			if err != nil {
				return Result{}, fmt.Errorf("calibrate: weight %v: %w", w, err)
			}
			rr := ReciprocalRank(ids, q.Target)
			p.MRR += rr
			sq += rr * rr
			if rr == 1 {
				p.Hit1++
			}
		}
		p.MRR /= n
		p.Hit1 /= n
		if n > 1 {
			p.SE = math.Sqrt(math.Max(0, sq/n-p.MRR*p.MRR) * n / (n - 1) / n)
		}
		res.Points = append(res.Points, p)
	}
	res.Best = Choose(res.Points, prior)
	return res, nil
}

// Choose applies the one-standard-error rule to swept points: of the weights
// whose MRR reaches the best MRR minus the best point's standard error (less
// 1e-9 for rounding), the one nearest prior, the smaller on a tie; with a NaN
// prior, the smallest.
func Choose(points []Point, prior float64) float64 {
	if len(points) == 0 {
		return math.NaN()
	}
	best := points[0]
	for _, p := range points[1:] {
		if p.MRR > best.MRR || (p.MRR == best.MRR && p.Weight < best.Weight) {
			best = p
		}
	}
	dist := func(w float64) float64 {
		if math.IsNaN(prior) {
			return w
		}
		return math.Abs(w - prior)
	}
	chosen := best.Weight
	for _, p := range points {
		if p.MRR < best.MRR-best.SE-1e-9 {
			continue
		}
		if d, dc := dist(p.Weight), dist(chosen); d < dc || (d == dc && p.Weight < chosen) {
			chosen = p.Weight
		}
	}
	return chosen
}

// ReciprocalRank is 1/rank of target in ids (rank from 1), 0 when absent.
func ReciprocalRank(ids []string, target string) float64 {
	for i, id := range ids {
		if id == target {
			return 1 / float64(i+1)
		}
	}
	return 0
}
