package eval

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/engram-memory/engram/memory"
)

// DefaultSweepWeights are the vector-leg weights a weight sweep tries, BM25 at 1.
var DefaultSweepWeights = []float64{0, 0.05, 0.1, 0.2, 0.3, 0.5, 1}

// StandardModes are the three plain strategies: bm25, vector and hybrid at the
// store's default weights.
func StandardModes() []Mode {
	modes, _ := ParseModes("bm25,vector,hybrid")
	return modes
}

// Sweep builds hybrid modes at each vector weight (DefaultSweepWeights when nil),
// with the BM25 weight fixed at 1, named "hybrid:w=0.1" and so on.
func Sweep(weights []float64) []Mode {
	if weights == nil {
		weights = DefaultSweepWeights
	}
	modes := make([]Mode, 0, len(weights))
	for _, w := range weights {
		m, err := ParseMode("hybrid:w=" + strconv.FormatFloat(w, 'g', -1, 64))
		if err != nil {
			continue // a NaN or negative weight has no mode
		}
		modes = append(modes, m)
	}
	return modes
}

// ParseModes parses a comma-separated list of mode specs (see ParseMode); the
// word "sweep" expands to Sweep(nil). Repeated names are an error.
func ParseModes(spec string) ([]Mode, error) {
	var modes []Mode
	seen := map[string]bool{}
	for _, part := range strings.Split(spec, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		var add []Mode
		if part == "sweep" {
			add = Sweep(nil)
		} else {
			m, err := ParseMode(part)
			if err != nil {
				return nil, err
			}
			add = []Mode{m}
		}
		for _, m := range add {
			if seen[m.Name] {
				return nil, fmt.Errorf("mode %q given twice", m.Name)
			}
			seen[m.Name] = true
			modes = append(modes, m)
		}
	}
	if len(modes) == 0 {
		return nil, fmt.Errorf("no modes in %q", spec)
	}
	return modes, nil
}

// ParseMode parses one mode spec: a strategy (bm25, vector, hybrid), then any
// "+stage" (mmr, rerank, hyde), then any ":key=value" (w: vector weight, bw: BM25
// weight, fusion: rrf|rsf|dbsf|native, k: RRF's k, lambda: MMR λ in [0,1], candidates:
// pool per leg, long: the long-query setting, see LongQuery).
// Example: "hybrid+mmr:w=0.1:lambda=0.5". The spec, trimmed, is the mode's name.
func ParseMode(spec string) (Mode, error) {
	spec = strings.TrimSpace(spec)
	fields := strings.Split(spec, ":")
	stages := strings.Split(fields[0], "+")
	base := stages[0]
	if base != memory.ModeBM25 && base != memory.ModeVector && base != memory.ModeHybrid {
		return Mode{}, fmt.Errorf("mode %q: strategy %q: want bm25, vector or hybrid", spec, base)
	}
	var setters []func(q *memory.Query)
	set := func(f func(q *memory.Query)) { setters = append(setters, f) }
	set(func(q *memory.Query) { q.Mode = base })
	for _, s := range stages[1:] {
		switch s {
		case "mmr":
			set(func(q *memory.Query) { q.MMR = true })
		case "rerank":
			set(func(q *memory.Query) { q.Rerank = true })
		case "hyde":
			set(func(q *memory.Query) { q.HyDE = true })
		default:
			return Mode{}, fmt.Errorf("mode %q: stage %q: want mmr, rerank or hyde", spec, s)
		}
	}
	weighted, bm25Weighted := false, false
	given := map[string]bool{}
	long := DefaultLongQuery
	for _, kv := range fields[1:] {
		k, v, ok := strings.Cut(kv, "=")
		if given[k] {
			return Mode{}, fmt.Errorf("mode %q: parameter %q given twice", spec, k)
		}
		given[k] = true
		weighted = weighted || k == "w"
		bm25Weighted = bm25Weighted || k == "bw"
		if !ok || v == "" {
			return Mode{}, fmt.Errorf("mode %q: parameter %q: want key=value", spec, kv)
		}
		if k == "long" {
			l, err := ParseLongQuery(v)
			if err != nil {
				return Mode{}, fmt.Errorf("mode %q: %w", spec, err)
			}
			long = l
			continue
		}
		f, err := modeParam(k, v)
		if err != nil {
			return Mode{}, fmt.Errorf("mode %q: %w", spec, err)
		}
		set(f)
	}
	if weighted && !bm25Weighted {
		// A vector weight is relative to BM25's: pin BM25 at 1 so "w" means what it says.
		set(func(q *memory.Query) { b := 1.0; q.BM25Weight = &b })
	}
	return Mode{Name: spec, Long: long, Apply: func(q *memory.Query) {
		for _, f := range setters {
			f(q)
		}
	}}, nil
}

func modeParam(k, v string) (func(q *memory.Query), error) {
	switch k {
	case "kg":
		x, err := strconv.ParseFloat(v, 64)
		if err != nil || !(x >= 0 && x <= 1) {
			return nil, fmt.Errorf("kg=%q: want the keyword gate, a number from 0 (off) to 1", v)
		}
		return func(q *memory.Query) { g := x; q.KeywordGate = &g }, nil
	case "w", "bw", "lambda":
		x, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
			return nil, fmt.Errorf("%s=%q: want a finite number ≥ 0", k, v)
		}
		switch k {
		case "w":
			return func(q *memory.Query) { w := x; q.VectorWeight = &w }, nil
		case "bw":
			return func(q *memory.Query) { b := x; q.BM25Weight = &b }, nil
		default:
			if x > 1 {
				return nil, fmt.Errorf("lambda=%q: want a number in [0, 1]", v)
			}
			return func(q *memory.Query) { l := x; q.Lambda = &l }, nil
		}
	case "fusion":
		if v != "rrf" && v != "rsf" && v != "dbsf" && v != "native" {
			return nil, fmt.Errorf("fusion=%q: want rrf, rsf, dbsf or native (the backend's own, e.g. Weaviate's)", v)
		}
		return func(q *memory.Query) { q.Fusion = v }, nil
	case "k":
		x, err := strconv.ParseFloat(v, 64)
		if err != nil || !(x > 0) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("k=%q: want RRF's k, a number > 0", v)
		}
		return func(q *memory.Query) { q.RRFK = x }, nil
	case "candidates":
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("candidates=%q: want a positive integer", v)
		}
		return func(q *memory.Query) { q.Candidates = n }, nil
	}
	return nil, fmt.Errorf("parameter %q: want w, bw, kg, fusion, k, lambda, candidates or long", k)
}
