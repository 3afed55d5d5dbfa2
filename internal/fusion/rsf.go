package fusion

// RSF computes relative score fusion, the hybrid fusion Weaviate introduced as
// "relativeScoreFusion" (v1.20): each leg's raw scores are min-max normalised
// to [0,1] and the normalised scores are summed with the legs' weights. Unlike
// RRF it keeps how far apart the scores were, not just their order.

import "math"

// RSF fuses legs by relative score: each leg's scores are min-max normalised
// to [0,1] over the IDs it returned (all equal → 1) and summed as Σ w·norm.
// NaN and -Inf scores normalise to 0 and +Inf to 1; they are left out of the
// min and max. The result holds the union of all legs, sorted by score
// descending, ties by ID ascending.
func RSF(legs []Leg) []Fused {
	fs := union(legs)
	stats := make([]minMax, len(legs))
	for li := range legs {
		stats[li] = legMinMax(fs, li)
	}
	return scoreFused(legs, fs, func(li int, r LegRank) float64 {
		return stats[li].norm(r.Score)
	})
}

// minMax is the range of one leg's finite scores.
type minMax struct {
	min, max float64
	finite   bool // at least one finite score was seen
}

// legMinMax is the range of leg li's finite scores over the fused IDs it returned.
func legMinMax(fs []Fused, li int) minMax {
	var m minMax
	for _, f := range fs {
		if r := f.Legs[li]; r.Rank > 0 {
			m.add(r.Score)
		}
	}
	return m
}

// add widens the range to take in s, ignoring non-finite values.
func (m *minMax) add(s float64) {
	if !isFinite(s) {
		return
	}
	if !m.finite {
		m.min, m.max, m.finite = s, s, true
		return
	}
	m.min = math.Min(m.min, s)
	m.max = math.Max(m.max, s)
}

// norm maps s into [0,1]: (s-min)/(max-min), 1 when every finite score was
// equal. Where max-min overflows, both differences are taken on halved values.
func (m minMax) norm(s float64) float64 {
	switch {
	case math.IsNaN(s) || math.IsInf(s, -1):
		return 0
	case math.IsInf(s, 1):
		return 1
	case !(m.max > m.min):
		return 1
	}
	if den := m.max - m.min; !math.IsInf(den, 1) {
		return clamp01((s - m.min) / den)
	}
	return clamp01((s/2 - m.min/2) / (m.max/2 - m.min/2))
}

// clamp01 limits v to [0,1]; NaN becomes 0.
func clamp01(v float64) float64 {
	switch {
	case v > 1:
		return 1
	case v >= 0:
		return v
	default: // negative or NaN
		return 0
	}
}
