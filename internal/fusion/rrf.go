package fusion

// RRF computes Reciprocal Rank Fusion (Cormack, Clarke & Büttcher, "Reciprocal
// Rank Fusion outperforms Condorcet and individual Rank Learning Methods",
// SIGIR 2009): score(d) = Σ_leg w_leg / (k + rank_leg(d)), rank from 1. It
// uses only positions, so legs with incomparable score scales (BM25 and
// cosine) merge without calibration, and k damps the weight of the very top.

import "math"

// RRF fuses legs by reciprocal rank: Σ_leg w/(k+rank) over the legs that
// returned each ID. k <= 0 (or NaN, or +Inf) means DefaultK. The result holds
// the union of all legs, sorted by score descending, ties by ID ascending.
func RRF(legs []Leg, k float64) []Fused {
	if !(k > 0) || math.IsInf(k, 1) {
		k = DefaultK
	}
	return scoreFused(legs, union(legs), func(_ int, r LegRank) float64 {
		return 1 / (k + float64(r.Rank))
	})
}
