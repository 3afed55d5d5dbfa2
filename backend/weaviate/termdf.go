package weaviate

import (
	"context"
	"math"
	"strconv"
	"strings"

	pb "github.com/weaviate/weaviate/grpc/generated/protocol/v1"
)

// A term's document frequency, which the keyword relevance bound needs
// (Backend.bound), is the number of a tenant's memories whose terms hold it.
// Counting them with a filtered Aggregate costs Weaviate a read of every such
// object (about 3 µs each: 7.5 ms for a term in half of SciFact's 5,183
// abstracts, and it grows with the store), so countTerms reads it instead
// from BM25 searches that read no object: first one of all the terms a
// search has not seen yet (probeAll, below), then, for each term that one
// could not tell, a search of the term alone (probe) over the terms
// property, probeDepth deep, with each hit's score and explanation (the
// term's frequency in the hit and the property's length there), whatever
// the term's frequency:
//
//   - fewer hits than probeDepth: they are all the memories holding it;
//   - otherwise Weaviate's scores, s = idf·tf/(tf + k1·(1 − b + b·dl/avgdl))
//     (bm25_searcher_block.go in v1.38.11; Engram's scores are these times
//     k1+1), give idf and avgdl by least squares over the hits (solveIDF),
//     and idf = ln(1 + (n − df + 0.5)/(df + 0.5)) over the tenant's n
//     memories gives df.
//
// The answer is kept only when the fit reproduces every hit's score and the
// df it gives reproduces the idf (hits from shards with statistics of their
// own fail it, as would a server that scores otherwise); else the term is
// counted as before. A class split into shards is always counted: a probe's
// hits may all come from one shard, whose idf is not the class's.
// TestTermDF checks both ways agree.

// probeDepth is how many hits a term's probe asks for: the most memories it
// counts outright, and the equations of the fit (two unknowns).
const probeDepth = 4

// fitTolerance is how close the fit must come to each hit's score, and the
// df it gives to the idf, relative to their size. Scores come as float32
// (relative error 6e-8).
const fitTolerance = 1e-4

// probeHit is what the probe says of one memory holding the term.
type probeHit struct {
	score  float64 // Weaviate's BM25 score (without the k1+1 factor)
	tf, dl float64 // the term's frequency and the property's length
}

// dfFromProbe is the number of the tenant's n memories holding the term
// whose probe gave hits, and false when they cannot tell (then count it).
func dfFromProbe(hits []probeHit, n int, k1, b float64) (int, bool) {
	if hits == nil {
		return 0, false
	}
	if len(hits) < probeDepth {
		return len(hits), len(hits) <= n
	}
	idf, ok := solveIDF(hits, k1, b)
	if !ok {
		return 0, false
	}
	return dfFromIDF(idf, n)
}

// probe runs the term's BM25 search and reads its hits; nil (and no error)
// when a hit's explanation does not say what the fit needs.
func (s *Store) probe(ctx context.Context, tenant, term string) ([]probeHit, error) {
	req := &pb.SearchRequest{Limit: probeDepth, Bm25Search: &pb.BM25{Query: term, Properties: []string{pTerms}},
		Properties: &pb.PropertiesRequest{}, Metadata: &pb.MetadataRequest{Score: true, ExplainScore: true}}
	objs, err := s.search(ctx, tenant, req)
	if err != nil {
		return nil, err
	}
	hits := make([]probeHit, 0, len(objs))
	for i := range objs {
		h, ok := parseProbe(term, objs[i].Additional.Score.String(), objs[i].Additional.ExplainScore)
		if !ok {
			return nil, nil
		}
		hits = append(hits, h)
	}
	return hits, nil
}

// parseProbe reads one probe hit: its score, and from its explanation
// (", BM25F_<term>_frequency:3, BM25F_<term>_propLength:165") the term's
// frequency and the property's length; false if any is missing, not a
// number or not positive.
func parseProbe(term, score, explain string) (probeHit, bool) {
	field := func(name string) (float64, bool) {
		key := "BM25F_" + term + "_" + name + ":"
		i := strings.Index(explain, key)
		if i < 0 {
			return 0, false
		}
		v := explain[i+len(key):]
		if j := strings.IndexByte(v, ','); j >= 0 {
			v = v[:j]
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		return f, err == nil && f > 0 && !math.IsInf(f, 0)
	}
	sc, err := strconv.ParseFloat(score, 64)
	if err != nil || !(sc > 0) || math.IsInf(sc, 0) {
		return probeHit{}, false
	}
	tf, ok1 := field("frequency")
	dl, ok2 := field("propLength")
	if !ok1 || !ok2 {
		return probeHit{}, false
	}
	return probeHit{score: sc, tf: tf, dl: dl}, true
}

// solveIDF fits s = idf·tf/(tf + k1·(1 − b + b·dl/avgdl)) to the hits. In
// the form tf/s = u·(tf + k1·(1−b)) + v·dl, with u = 1/idf and
// v = k1·b/(idf·avgdl), it is linear: least squares over the hits gives u
// and v. False when the hits do not determine them (too few, or their
// lengths and frequencies in proportion), when the result is not a positive
// idf and average length, or when it misses a hit's score by more than
// fitTolerance.
func solveIDF(hits []probeHit, k1, b float64) (float64, bool) {
	if len(hits) < 2 || !(k1 > 0) || !(b > 0) || b > 1 {
		return 0, false
	}
	var a11, a12, a22, r1, r2 float64
	for _, h := range hits {
		x, y, z := h.tf+k1*(1-b), h.dl, h.tf/h.score
		a11 += x * x
		a12 += x * y
		a22 += y * y
		r1 += x * z
		r2 += y * z
	}
	det := a11*a22 - a12*a12
	if !(det > 1e-9*a11*a22) {
		return 0, false
	}
	u := (r1*a22 - r2*a12) / det
	v := (a11*r2 - a12*r1) / det
	if !(u > 0) || !(v > 0) {
		return 0, false
	}
	for _, h := range hits {
		want := h.tf / (u*(h.tf+k1*(1-b)) + v*h.dl)
		if math.Abs(want-h.score) > fitTolerance*h.score {
			return 0, false
		}
	}
	return 1 / u, true
}

// dfFromIDF inverts idf = ln(1 + (n − df + 0.5)/(df + 0.5)):
// df = (n + 1)·e^−idf − 0.5, rounded; false unless that df, in [0, n], gives
// the idf back within fitTolerance.
func dfFromIDF(idf float64, n int) (int, bool) {
	if !(idf > 0) || n <= 0 || math.IsInf(idf, 0) {
		return 0, false
	}
	df := math.Round(float64(n+1)*math.Exp(-idf) - 0.5)
	if df < 0 || df > float64(n) {
		return 0, false
	}
	back := math.Log(1 + (float64(n)-df+0.5)/(df+0.5))
	if math.Abs(back-idf) > fitTolerance*idf {
		return 0, false
	}
	return int(df), true
}

// The terms a search has not seen yet go first into one probe of them all
// (probeAll): one BM25 search of the terms together over the terms
// property, multiDepth deep, no property, each hit's score and explanation.
// When it returns fewer hits than multiDepth, they are every memory holding
// any of the terms, and each term's df is the number holding it. Otherwise
// a hit's score is the sum over the terms it holds of
// idf·tf/(tf + k1·(1 − b + b·dl/avgdl)), linear in the idfs for a given
// avgdl: solveIDFs fits both. A term the hits do not hold, or a fit that
// misses, falls back to its own probe.

// multiDepth is how many hits the probe of all terms asks for at least;
// 4 a term when there are more than 8 (equations enough for the fit).
const multiDepth = 32

// multiLimit is the probe of all terms' depth for so many terms.
func multiLimit(terms int) int { return max(multiDepth, 4*terms) }

// multiHit is what the probe of all terms says of one memory: its score,
// the property's length there and each term's frequency (0: absent).
type multiHit struct {
	score, dl float64
	tf        []float64
}

// probeAll runs the probe of all terms (distinct, at least two) and reads
// its hits; nil (and no error) when a hit's explanation does not say what
// the fit needs.
func (s *Store) probeAll(ctx context.Context, tenant string, terms []string) ([]multiHit, error) {
	req := &pb.SearchRequest{Limit: uint32(multiLimit(len(terms))), Bm25Search: &pb.BM25{Query: strings.Join(terms, " "), Properties: []string{pTerms}},
		Properties: &pb.PropertiesRequest{}, Metadata: &pb.MetadataRequest{Score: true, ExplainScore: true}}
	objs, err := s.search(ctx, tenant, req)
	if err != nil {
		return nil, err
	}
	hits := make([]multiHit, 0, len(objs))
	for i := range objs {
		h, ok := parseMulti(terms, objs[i].Additional.Score.String(), objs[i].Additional.ExplainScore)
		if !ok {
			return nil, nil
		}
		hits = append(hits, h)
	}
	return hits, nil
}

// parseMulti reads one hit of the probe of all terms: its score, each
// term's frequency and the property's length, which every term it holds
// must give alike; false if anything is missing, not positive or
// inconsistent, or if it holds none of the terms.
func parseMulti(terms []string, score, explain string) (multiHit, bool) {
	sc, err := strconv.ParseFloat(score, 64)
	if err != nil || !(sc > 0) || math.IsInf(sc, 0) {
		return multiHit{}, false
	}
	h := multiHit{score: sc, tf: make([]float64, len(terms))}
	for i, t := range terms {
		p, ok := parseProbe(t, score, explain)
		if !ok {
			if strings.Contains(explain, "BM25F_"+t+"_") {
				return multiHit{}, false // mentioned, but not readable
			}
			continue
		}
		if h.dl != 0 && p.dl != h.dl {
			return multiHit{}, false
		}
		h.tf[i], h.dl = p.tf, p.dl
	}
	return h, h.dl > 0
}

// dfsFromProbe is each term's df from the probe of all terms among the
// tenant's n memories, and which terms it could tell.
func dfsFromProbe(hits []multiHit, terms []string, n int, k1, b float64) (df []int, ok []bool) {
	df, ok = make([]int, len(terms)), make([]bool, len(terms))
	if hits == nil {
		return df, ok
	}
	if len(hits) < multiLimit(len(terms)) { // every memory holding any of the terms
		for i := range terms {
			for _, h := range hits {
				if h.tf[i] > 0 {
					df[i]++
				}
			}
			ok[i] = df[i] <= n
		}
		return df, ok
	}
	idfs, solved := solveIDFs(hits, len(terms), k1, b)
	if !solved {
		return df, ok
	}
	for i, idf := range idfs {
		if idf > 0 {
			df[i], ok[i] = dfFromIDF(idf, n)
		}
	}
	return df, ok
}

// solveIDFs fits s = Σ_t idf_t·tf_t/(tf_t + k1·(1 − b + b·dl/avgdl)) to the
// hits: for each avgdl tried, the idfs by least squares on relative
// residuals (the normal equations, solved with partial pivoting); avgdl by a
// search over its logarithm, coarse then golden-section. A term no hit holds
// gets idf 0 (not told). False when the system is singular, an idf is not
// positive, or the best fit misses a hit's score by more than fitTolerance.
func solveIDFs(hits []multiHit, terms int, k1, b float64) ([]float64, bool) {
	if len(hits) < 2 || terms == 0 || !(k1 > 0) || !(b > 0) || b > 1 {
		return nil, false
	}
	held := make([]bool, terms)
	var cols []int // the terms some hit holds
	for _, h := range hits {
		for t, f := range h.tf {
			if f > 0 && !held[t] {
				held[t] = true
			}
		}
	}
	for t, ok := range held {
		if ok {
			cols = append(cols, t)
		}
	}
	if len(cols) == 0 || len(cols) >= len(hits) {
		return nil, false // fewer equations than unknowns (and avgdl)
	}
	// fit returns the idfs of cols and the largest relative residual.
	fit := func(avgdl float64) ([]float64, float64) {
		m := len(cols)
		a := make([]float64, m*m)
		r := make([]float64, m)
		g := make([]float64, m)
		for _, h := range hits {
			w := 1 / (h.score * h.score)
			for j, t := range cols {
				if f := h.tf[t]; f > 0 {
					g[j] = f / (f + k1*(1-b+b*h.dl/avgdl))
				} else {
					g[j] = 0
				}
			}
			for j := range m {
				if g[j] == 0 {
					continue
				}
				r[j] += w * g[j] * h.score
				for k := range m {
					a[j*m+k] += w * g[j] * g[k]
				}
			}
		}
		x, ok := solveLinear(a, r, m)
		if !ok {
			return nil, math.Inf(1)
		}
		worst := 0.0
		for _, h := range hits {
			pred := 0.0
			for j, t := range cols {
				if f := h.tf[t]; f > 0 {
					pred += x[j] * f / (f + k1*(1-b+b*h.dl/avgdl))
				}
			}
			worst = max(worst, math.Abs(pred-h.score)/h.score)
		}
		return x, worst
	}
	// avgdl between 1/8 of the shortest hit and 8 times the longest.
	lo, hi := math.Inf(1), 0.0
	for _, h := range hits {
		lo, hi = min(lo, h.dl), max(hi, h.dl)
	}
	lo, hi = math.Log(lo/8), math.Log(hi*8)
	const steps = 48
	best, bestErr := lo, math.Inf(1)
	for i := range steps + 1 {
		x := lo + (hi-lo)*float64(i)/steps
		if _, e := fit(math.Exp(x)); e < bestErr {
			best, bestErr = x, e
		}
	}
	a, c := best-(hi-lo)/steps, best+(hi-lo)/steps
	const phi = 0.6180339887498949
	for range 60 {
		x1, x2 := c-phi*(c-a), a+phi*(c-a)
		_, e1 := fit(math.Exp(x1))
		_, e2 := fit(math.Exp(x2))
		if e1 < e2 {
			c = x2
		} else {
			a = x1
		}
	}
	x, worst := fit(math.Exp((a + c) / 2))
	if x == nil || worst > fitTolerance {
		return nil, false
	}
	out := make([]float64, terms)
	for j, t := range cols {
		if !(x[j] > 0) {
			return nil, false
		}
		out[t] = x[j]
	}
	return out, true
}

// solveLinear solves the m×m system a·x = r (a row-major; both are
// overwritten) by Gaussian elimination with partial pivoting; false when a
// pivot is negligible against the matrix's largest entry.
func solveLinear(a, r []float64, m int) ([]float64, bool) {
	scale := 0.0
	for _, v := range a {
		scale = max(scale, math.Abs(v))
	}
	if !(scale > 0) {
		return nil, false
	}
	for col := range m {
		p := col
		for row := col + 1; row < m; row++ {
			if math.Abs(a[row*m+col]) > math.Abs(a[p*m+col]) {
				p = row
			}
		}
		if !(math.Abs(a[p*m+col]) > 1e-12*scale) {
			return nil, false
		}
		if p != col {
			for k := range m {
				a[p*m+k], a[col*m+k] = a[col*m+k], a[p*m+k]
			}
			r[p], r[col] = r[col], r[p]
		}
		for row := col + 1; row < m; row++ {
			f := a[row*m+col] / a[col*m+col]
			for k := col; k < m; k++ {
				a[row*m+k] -= f * a[col*m+k]
			}
			r[row] -= f * r[col]
		}
	}
	x := make([]float64, m)
	for row := m - 1; row >= 0; row-- {
		v := r[row]
		for k := row + 1; k < m; k++ {
			v -= a[row*m+k] * x[k]
		}
		x[row] = v / a[row*m+row]
	}
	return x, true
}
