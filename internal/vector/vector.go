// Package vector is the vector leg of hybrid recall: exact cosine search over
// L2-normalised embeddings held contiguously in memory, with the allowed-document
// filter applied before scoring, and an approximate scan of one-bit sketches
// of the rows for large indexes (sign.go).
package vector

import (
	"errors"
	"fmt"
	"io"
	"math"
	"sync"

	"github.com/engram-memory/engram/internal/binenc"
)

// ErrDim is returned by Set when a vector's length differs from the index's dimension.
var ErrDim = errors.New("vector: wrong dimension")

// ErrInvalid is returned by Set for a vector that cannot be normalised: one
// holding NaN or ±Inf, or one whose every component is zero.
var ErrInvalid = errors.New("vector: not normalisable (NaN, Inf or zero)")

// Hit is one search result: a document and its cosine similarity to the query.
type Hit struct {
	Doc    uint32
	Cosine float32
}

// Index holds one unit-length vector per document, row after row in a single
// slice, so a search is one sequential pass over memory.
//
// Concurrency: any number of goroutines may call Search, Vector, Has, Len and
// Dim at once. Set and Remove mutate the index and must be serialised with
// every other call by the caller (a sync.RWMutex: Set/Remove under Lock,
// the rest under RLock).
//
// Each vector costs 4·dim bytes plus 2·dim bytes for its int8 screening
// codes and their residual's (quant.go), and signDim(dim)/8 + 6 bytes for
// its sign sketch (sign.go).
// Memory for the doc→row mapping grows with the largest document number set
// (4 bytes a number), as a docset.Set does: document numbers are expected to
// be dense internal numbers, not arbitrary ids.
type Index struct {
	dim    int
	data   []float32 // len = Len()*dim; row r is data[r*dim : (r+1)*dim]
	rowDoc []uint32  // row → document
	rowOf  []int32   // document → row+1; 0 means absent

	// Int8 screening copy of data (see quant.go): row r is codes[r*dim:(r+1)*dim],
	// approximately qscale[r] times data's row, off by at most qresid[r] in L2 norm.
	codes  []int8
	qscale []float32
	qresid []float32
	// The residual's own int8 codes (quant.go, refine): row r is about
	// qscale[r]·codes + fscale[r]·fine, off by at most fresid[r].
	fine   []int8
	fscale []float32
	fresid []float32
	// Sign sketches (sign.go): rows in blocks of 32, signCols(dim) bytes of
	// bits a row; each row's 1/Σ|R·v| and popcount.
	signs   []byte
	signInv []float32
	signPop []uint16

	// maps are the snapshot mappings data and codes alias, if they were
	// loaded mapped (snapshot.go); anon the anonymous memory Reserve gave
	// them (offheap.go).
	maps, anon binenc.Mappings
	// Where data was mapped from a snapshot, its first fileRows rows also
	// read from the file without mapping them (file.go), except those
	// written since (changed): file is nil otherwise, and fileBase is where
	// data started, so that data moved onto the heap is never read from it.
	file     io.ReaderAt
	fileBase *float32
	fileRows int
	changed  []uint64
	// check is what is left to check of the float32 rows a snapshot mapped
	// (check.go); nil when there is nothing.
	check *pending
}

// New returns an empty index for vectors of dim components. A dim below 1 is
// treated as 1, so every Set then fails with ErrDim unless given one number.
func New(dim int) *Index {
	if dim < 1 {
		dim = 1
	}
	return &Index{dim: dim}
}

// Dim returns the number of components every stored vector has.
func (ix *Index) Dim() int { return ix.dim }

// Len returns the number of documents with a vector.
func (ix *Index) Len() int { return len(ix.rowDoc) }

// Set stores a normalised copy of v for doc, replacing any vector doc had. It
// fails, leaving the index unchanged, when len(v) is not Dim() or v cannot be
// normalised (NaN, Inf or all zeros).
func (ix *Index) Set(doc uint32, v []float32) error {
	if len(v) != ix.dim {
		return fmt.Errorf("set doc %d: got %d components, index has %d: %w", doc, len(v), ix.dim, ErrDim)
	}
	if int64(doc) >= math.MaxInt32 {
		return fmt.Errorf("set doc %d: document number too large", doc)
	}
	if r, ok := ix.row(doc); ok {
		ix.change(r)
		row := ix.data[r*ix.dim : (r+1)*ix.dim : (r+1)*ix.dim]
		if !normalizeInto(row, v) {
			return fmt.Errorf("set doc %d: %w", doc, ErrInvalid)
		}
		c := ix.codes[r*ix.dim : (r+1)*ix.dim]
		ix.qscale[r], ix.qresid[r] = quantizeInto(c, row)
		ix.fscale[r], ix.fresid[r] = fineInto(ix.fine[r*ix.dim:(r+1)*ix.dim], row, c, ix.qscale[r])
		ix.sketchRow(r)
		return nil
	}
	n := len(ix.data)
	ix.change(len(ix.rowDoc))
	ix.data = append(ix.data, v...) // grows amortised; overwritten below
	if !normalizeInto(ix.data[n:], v) {
		ix.data = ix.data[:n]
		return fmt.Errorf("set doc %d: %w", doc, ErrInvalid)
	}
	if int(doc) >= len(ix.rowOf) {
		ix.rowOf = growRowOf(ix.rowOf, int(doc)+1)
	}
	ix.codes = append(ix.codes, make([]int8, ix.dim)...)
	scale, resid := quantizeInto(ix.codes[n:], ix.data[n:])
	ix.qscale = append(ix.qscale, scale)
	ix.qresid = append(ix.qresid, resid)
	ix.fine = append(ix.fine, make([]int8, ix.dim)...)
	fscale, fresid := fineInto(ix.fine[n:], ix.data[n:], ix.codes[n:], scale)
	ix.fscale = append(ix.fscale, fscale)
	ix.fresid = append(ix.fresid, fresid)
	ix.growSigns(len(ix.rowDoc))
	ix.sketchRow(len(ix.rowDoc))
	ix.rowDoc = append(ix.rowDoc, doc)
	ix.rowOf[doc] = int32(len(ix.rowDoc)) // row+1
	ix.releaseMoved()
	return nil
}

// Remove deletes doc's vector; it is a no-op when doc has none. The last row
// moves into the hole, so rows stay contiguous.
func (ix *Index) Remove(doc uint32) {
	r, ok := ix.row(doc)
	if !ok {
		return
	}
	last := len(ix.rowDoc) - 1
	ix.moveSign(r, last) // clears the last row's sketch (r == last: its own)
	if r != last {
		ix.change(r)
		ix.readRow(ix.data[r*ix.dim:(r+1)*ix.dim], last)
		copy(ix.codes[r*ix.dim:(r+1)*ix.dim], ix.codes[last*ix.dim:(last+1)*ix.dim])
		copy(ix.fine[r*ix.dim:(r+1)*ix.dim], ix.fine[last*ix.dim:(last+1)*ix.dim])
		ix.qscale[r], ix.qresid[r] = ix.qscale[last], ix.qresid[last]
		ix.fscale[r], ix.fresid[r] = ix.fscale[last], ix.fresid[last]
		moved := ix.rowDoc[last]
		ix.rowDoc[r] = moved
		ix.rowOf[moved] = int32(r + 1)
	}
	ix.rowDoc = ix.rowDoc[:last]
	ix.data = ix.data[:last*ix.dim]
	ix.codes = ix.codes[:last*ix.dim]
	ix.fine = ix.fine[:last*ix.dim]
	ix.qscale, ix.qresid = ix.qscale[:last], ix.qresid[:last]
	ix.fscale, ix.fresid = ix.fscale[:last], ix.fresid[:last]
	ix.shrinkSigns(last)
	ix.rowOf[doc] = 0
}

// Has reports whether doc has a vector.
func (ix *Index) Has(doc uint32) bool {
	_, ok := ix.row(doc)
	return ok
}

// Vector returns a copy of doc's stored unit vector, or nil if it has none.
func (ix *Index) Vector(doc uint32) []float32 {
	r, ok := ix.row(doc)
	if !ok {
		return nil
	}
	v := make([]float32, ix.dim)
	ix.readRow(v, r)
	return v
}

// row returns doc's row.
func (ix *Index) row(doc uint32) (int, bool) {
	if uint64(doc) >= uint64(len(ix.rowOf)) {
		return 0, false
	}
	r := ix.rowOf[doc]
	return int(r) - 1, r != 0
}

// Normalize returns a copy of v scaled to unit L2 length. It returns false
// (and nil) when v is empty, all zeros, or holds NaN or ±Inf.
func Normalize(v []float32) ([]float32, bool) {
	out := make([]float32, len(v))
	if !normalizeInto(out, v) {
		return nil, false
	}
	return out, true
}

// normalizeInto writes v/|v| into dst (len(dst) == len(v)). The norm is
// accumulated in float64 so large or tiny components neither overflow nor
// underflow. dst may alias v.
func normalizeInto(dst, v []float32) bool {
	var ss float64
	for _, x := range v {
		f := float64(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return false
		}
		ss += f * f
	}
	if ss == 0 {
		return false
	}
	inv := 1 / math.Sqrt(ss)
	for i, x := range v {
		dst[i] = float32(float64(x) * inv)
	}
	return true
}

// Reserve makes room for n more vectors, so that loading a known number of
// rows does not copy the matrix as it grows. Where it can (Linux), the
// matrices of a large reservation are anonymous memory outside the Go heap
// (offHeap), with as many rows again of room.
func (ix *Index) Reserve(n int) {
	if n <= 0 {
		return
	}
	rows := len(ix.rowDoc) + n
	if cap(ix.data) < rows*ix.dim {
		room := rows // the rows, or as many again off the heap
		if rows*ix.dim*4 >= offHeapMin {
			room = 2*rows + 1024
		}
		blocks := (room + 31) / 32 * 32
		ix.data = append(offHeap[float32](ix, room*ix.dim, rows*ix.dim), ix.data...)
		ix.codes = append(offHeap[int8](ix, room*ix.dim, rows*ix.dim), ix.codes...)
		ix.fine = append(offHeap[int8](ix, room*ix.dim, rows*ix.dim), ix.fine...)
		ix.signs = append(offHeap[byte](ix, blocks*signCols(ix.dim), (rows+31)/32*32*signCols(ix.dim)), ix.signs...)
		ix.qscale = append(make([]float32, 0, rows), ix.qscale...)
		ix.qresid = append(make([]float32, 0, rows), ix.qresid...)
		ix.fscale = append(make([]float32, 0, rows), ix.fscale...)
		ix.fresid = append(make([]float32, 0, rows), ix.fresid...)
		ix.signInv = append(make([]float32, 0, (rows+31)/32*32), ix.signInv...)
		ix.signPop = append(make([]uint16, 0, (rows+31)/32*32), ix.signPop...)
		ix.rowDoc = append(make([]uint32, 0, rows), ix.rowDoc...)
		ix.releaseMoved() // what the arrays were in before
	}
}

// Row is a vector made ready for the index: normalised, quantised and
// sketched. Making rows is the costly part of Set and needs no lock, so
// loaders make them on several goroutines and insert them with SetRow under
// the write lock, then hand them back with Recycle.
type Row struct {
	unit           []float32
	codes, fine    []int8
	scale, resid   float32
	fscale, fresid float32
	signs          []byte // signInto's layout; empty without sketches
	signInv        float32
	signPop        uint16
	scratch        []float32 // signInto's
}

// rowPool holds Rows handed back, for Prepare to fill again: a rebuild
// makes one a memory, 7 KB at 512-d that SetRow copies and drops.
var rowPool sync.Pool

// Prepare normalises, quantises and sketches v. It fails like Set on NaN,
// Inf or a zero vector.
func Prepare(v []float32) (*Row, error) {
	n, cols, scratch := len(v), signCols(len(v)), 0
	if cols > 0 {
		scratch = signDim(n)
	}
	r, _ := rowPool.Get().(*Row)
	if r == nil || cap(r.unit) < n || cap(r.signs) < cols || cap(r.scratch) < scratch {
		r = &Row{unit: make([]float32, n), codes: make([]int8, n), fine: make([]int8, n),
			signs: make([]byte, cols), scratch: make([]float32, scratch)}
	}
	r.unit, r.codes, r.fine = r.unit[:n], r.codes[:n], r.fine[:n]
	r.signs, r.scratch, r.signInv, r.signPop = r.signs[:cols], r.scratch[:scratch], 0, 0
	if !normalizeInto(r.unit, v) {
		Recycle(r)
		return nil, ErrInvalid
	}
	r.scale, r.resid = quantizeInto(r.codes, r.unit)
	r.fscale, r.fresid = fineInto(r.fine, r.unit, r.codes, r.scale)
	if cols > 0 {
		r.signInv, r.signPop = signInto(r.signs, r.unit, r.scratch)
	}
	return r, nil
}

// Recycle hands r back for a later Prepare to fill; r (nil: nothing) must
// not be used again.
func Recycle(r *Row) {
	if r != nil {
		rowPool.Put(r)
	}
}

// SetRow stores a prepared row for doc, as Set would store the vector it came from.
func (ix *Index) SetRow(doc uint32, r *Row) error {
	if len(r.unit) != ix.dim {
		return fmt.Errorf("set doc %d: got %d components, index has %d: %w", doc, len(r.unit), ix.dim, ErrDim)
	}
	if int64(doc) >= math.MaxInt32 {
		return fmt.Errorf("set doc %d: document number too large", doc)
	}
	ix.Remove(doc)
	ix.change(len(ix.rowDoc))
	ix.data = append(ix.data, r.unit...)
	ix.codes = append(ix.codes, r.codes...)
	ix.qscale = append(ix.qscale, r.scale)
	ix.qresid = append(ix.qresid, r.resid)
	ix.fine = append(ix.fine, r.fine...)
	ix.fscale = append(ix.fscale, r.fscale)
	ix.fresid = append(ix.fresid, r.fresid)
	if len(r.signs) > 0 {
		row := len(ix.rowDoc)
		ix.growSigns(row)
		ix.putSign(row, r.signs, r.signInv, r.signPop)
	}
	if int(doc) >= len(ix.rowOf) {
		ix.rowOf = growRowOf(ix.rowOf, int(doc)+1)
	}
	ix.rowDoc = append(ix.rowDoc, doc)
	ix.rowOf[doc] = int32(len(ix.rowDoc)) // row+1
	ix.releaseMoved()
	return nil
}

// growRowOf lengthens the doc→row table to n entries, the new ones zero
// (no row), doubling its capacity when it must reallocate.
func growRowOf(rowOf []int32, n int) []int32 {
	old := len(rowOf)
	if n <= cap(rowOf) {
		rowOf = rowOf[:n]
		clear(rowOf[old:])
		return rowOf
	}
	grown := make([]int32, n, max(2*cap(rowOf), n))
	copy(grown, rowOf)
	return grown
}
