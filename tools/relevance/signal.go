package main

import (
	"math"
	"sort"

	"github.com/engram-memory/engram/internal/eval"
)

// variant is one definition of the relevance signal of a candidate.
type variant struct {
	name string
	f    func(s *sample, c *cand) float64
}

// modelFloor is the built-in model's floor in config.go before this measurement.
const modelFloor = 0.55

func clip01(x float64) float64 { return math.Max(0, math.Min(1, x)) }

func sum(xs []float64) float64 {
	t := 0.0
	for _, x := range xs {
		t += x
	}
	return t
}

// BM25 parts.
func bPresent(s *sample, c *cand) float64 {
	if ub := sum(s.Present); ub > 0 {
		return clip01(c.BM25 / ub)
	}
	return 0
}

// bAll counts the query tokens the store lacks in the bound, at the weight a
// term no memory holds would have.
func bAll(s *sample, c *cand) float64 {
	if ub := sum(s.Present) + float64(s.Absent)*s.AbsentW; ub > 0 {
		return clip01(c.BM25 / ub)
	}
	return 0
}

// bAllTF1 is bAll against a typical full match (each term once in a memory of
// average length scores idf, not idf·(k1+1)).
func bAllTF1(s *sample, c *cand) float64 {
	if ub := sum(s.Present) + float64(s.Absent)*s.AbsentW; ub > 0 {
		return clip01(c.BM25 * (s.K1 + 1) / ub)
	}
	return 0
}

func vFloor(floor float64) func(s *sample, c *cand) float64 {
	return func(_ *sample, c *cand) float64 {
		if !c.HasCos || floor >= 1 {
			return 0
		}
		return clip01((c.Cos - floor) / (1 - floor))
	}
}

func vStore(s *sample, c *cand) float64   { return vFloor(s.StoreFloor)(s, c) }
func vQuery(s *sample, c *cand) float64   { return vFloor(s.QueryMedian)(s, c) }
func vModel(s *sample, c *cand) float64   { return vFloor(modelFloor)(s, c) }
func vStore10(s *sample, c *cand) float64 { return vFloor(s.StoreFloor+0.10)(s, c) }
func vStore20(s *sample, c *cand) float64 { return vFloor(s.StoreFloor+0.20)(s, c) }
func vModel75(s *sample, c *cand) float64 { return vFloor(0.75)(s, c) }
func pipeline(_ *sample, c *cand) float64 { return c.Rel }
func zero(_ *sample, _ *cand) float64     { return 0 }
func maxOf(a, b func(*sample, *cand) float64) func(*sample, *cand) float64 {
	return func(s *sample, c *cand) float64 { return math.Max(a(s, c), b(s, c)) }
}

func meanOf(a, b func(*sample, *cand) float64) func(*sample, *cand) float64 {
	return func(s *sample, c *cand) float64 { return (a(s, c) + b(s, c)) / 2 }
}

func noisyOr(a, b func(*sample, *cand) float64) func(*sample, *cand) float64 {
	return func(s *sample, c *cand) float64 { return 1 - (1-a(s, c))*(1-b(s, c)) }
}

// variants are the definitions compared; "pipeline" is explain.relevance as
// the code computes it now.
var variants = []variant{
	{"pipeline", pipeline},
	{"max(bm25/ub_present, cos@0.55)", maxOf(bPresent, vModel)},
	{"bm25/ub_present", maxOf(bPresent, zero)},
	{"bm25/ub_all", maxOf(bAll, zero)},
	{"bm25·(k1+1)/ub_all", maxOf(bAllTF1, zero)},
	{"cos@0.55", vModel},
	{"cos@0.75", vModel75},
	{"cos@store_floor", vStore},
	{"cos@store_floor+.1", vStore10},
	{"cos@store_floor+.2", vStore20},
	{"cos@query_median", vQuery},
	{"max(bm25/ub_all, cos@0.60)", maxOf(bAll, vFloor(0.60))},
	{"max(bm25/ub_all, cos@0.65)", maxOf(bAll, vFloor(0.65))},
	{"max(bm25/ub_all, cos@0.70)", maxOf(bAll, vFloor(0.70))},
	{"max(bm25/ub_all, cos@0.75)", maxOf(bAll, vModel75)},
	{"mean(bm25/ub_all, cos@0.20)", meanOf(bAll, vFloor(0.20))},
	{"mean(bm25/ub_all, cos@0.25)", meanOf(bAll, vFloor(0.25))},
	{"mean(bm25/ub_all, cos@0.30)", meanOf(bAll, vFloor(0.30))},
	{"mean(bm25/ub_all, cos@0.35)", meanOf(bAll, vFloor(0.35))},
	{"mean(bm25/ub_all, cos@0.40)", meanOf(bAll, vFloor(0.40))},
	{"mean(bm25/ub_all, cos@0.45)", meanOf(bAll, vFloor(0.45))},
	{"mean(bm25/ub_all, cos@0.50)", meanOf(bAll, vFloor(0.50))},
	{"mean(bm25/ub_all, cos@0.55)", meanOf(bAll, vFloor(0.55))},
	{"mean(bm25/ub_all, cos@0.60)", meanOf(bAll, vFloor(0.60))},
	{"mean(bm25/ub_all, cos@qmedian)", meanOf(bAll, vQuery)},
	{"noisyor(bm25/ub_all, cos@0.65)", noisyOr(bAll, vFloor(0.65))},
	{"max(bm25/ub_all, cos@store+.2)", maxOf(bAll, vStore20)},
	{"max(bm25·(k1+1)/ub_all, cos@store+.2)", maxOf(bAllTF1, vStore20)},
}

// top is a query's highest signal over its candidates: what decides whether a
// bar leaves it anything.
func top(s *sample, v variant) float64 {
	best := 0.0
	for i := range s.Cands {
		best = math.Max(best, v.f(s, &s.Cands[i]))
	}
	return best
}

// ranked is the candidates that clear bar, in pipeline order.
func ranked(s *sample, v variant, bar float64) []string {
	var out []string
	for i := range s.Cands {
		if v.f(s, &s.Cands[i]) >= bar {
			out = append(out, s.Cands[i].ID)
		}
	}
	return out
}

// auc is the probability that a random positive's top signal beats a random
// negative's (ties count half): how well the signal separates the two kinds.
func auc(pos, neg []float64) float64 {
	if len(pos) == 0 || len(neg) == 0 {
		return math.NaN()
	}
	n := append([]float64(nil), neg...)
	sort.Float64s(n)
	total := 0.0
	for _, p := range pos {
		lo := sort.SearchFloat64s(n, p)
		hi := sort.Search(len(n), func(i int) bool { return n[i] > p })
		total += float64(lo) + float64(hi-lo)/2
	}
	return total / float64(len(pos)*len(neg))
}

// atBar summarises one kind of query at one bar.
type atBar struct {
	Empty  float64 // share of queries left with nothing
	Metric float64 // mean R@5-any (LoCoMo) or nDCG@10 (SciFact)
}

func measure(ss []*sample, v variant, bar float64) atBar {
	var out atBar
	if len(ss) == 0 {
		return out
	}
	for _, s := range ss {
		r := ranked(s, v, bar)
		if len(r) == 0 {
			out.Empty++
		}
		m := eval.Score(r, s.Gold)
		if s.Kind == kindSciFact {
			out.Metric += m[eval.NDCG10]
		} else {
			out.Metric += m[eval.Any5]
		}
	}
	out.Empty /= float64(len(ss))
	out.Metric /= float64(len(ss))
	return out
}

// barFor is the smallest bar on a 0.005 grid that leaves at least share of the
// queries ss with nothing.
func barFor(ss []*sample, v variant, share float64) float64 {
	tops := make([]float64, len(ss))
	for i, s := range ss {
		tops[i] = top(s, v)
	}
	for i := 0; i <= 200; i++ {
		b := float64(i) / 200
		empty := 0
		for _, t := range tops {
			if t < b {
				empty++
			}
		}
		if float64(empty) >= share*float64(len(ss)) {
			return b
		}
	}
	return 1.01
}
