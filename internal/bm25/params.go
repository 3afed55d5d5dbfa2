// Package bm25 is an in-memory inverted index that ranks documents by Okapi
// BM25 over several weighted fields, the keyword leg of hybrid recall. Its
// scores equal SQLite FTS5's bm25() (to rounding) when IDFRobertson is chosen.
// Inverted lists are kept in document order with a one-byte code per posting
// for the exact weighted term frequency (index.go); snapshots are flat arrays
// read in bulk (snapshot.go).
package bm25

import "math"

// Okapi BM25 defaults: Robertson & Zaragoza, "The Probabilistic Relevance
// Framework: BM25 and Beyond" (2009) recommend k1 in [1.2, 2.0] and b = 0.75;
// SQLite FTS5's bm25() and Lucene's BM25Similarity both use k1 = 1.2, b = 0.75.
const (
	DefaultK1 = 1.2  // term-frequency saturation
	DefaultB  = 0.75 // strength of document-length normalisation
)

// robertsonFloor replaces a non-positive Robertson IDF (a term in more than
// half the documents), exactly as FTS5's bm25() does.
const robertsonFloor = 1e-6

// Bounds that keep every score finite and every matching term's contribution
// strictly positive (no overflow, no underflow to 0), which the search paths
// rely on. Values this extreme are configuration mistakes anyway.
const (
	maxK1     = 1e3
	minWeight = 1e-9
	maxWeight = 1e9
)

// IDF selects the inverse-document-frequency formula. N is the number of
// indexed documents and n the number that contain the term.
type IDF int

const (
	// IDFLucene is log(1 + (N-n+0.5)/(n+0.5)), always positive (Lucene's
	// BM25Similarity). It is the default.
	IDFLucene IDF = iota
	// IDFRobertson is log((N-n+0.5)/(n+0.5)), the classic Robertson-Spärck
	// Jones weight used by FTS5's bm25(); a value <= 0 is replaced by 1e-6,
	// as FTS5 does.
	IDFRobertson
)

// String names the formula.
func (f IDF) String() string {
	switch f {
	case IDFLucene:
		return "lucene"
	case IDFRobertson:
		return "robertson"
	default:
		return "unknown"
	}
}

// Params configures an Index. The zero value is not useful; start from
// DefaultParams.
type Params struct {
	// K1 controls term-frequency saturation; negative or non-finite values
	// become DefaultK1 and values above 1000 become 1000.
	K1 float64
	// B controls length normalisation, clamped to [0, 1]; NaN becomes DefaultB.
	B float64
	// FieldWeights has one weight per field, in the order Add receives fields.
	// A term's frequency in a document is the weighted sum of its counts per
	// field. Weights below 1e-9 (or NaN) become 0, those above 1e9 become 1e9.
	FieldWeights []float64
	// LengthWeights has one weight per field for the document length the
	// formula normalises by: a document's length is the sum over fields of
	// its token count times the field's weight, rounded. Nil (the default,
	// FTS5's rule) counts every token once; a weight of 0 lets a field add
	// evidence without making its documents longer (a context field).
	// Weights outside [0, 1e9] (or NaN) become 1; missing ones are 1.
	LengthWeights []float64
	// IDF selects the IDF formula; unknown values become IDFLucene.
	IDF IDF
}

// DefaultParams returns k1 = 1.2, b = 0.75, Lucene IDF and weight 1 for each
// of fields fields (at least one).
func DefaultParams(fields int) Params {
	fields = max(fields, 1)
	w := make([]float64, fields)
	for i := range w {
		w[i] = 1
	}
	return Params{K1: DefaultK1, B: DefaultB, FieldWeights: w, IDF: IDFLucene}
}

// sanitize returns p with every out-of-range value replaced as documented on
// Params, and FieldWeights copied so the caller may reuse its slice.
func (p Params) sanitize() Params {
	if math.IsNaN(p.K1) || math.IsInf(p.K1, 0) || p.K1 < 0 {
		p.K1 = DefaultK1
	}
	p.K1 = min(p.K1, maxK1)
	switch {
	case math.IsNaN(p.B):
		p.B = DefaultB
	case p.B < 0:
		p.B = 0
	case p.B > 1:
		p.B = 1
	}
	w := make([]float64, len(p.FieldWeights))
	for i, v := range p.FieldWeights {
		if v >= minWeight { // false for NaN
			w[i] = min(v, maxWeight)
		}
	}
	p.FieldWeights = w
	if p.LengthWeights != nil {
		lw := make([]float64, len(p.FieldWeights))
		for i := range lw {
			lw[i] = 1
			if i < len(p.LengthWeights) && p.LengthWeights[i] >= 0 && p.LengthWeights[i] <= maxWeight {
				lw[i] = p.LengthWeights[i]
			}
		}
		p.LengthWeights = lw
	}
	if p.IDF != IDFLucene && p.IDF != IDFRobertson {
		p.IDF = IDFLucene
	}
	return p
}

// idf returns the inverse document frequency of a term found in n of N
// documents.
func (p *Params) idf(N, n int) float64 {
	num, den := float64(N-n)+0.5, float64(n)+0.5
	if p.IDF == IDFRobertson {
		v := math.Log(num / den)
		if v <= 0 {
			v = robertsonFloor
		}
		return v
	}
	return math.Log(1 + num/den)
}

// scorer holds the per-search constants of the BM25 formula
//
//	idf · tf·(k1+1) / (tf + k1·(1 − b + b·dl/avgdl))
//
// rearranged as w·tf / (tf + c0 + c1·dl) with w = idf·(k1+1), c0 = k1·(1−b)
// and c1 = k1·b/avgdl, so scoring a posting costs one division. The result
// differs from FTS5's evaluation order only in the last bits.
type scorer struct {
	k1p1, c0, c1 float64
}

// newScorer fixes the constants for an index of avgdl mean document length.
// An empty index (avgdl 0) has no postings, so c1 is then irrelevant and 0.
func newScorer(p *Params, avgdl float64) scorer {
	s := scorer{k1p1: p.K1 + 1, c0: p.K1 * (1 - p.B)}
	if avgdl > 0 {
		s.c1 = p.K1 * p.B / avgdl
	}
	return s
}

// norm is the length-dependent part of the denominator for a document of dl
// tokens. The explicit conversions stop the compiler fusing multiply-adds, so
// every search path computes bit-identical scores.
func (s scorer) norm(dl uint32) float64 {
	return s.c0 + float64(s.c1*float64(dl))
}

// term is one query term's contribution given w = idf·(k1+1), the document's
// weighted term frequency tf and its norm.
func term(w, tf, norm float64) float64 {
	return float64(w*tf) / (tf + norm)
}
