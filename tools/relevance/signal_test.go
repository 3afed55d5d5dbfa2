package main

import (
	"math"
	"testing"
)

func TestAUC(t *testing.T) {
	cases := []struct {
		name     string
		pos, neg []float64
		want     float64
	}{
		{"perfect", []float64{.9, .8}, []float64{.1, .2}, 1},
		{"reversed", []float64{.1}, []float64{.5, .6}, 0},
		{"ties count half", []float64{.5}, []float64{.5}, .5},
		{"mixed", []float64{.3, .7}, []float64{.5}, .5},
		{"empty", nil, []float64{.5}, math.NaN()},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := auc(c.pos, c.neg)
			if got != c.want && !(math.IsNaN(got) && math.IsNaN(c.want)) {
				t.Errorf("auc = %v, want %v", got, c.want)
			}
		})
	}
}

func TestSignalsAndBars(t *testing.T) {
	// One present term worth 2, one absent term worth 6: a memory scoring 2
	// is at 1 of the present-terms bound but at .25 of the full bound.
	s := &sample{Kind: kindAnswerable, Present: []float64{2}, Absent: 1, AbsentW: 6, K1: 1.2,
		Gold:  map[string]int{"g": 1},
		Cands: []cand{{ID: "x", BM25: 2, Cos: 0.775, HasCos: true}, {ID: "g", BM25: 1}}}
	if got := bPresent(s, &s.Cands[0]); got != 1 {
		t.Errorf("bPresent = %v, want 1", got)
	}
	if got := bAll(s, &s.Cands[0]); got != .25 {
		t.Errorf("bAll = %v, want .25", got)
	}
	if got := vModel(s, &s.Cands[0]); math.Abs(got-.5) > 1e-12 {
		t.Errorf("cos@.55 of .775 = %v, want .5", got)
	}
	v := variant{"mean", meanOf(bAll, vModel)}
	if got := top(s, v); math.Abs(got-.375) > 1e-12 {
		t.Errorf("top = %v, want .375", got)
	}
	// At bar .2 only x clears (g: .125/2 = .0625): gold g is lost.
	if r := ranked(s, v, .2); len(r) != 1 || r[0] != "x" {
		t.Errorf("ranked at .2 = %v", r)
	}
	if m := measure([]*sample{s}, v, .2); m.Empty != 0 || m.Metric != 0 {
		t.Errorf("measure at .2 = %+v, want nothing empty and R@5 0", m)
	}
	if m := measure([]*sample{s}, v, 0); m.Metric != 1 {
		t.Errorf("measure at 0 = %+v, want R@5 1", m)
	}
	if b := barFor([]*sample{s}, v, 1); b != .38 {
		t.Errorf("barFor = %v, want .38 (first grid bar above .375)", b)
	}
}
