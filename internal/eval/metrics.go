package eval

// Score computes the per-query retrieval metrics with trec_eval semantics, so the
// numbers compare with published BEIR and LoCoMo results:
//
//   - nDCG@k (trec_eval ndcg_cut.k): DCG = Σ_{i=1..k} grade(d_i) / log2(i+1), the
//     gain being the judged grade itself (not 2^g−1); the ideal DCG takes every
//     relevant judgement sorted by grade, cut at k. 0 when nothing is relevant.
//   - recall@k: |relevant ∩ top k| / |relevant|, uncapped (the denominator is all
//     relevant judgements, even when there are more than k) — the "fraction" form.
//   - any@k: 1 when at least one relevant memory is in the top k (LoCoMo's
//     "R@k-any"); hit@1 is any@1.
//   - mrr: reciprocal rank of the first relevant memory in the whole ranked list,
//     0 when none appears (trec_eval recip_rank over what was retrieved).
//
// Unlike trec_eval, which re-sorts a run by score and breaks ties by document id,
// Score takes the ranking as given; a memory listed twice counts at its first rank.

import (
	"math"
	"sort"
)

// Metric names, the keys of Metrics.
const (
	NDCG10    = "ndcg@10"
	NDCG5     = "ndcg@5"
	Recall5   = "recall@5"
	Recall10  = "recall@10"
	Recall100 = "recall@100"
	Hit1      = "hit@1"
	MRR       = "mrr"
	Any5      = "any@5"
	Any10     = "any@10"
)

// AllMetrics lists every metric Score computes, in the order reports show them
// when no other order is asked for.
var AllMetrics = []string{NDCG10, NDCG5, Recall5, Recall10, Recall100, Hit1, MRR, Any5, Any10}

// Metrics maps a metric name to its value in [0, 1].
type Metrics map[string]float64

// Score rates one ranked list of memory ids against the gold judgements
// (memory id → grade, relevant when above 0).
func Score(ranked []string, gold map[string]int) Metrics {
	var (
		numRel    int
		dcg5      float64
		dcg10     float64
		found5    int
		found10   int
		found100  int
		firstRank int
		grades    = make([]int, 0, len(gold))
	)
	for _, g := range gold {
		if g > 0 {
			numRel++
			grades = append(grades, g)
		}
	}
	seen := make(map[string]struct{}, min(len(ranked), 128))
	rank := 0
	for _, id := range ranked {
		if _, dup := seen[id]; dup {
			continue
		}
		seen[id] = struct{}{}
		rank++
		g := gold[id]
		if g <= 0 {
			continue
		}
		if firstRank == 0 {
			firstRank = rank
		}
		gain := float64(g) / math.Log2(float64(rank)+1)
		if rank <= 5 {
			dcg5 += gain
			found5++
		}
		if rank <= 10 {
			dcg10 += gain
			found10++
		}
		if rank <= 100 {
			found100++
		}
	}
	m := Metrics{NDCG10: 0, NDCG5: 0, Recall5: 0, Recall10: 0, Recall100: 0, Hit1: 0, MRR: 0, Any5: 0, Any10: 0}
	if numRel == 0 {
		return m
	}
	sort.Sort(sort.Reverse(sort.IntSlice(grades)))
	m[NDCG5] = safeDiv(dcg5, idealDCG(grades, 5))
	m[NDCG10] = safeDiv(dcg10, idealDCG(grades, 10))
	rel := float64(numRel)
	m[Recall5] = float64(found5) / rel
	m[Recall10] = float64(found10) / rel
	m[Recall100] = float64(found100) / rel
	if firstRank > 0 {
		m[MRR] = 1 / float64(firstRank)
	}
	m[Hit1] = indicator(firstRank == 1)
	m[Any5] = indicator(found5 > 0)
	m[Any10] = indicator(found10 > 0)
	return m
}

// idealDCG is the DCG of the best possible ranking: grades sorted descending, cut at k.
func idealDCG(sortedDesc []int, k int) float64 {
	var d float64
	for i, g := range sortedDesc {
		if i >= k {
			break
		}
		d += float64(g) / math.Log2(float64(i)+2)
	}
	return d
}

func safeDiv(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

func indicator(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
