package vector

// The int8 codes and kernels other indexes build on (internal/ann walks a graph
// over these codes instead of scanning them all), and exact rescoring of a
// few candidates in float32.

import "math"

// DotInt8 is Σ q[i]·c[i] over len(q) items (len(c) >= len(q)), on the AVX2
// kernel where there is one.
func DotInt8(q []int16, c []int8) int32 {
	c = c[:len(q)]
	return dotInt8(q, c)
}

// Prefetch hints that c is about to be read: the loads of several rows
// scored one after another then overlap (internal/ann prefetches a node's
// neighbours before scoring them). A no-op without the assembly kernels.
func Prefetch(c []int8) { prefetch(c) }

// QueryCodes quantises a unit vector as rows are (quant.go) and returns its
// codes widened to int16, the integer kernel's query operand, and the scale:
// q ≈ scale·codes.
func QueryCodes(qn []float32) ([]int16, float32) {
	qq := newQuantQuery(qn)
	return qq.codes, float32(qq.scale)
}

// Code returns doc's int8 codes and their scale (its unit vector ≈
// scale·codes), or false when doc has no vector. The slice aliases the
// index: read it only, and only until the next Set or Remove (which may
// move the codes and unmap where they were) and while the index is
// reachable (a snapshot's mapped codes are unmapped once it is not); copy
// what you keep.
func (ix *Index) Code(doc uint32) ([]int8, float32, bool) {
	r, ok := ix.row(doc)
	if !ok {
		return nil, 0, false
	}
	return ix.codes[r*ix.dim : (r+1)*ix.dim : (r+1)*ix.dim], ix.qscale[r], true
}

// Rescore scores the listed documents exactly (float32 cosine, the kernel
// Search uses) and returns the best k, best first, ties by lower Doc, as
// Search orders hits. Documents without a vector are skipped; nil when q has
// the wrong dimension or cannot be normalised.
//
// A list of 32 or more (and at least 4k) is screened first with the int8
// codes as Search's scans are (quant.go), then, with the rows mapped,
// refined with the residual's codes: only the hits and near ties at the cut
// are scored in float32, which returns the same hits while reading a few
// float32 rows instead of every listed one (mapped rows become resident as
// they are read).
func (ix *Index) Rescore(q []float32, docs []uint32, k int) []Hit {
	if k < 1 || len(q) != ix.dim {
		return nil
	}
	qn, ok := Normalize(q)
	if !ok {
		return nil
	}
	if len(docs) >= rescoreScreenMin && len(docs) >= 4*k {
		return ix.rescoreScreened(qn, docs, k)
	}
	t := newTopK(k)
	buf := make([]float32, ix.dim)
	for _, d := range docs {
		if r, ok := ix.row(d); ok {
			t.offer(Hit{Doc: d, Cosine: dot(qn, ix.rowF32(r, buf))})
		}
	}
	return mergeBest(k, []*topK{t})
}

// rescoreScreenMin is the shortest list Rescore screens.
var rescoreScreenMin = 32

// rescoreScreened is Rescore through the int8 screen: Search's screened
// scan (searchQuant) over the listed documents' rows.
func (ix *Index) rescoreScreened(qn []float32, docs []uint32, k int) []Hit {
	rows := make([]int32, 0, len(docs))
	for _, d := range docs {
		if r, ok := ix.row(d); ok {
			rows = append(rows, int32(r))
		}
	}
	if len(rows) == 0 {
		return nil
	}
	return ix.searchQuant(qn, rows, nil, k, 1)
}

// Finite reports whether every component of q is finite and some is non-zero,
// so that Search and Rescore accept it.
func Finite(q []float32) bool {
	nonzero := false
	for _, x := range q {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return false
		}
		nonzero = nonzero || x != 0
	}
	return nonzero
}
