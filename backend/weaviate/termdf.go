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
// abstracts, and it grows with the store), so countTerms reads it instead from
// one BM25 search of the term alone (probe) over the terms property, probeDepth
// deep, with each hit's score and explanation (the term's frequency in the
// hit and the property's length there), whatever the term's frequency:
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
