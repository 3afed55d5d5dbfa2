// Package fusion merges ranked result lists (the BM25 leg and the vector leg)
// into one ranking with RRF, relative-score or distribution-based fusion, and
// diversifies a ranking with maximal marginal relevance. Every function is pure.
package fusion

import (
	"cmp"
	"math"
	"slices"
)

// DefaultK is RRF's rank constant, the value Cormack, Clarke & Büttcher (2009)
// found robust across TREC runs.
const DefaultK = 60

// Hit is one leg's result: a document ID and the leg's own score for it. A
// leg's hits are ordered best first.
type Hit struct {
	ID    string
	Score float64
}

// Leg is one ranked list to fuse. Weight scales the leg's contribution; a
// negative, NaN or infinite weight counts as zero.
type Leg struct {
	Name   string
	Weight float64
	Hits   []Hit
}

// LegRank is where one leg placed a fused ID. Rank is the 1-based position of
// the ID's first occurrence in the leg's hits, 0 when the leg did not return
// the ID; Score is the leg's raw score there.
type LegRank struct {
	Rank  int
	Score float64
}

// Fused is one ID of the merged ranking. Legs is parallel to the input legs.
type Fused struct {
	ID    string
	Score float64
	Legs  []LegRank
}

// union collects every distinct ID of every leg, in first-seen order, with
// its rank and raw score in each leg. A duplicate ID inside one leg counts
// once, at its first (best) position; later positions are not renumbered.
// Scores are left at zero for the caller to fill.
func union(legs []Leg) []Fused {
	total := 0
	for _, l := range legs {
		total += len(l.Hits)
	}
	out := make([]Fused, 0, total)
	if total == 0 {
		return out
	}
	n := len(legs)
	ranks := make([]LegRank, total*n) // one backing array for every Legs slice
	index := make(map[string]int, total)
	for li, l := range legs {
		for i, h := range l.Hits {
			j, ok := index[h.ID]
			if !ok {
				j = len(out)
				index[h.ID] = j
				out = append(out, Fused{ID: h.ID, Legs: ranks[j*n : (j+1)*n : (j+1)*n]})
			}
			if out[j].Legs[li].Rank != 0 {
				continue // duplicate inside this leg: the first occurrence stands
			}
			out[j].Legs[li] = LegRank{Rank: i + 1, Score: h.Score}
		}
	}
	return out
}

// weight is a leg's usable weight: negative, NaN and infinite weights are zero.
func weight(w float64) float64 {
	if !(w > 0) || math.IsInf(w, 1) {
		return 0
	}
	return w
}

// sortFused orders by score descending, ties by ID ascending, so the output
// does not depend on the order the inputs arrived in.
func sortFused(fs []Fused) {
	slices.SortFunc(fs, func(a, b Fused) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
}

// scoreFused fills each fused ID's score as Σ_leg w_leg · norm(leg, rank),
// summed in leg order over the legs that returned it, then sorts.
func scoreFused(legs []Leg, fs []Fused, norm func(leg int, r LegRank) float64) []Fused {
	ws := make([]float64, len(legs))
	for li, l := range legs {
		ws[li] = weight(l.Weight)
	}
	for i := range fs {
		s := 0.0
		for li, r := range fs[i].Legs {
			if r.Rank > 0 && ws[li] > 0 {
				s += ws[li] * norm(li, r)
			}
		}
		fs[i].Score = s
	}
	sortFused(fs)
	return fs
}
