package vector

// Snapshots: the index written to and read back from a binenc stream, rows in
// their in-memory order with their int8 screening copies, so loading is a
// straight read into the final arrays (no second copy of the vectors, no
// normalising or quantising again).

import (
	"iter"
	"math"

	"github.com/engram-memory/engram/internal/binenc"
)

// snapshotVersion changes whenever the layout below does.
const snapshotVersion = 1

// WriteSnapshot writes the index to w. The caller holds at least a read lock.
func (ix *Index) WriteSnapshot(w *binenc.Writer) {
	w.Uint32(snapshotVersion)
	w.Uint64(uint64(ix.dim))
	w.Uint32s(ix.rowDoc)
	w.Float32s(ix.qscale)
	w.Float32s(ix.qresid)
	w.Float32s(ix.data)
	w.Int8s(ix.codes)
}

// ReadSnapshot reads an index written by WriteSnapshot whose document numbers
// are all below docs (the owner's slot count, itself bounded by the input's
// size), so that a corrupt document number cannot make it allocate a huge
// doc→row table. Inconsistent input is an error, recorded in r and returned.
func ReadSnapshot(r *binenc.Reader, docs int) (*Index, error) {
	if v := r.Uint32(); r.Err() == nil && v != snapshotVersion {
		r.Corruptf("vector snapshot version %d, want %d", v, snapshotVersion)
	}
	dim := r.Uint64()
	if r.Err() == nil && (dim < 1 || dim > 1<<20) {
		r.Corruptf("vector snapshot: dimension %d", dim)
	}
	ix := &Index{dim: int(dim)}
	ix.rowDoc = r.Uint32s()
	rows := len(ix.rowDoc)
	ix.qscale = r.Float32s()
	ix.qresid = r.Float32s()
	if r.Err() == nil && (len(ix.qscale) != rows || len(ix.qresid) != rows) {
		r.Corruptf("vector snapshot: %d rows but %d/%d quantisation scales", rows, len(ix.qscale), len(ix.qresid))
	}
	// Checked before reading the matrix, so a bad count costs no allocation.
	if r.Err() == nil && uint64(rows)*dim > uint64(r.Remaining()) {
		r.Corruptf("vector snapshot: %d rows of %d do not fit", rows, dim)
	}
	ix.data = r.Float32s()
	ix.codes = r.Int8s()
	if r.Err() != nil {
		return nil, r.Err()
	}
	if len(ix.data) != rows*ix.dim || len(ix.codes) != rows*ix.dim {
		r.Corruptf("vector snapshot: %d rows of %d but %d values and %d codes", rows, ix.dim, len(ix.data), len(ix.codes))
		return nil, r.Err()
	}
	var top uint32
	for _, d := range ix.rowDoc {
		if int64(d) >= math.MaxInt32 || int64(d) >= int64(docs) {
			r.Corruptf("vector snapshot: document number %d, the index has %d", d, docs)
			return nil, r.Err()
		}
		top = max(top, d+1)
	}
	ix.rowOf = make([]int32, top)
	for row, d := range ix.rowDoc {
		if ix.rowOf[d] != 0 {
			r.Corruptf("vector snapshot: document %d has two rows", d)
			return nil, r.Err()
		}
		ix.rowOf[d] = int32(row + 1)
	}
	return ix, nil
}

// Docs yields the documents that have a vector, in row order.
func (ix *Index) Docs() iter.Seq[uint32] {
	return func(yield func(uint32) bool) {
		for _, d := range ix.rowDoc {
			if !yield(d) {
				return
			}
		}
	}
}
