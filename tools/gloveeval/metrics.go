package main

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/engram-memory/engram/embed/glove"
)

type result struct {
	ndcg, r5, hit1 float64
	noVector       int
}

func evaluate(ctx context.Context, e *glove.Embedder, corpusPC bool, sf *sciFact, convs []conversation) (result, error) {
	var res result
	docs, queries, err := embedBoth(ctx, e, corpusPC, sf.docs, texts(sf.queries))
	if err != nil {
		return res, err
	}
	res.noVector += countNil(docs) + countNil(queries)
	n := 0
	for qi, q := range sf.queries {
		rel := sf.qrels[q[0]]
		if len(rel) == 0 {
			continue
		}
		n++
		top := rank(queries[qi], docs, 10)
		var dcg float64
		for i, d := range top {
			dcg += float64(rel[sf.docIDs[d]]) / math.Log2(float64(i+2))
		}
		grades := make([]int, 0, len(rel))
		for _, g := range rel {
			grades = append(grades, g)
		}
		slices.Sort(grades)
		slices.Reverse(grades)
		var idcg float64
		for i, g := range grades[:min(10, len(grades))] {
			idcg += float64(g) / math.Log2(float64(i+2))
		}
		if idcg > 0 {
			res.ndcg += dcg / idcg
		}
	}
	if n > 0 {
		res.ndcg /= float64(n)
	}
	nq := 0
	for _, c := range convs {
		turns, qs, err := embedBoth(ctx, e, corpusPC, c.turns, c.questions)
		if err != nil {
			return res, err
		}
		res.noVector += countNil(turns) + countNil(qs)
		for qi := range c.questions {
			nq++
			top := rank(qs[qi], turns, 5)
			for i, d := range top {
				if c.gold[qi][c.turnIDs[d]] {
					if i == 0 {
						res.hit1++
					}
					res.r5++
					break
				}
			}
		}
	}
	if nq > 0 {
		res.r5 /= float64(nq)
		res.hit1 /= float64(nq)
	}
	return res, nil
}

func texts(qs [][2]string) []string {
	out := make([]string, len(qs))
	for i, q := range qs {
		out[i] = q[1]
	}
	return out
}

func countNil(vs [][]float32) int {
	n := 0
	for _, v := range vs {
		if v == nil {
			n++
		}
	}
	return n
}

// embedBoth embeds a store and its queries; with corpusPC it also removes the
// store's own first singular vector from both and renormalises.
func embedBoth(ctx context.Context, e *glove.Embedder, corpusPC bool, store, queries []string) ([][]float32, [][]float32, error) {
	sv, err := e.Embed(ctx, store)
	if err != nil {
		return nil, nil, fmt.Errorf("embed store: %w", err)
	}
	qv, err := e.Embed(ctx, queries)
	if err != nil {
		return nil, nil, fmt.Errorf("embed queries: %w", err)
	}
	if corpusPC {
		pc := topSingular(sv, e.Dim())
		for _, vs := range [][][]float32{sv, qv} {
			for _, v := range vs {
				removeAndNormalize(v, pc)
			}
		}
	}
	return sv, qv, nil
}

// topSingular returns the top right singular vector of the rows (power
// iteration on VᵀV, uncentred as in SIF).
func topSingular(rows [][]float32, dim int) []float64 {
	x := make([]float64, dim)
	for j := range x {
		x[j] = 1 / math.Sqrt(float64(dim))
	}
	y := make([]float64, dim)
	for it := 0; it < 100; it++ {
		clear(y)
		for _, r := range rows {
			if r == nil {
				continue
			}
			var d float64
			for j, v := range r {
				d += float64(v) * x[j]
			}
			for j, v := range r {
				y[j] += d * float64(v)
			}
		}
		var n float64
		for _, v := range y {
			n += v * v
		}
		n = math.Sqrt(n)
		if n == 0 {
			return x
		}
		for j := range y {
			y[j] /= n
		}
		x, y = y, x
	}
	return x
}

func removeAndNormalize(v []float32, pc []float64) {
	if v == nil {
		return
	}
	var d float64
	for j, x := range v {
		d += float64(x) * pc[j]
	}
	var ss float64
	for j := range v {
		v[j] -= float32(d * pc[j])
		ss += float64(v[j]) * float64(v[j])
	}
	if ss > 0 {
		inv := float32(1 / math.Sqrt(ss))
		for j := range v {
			v[j] *= inv
		}
	}
}

// rank returns the indexes of the k stores vectors most similar to q (dot
// product of unit vectors), best first, ties broken by index; nil q or
// stored vectors never match.
func rank(q []float32, store [][]float32, k int) []int {
	if q == nil {
		return nil
	}
	type hit struct {
		i int
		s float32
	}
	hits := make([]hit, 0, len(store))
	for i, v := range store {
		if v == nil {
			continue
		}
		var s float32
		for j, x := range v {
			s += x * q[j]
		}
		hits = append(hits, hit{i, s})
	}
	slices.SortStableFunc(hits, func(a, b hit) int {
		switch {
		case a.s > b.s:
			return -1
		case a.s < b.s:
			return 1
		}
		return 0
	})
	out := make([]int, 0, k)
	for _, h := range hits[:min(k, len(hits))] {
		out = append(out, h.i)
	}
	return out
}
