package fusion

// DBSF computes distribution-based score fusion (Michelangiolo Mazzeschi,
// "Distribution-Based Score Fusion (DBSF), a new approach to Vector Search
// Ranking", 2023): each leg's scores are rescaled so that the interval
// [μ-3σ, μ+3σ] of that leg's score distribution maps onto [0,1], values
// outside it are clipped, and the rescaled scores are summed with the legs'
// weights. Using the spread instead of the extremes (as RSF does) keeps one
// outlying score from squashing every other score of its leg.

import "math"

// DBSF fuses legs by distribution: each leg's scores s become
// (s-(μ-3σ))/(6σ) clipped to [0,1], with μ and σ the mean and population
// standard deviation of the scores the leg returned, and are summed as
// Σ w·scaled. A leg whose scores are all equal (σ = 0, one hit included) maps
// them to 0.5, the value the mean takes for any σ. NaN and -Inf scores scale
// to 0 and +Inf to 1; they are left out of μ and σ. The result holds the
// union of all legs, sorted by score descending, ties by ID ascending.
func DBSF(legs []Leg) []Fused {
	fs := union(legs)
	stats := make([]spread, len(legs))
	for li := range legs {
		stats[li] = legSpread(fs, li)
	}
	return scoreFused(legs, fs, func(li int, r LegRank) float64 {
		return stats[li].scale(r.Score)
	})
}

// spread is one leg's score distribution: mean and sigma of the scores
// divided by unit. unit is 1 unless the largest finite magnitude is so large
// or so small that sums or squares could overflow or underflow; then it is
// that magnitude.
type spread struct {
	unit, mean, sigma float64
	equal             bool // fewer than two distinct finite scores
}

// legSpread measures leg li's finite scores over the fused IDs it returned.
func legSpread(fs []Fused, li int) spread {
	var m minMax
	for _, f := range fs {
		if r := f.Legs[li]; r.Rank > 0 {
			m.add(r.Score)
		}
	}
	sp := spread{equal: !m.finite || m.min == m.max}
	if sp.equal {
		return sp
	}
	sp.unit = math.Max(math.Abs(m.min), math.Abs(m.max))
	if sp.unit >= safeLow && sp.unit <= safeHigh {
		sp.unit = 1
	}
	sum, n := 0.0, 0
	for _, f := range fs {
		if r := f.Legs[li]; r.Rank > 0 && isFinite(r.Score) {
			sum += r.Score / sp.unit
			n++
		}
	}
	sp.mean = sum / float64(n)
	ss := 0.0
	for _, f := range fs {
		if r := f.Legs[li]; r.Rank > 0 && isFinite(r.Score) {
			d := r.Score/sp.unit - sp.mean
			ss += d * d
		}
	}
	sp.sigma = math.Sqrt(ss / float64(n))
	if !(sp.sigma > 0) {
		sp.equal = true
	}
	return sp
}

// scale maps s to (s-(μ-3σ))/(6σ) clipped to [0,1].
func (sp spread) scale(s float64) float64 {
	switch {
	case math.IsNaN(s) || math.IsInf(s, -1):
		return 0
	case math.IsInf(s, 1):
		return 1
	case sp.equal:
		return 0.5
	}
	return clamp01((s/sp.unit - (sp.mean - 3*sp.sigma)) / (6 * sp.sigma))
}

// Magnitudes between safeLow and safeHigh are summed and squared as they
// are; outside, scores are rescaled first.
const (
	safeLow  = 1e-100
	safeHigh = 1e100
)

// isFinite reports whether s is neither NaN nor infinite.
func isFinite(s float64) bool { return !math.IsNaN(s) && !math.IsInf(s, 0) }
