package vector

// Search is exact k-nearest-neighbour search by cosine. Vectors are unit
// length, so cosine is a dot product; every candidate is scored, so recall is
// 1 by construction (no ANN approximation). The allowed set is applied before
// scoring: a small set is walked doc by doc, a large one is checked per row
// during a sequential scan. Large scans first screen rows with int8 codes and
// rescore in float32 only those that can still make the top k (quant.go).
// Large scans are split over a few goroutines, each with its own top-k heap,
// and the heaps are merged.

import (
	"runtime"

	"github.com/engram-memory/engram/internal/docset"
	"github.com/engram-memory/engram/internal/parallel"
)

// Tuning, from BenchmarkSearchTuning on a busy, shared 2-core x86-64 machine.
// The crossovers were noisy there; measure again on a quiet one.
var (
	// listDivisor: walk the allowed docs instead of scanning all rows when
	// the allowed set holds at most Len()/listDivisor documents.
	listDivisor = 4
	// parallelMinFloats is the scoring work (rows × dim) below which a search
	// runs on the calling goroutine; above it each worker gets at least this much.
	parallelMinFloats = 1 << 19
	// maxWorkers bounds the goroutines of one search (also bounded by GOMAXPROCS).
	maxWorkers = 8
)

// Search returns the k documents whose vectors have the highest cosine with
// q, best first, ties broken by lower Doc. q is normalised internally. Only
// documents in allow are considered; a nil allow means every document. It
// returns fewer than k hits when fewer documents qualify, and nil when k < 1,
// the index is empty, or q has the wrong dimension or cannot be normalised.
// Safe for concurrent use with other readers.
func (ix *Index) Search(q []float32, allow *docset.Set, k int) []Hit {
	n := len(ix.rowDoc)
	if k < 1 || n == 0 || len(q) != ix.dim {
		return nil
	}
	qn, ok := Normalize(q)
	if !ok {
		return nil
	}
	var rows []int32 // when set, score only these rows
	work, admitted := n, n
	if allow != nil {
		c := allow.Len()
		if c == 0 {
			return nil
		}
		admitted = min(c, n)
		if c <= n/listDivisor {
			rows = ix.allowedRows(allow, c)
			work, admitted = len(rows), len(rows)
			if work == 0 {
				return nil
			}
		}
	}
	k = min(k, work)
	workers := min(runtime.GOMAXPROCS(0), maxWorkers, max(1, work*ix.dim/parallelMinFloats))
	if (fastInt8() || screenAlways) && work*ix.dim >= quantMinFloats && k <= admitted/quantMaxKDivisor {
		return ix.searchQuant(qn, rows, allow, k, workers)
	}
	heaps := make([]*topK, workers)
	parallel.Split(workers, work, func(w, lo, hi int) {
		t := newTopK(k)
		heaps[w] = t
		if rows != nil {
			ix.scoreRows(qn, rows[lo:hi], t)
		} else {
			ix.scanRows(qn, allow, lo, hi, t)
		}
	})
	return mergeBest(k, heaps)
}

// allowedRows lists the rows of the allowed documents that have a vector, in
// document order. c is allow.Len(), used as a capacity hint.
func (ix *Index) allowedRows(allow *docset.Set, c int) []int32 {
	rows := make([]int32, 0, c)
	rowOf := ix.rowOf
	allow.ForEach(func(doc uint32) bool {
		if uint64(doc) >= uint64(len(rowOf)) {
			return false // documents arrive in increasing order: none further has a row
		}
		if r := rowOf[doc]; r != 0 {
			rows = append(rows, r-1)
		}
		return true
	})
	return rows
}

// scanRows scores rows lo..hi-1 in order, skipping documents not in allow.
func (ix *Index) scanRows(q []float32, allow *docset.Set, lo, hi int, t *topK) {
	ix.checkRows(lo, hi)
	dim, data, rowDoc := ix.dim, ix.data, ix.rowDoc
	floor, full := t.floor()
	for r := lo; r < hi; r++ {
		doc := rowDoc[r]
		if allow != nil && !allow.Has(doc) {
			continue
		}
		s := dot(q, data[r*dim:(r+1)*dim])
		if full && s < floor {
			continue
		}
		t.offer(Hit{Doc: doc, Cosine: s})
		floor, full = t.floor()
	}
}

// scoreRows scores the listed rows.
func (ix *Index) scoreRows(q []float32, rows []int32, t *topK) {
	ix.checkListed(rows)
	dim, data, rowDoc := ix.dim, ix.data, ix.rowDoc
	floor, full := t.floor()
	for _, r32 := range rows {
		r := int(r32)
		s := dot(q, data[r*dim:(r+1)*dim])
		if full && s < floor {
			continue
		}
		t.offer(Hit{Doc: rowDoc[r], Cosine: s})
		floor, full = t.floor()
	}
}
