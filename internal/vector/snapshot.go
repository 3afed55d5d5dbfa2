package vector

// Snapshots: the index written to and read back from a binenc stream, rows in
// their in-memory order with their int8 screening copies, so loading is a
// straight read into the final arrays (no second copy of the vectors, no
// normalising or quantising again). The two matrices are written mappable
// (binenc.Writer.Mappable): a reader given the file maps them copy-on-write
// instead of reading them, so they cost no heap and are resident only as far
// as searches touch them (the int8 codes of the rows they screen). The few
// float32 rows a search rescores are read from the file (file.go).

import (
	"encoding/binary"
	"io"
	"iter"
	"math"
	"runtime"
	"slices"
	"unsafe"

	"github.com/engram-memory/engram/internal/binenc"
)

// snapshotVersion changes whenever the layout below does.
// 2: mappable matrices; 3: the residual codes; 4: sign sketches; 5: the
// float32 matrix in a section of its own, checked by blocks (check.go).
const snapshotVersion = 5

// WriteSnapshot writes the index to w as two sections: the float32 matrix
// alone, which it ends (w.EndSection), then everything else, with the
// matrix's block checksums, which the caller ends. A matrix that fails its
// checksums (Corrupt) is not written out: w fails. The caller holds at
// least a read lock.
func (ix *Index) WriteSnapshot(w *binenc.Writer) {
	if err := ix.Settle(); err != nil {
		w.SetErr(err)
		return
	}
	sums := ix.writeData(w)
	w.EndSection()
	w.Uint32(snapshotVersion)
	w.Uint64(uint64(ix.dim))
	w.Uint32s(ix.rowDoc)
	w.Float32s(ix.qscale)
	w.Float32s(ix.qresid)
	w.Float32s(ix.fscale)
	w.Float32s(ix.fresid)
	w.Float32s(ix.signInv)
	pop := make([]byte, 2*len(ix.signPop))
	for i, x := range ix.signPop {
		binary.LittleEndian.PutUint16(pop[2*i:], x)
	}
	w.Bytes(pop)
	w.Uint32s(sums)
	w.Mappable(bytesOf(ix.codes))
	w.Mappable(bytesOf(ix.fine))
	w.Mappable(bytesOf(ix.signs))
}

// ReadSnapshot reads an index written by WriteSnapshot from its two
// sections, the matrix's (mat) and the rest (r), whose document numbers are
// all below docs (the owner's slot count, itself bounded by the input's
// size), so that a corrupt document number cannot make it allocate a huge
// doc→row table. Inconsistent input is an error, recorded in r and returned.
// The caller verifies r (Verify); mat is read to its end but not verified: a
// mapped matrix is checked block by block as its rows are used (check.go),
// one read into memory here, whole.
func ReadSnapshot(mat, r *binenc.Reader, docs int) (*Index, error) {
	if v := r.Uint32(); r.Err() == nil && v != snapshotVersion {
		r.Corruptf("vector snapshot version %d, want %d", v, snapshotVersion)
	}
	dim := r.Uint64()
	if dim < 1 || dim > 1<<20 {
		if r.Err() == nil {
			r.Corruptf("vector snapshot: dimension %d", dim)
		}
		dim = 1 // what follows reads nothing (r has failed): sizes stay small
	}
	ix := &Index{dim: int(dim)}
	ix.rowDoc = r.Uint32s()
	rows := len(ix.rowDoc)
	ix.qscale = r.Float32s()
	ix.qresid = r.Float32s()
	ix.fscale = r.Float32s()
	ix.fresid = r.Float32s()
	ix.signInv = r.Float32s()
	pop := r.Bytes()
	sums := r.Uint32s()
	cols := signCols(ix.dim)
	sketchRows := rows
	if cols == 0 {
		sketchRows = 0
	}
	slots := (sketchRows + 31) / 32 * 32
	if r.Err() == nil && (len(ix.qscale) != rows || len(ix.qresid) != rows || len(ix.fscale) != rows || len(ix.fresid) != rows || len(ix.signInv) != slots || len(pop) != 2*slots) {
		r.Corruptf("vector snapshot: %d rows but %d/%d/%d/%d quantisation scales and %d/%d sketch scales", rows, len(ix.qscale), len(ix.qresid), len(ix.fscale), len(ix.fresid), len(ix.signInv), len(pop)/2)
	}
	if r.Err() == nil && sketchRows > 0 {
		ix.signPop = make([]uint16, slots)
		for i := range ix.signPop {
			ix.signPop[i] = binary.LittleEndian.Uint16(pop[2*i:])
		}
	}
	// Checked before reading the matrix, so a bad count costs no allocation.
	if r.Err() == nil && uint64(rows)*dim > uint64(r.Remaining()) {
		r.Corruptf("vector snapshot: %d rows of %d do not fit", rows, dim)
	}
	// Room for as many rows again to be added in place before a slice grows
	// (and moves onto the heap).
	room := 2*rows + 1024
	if r.Err() == nil && uint64(rows)*dim*4 > uint64(mat.Remaining()) {
		r.Corruptf("vector snapshot: %d rows of %d do not fit the matrix's %d bytes", rows, dim, mat.Remaining())
	}
	if want := (uint64(rows)*dim*4 + checkBlock - 1) / checkBlock; r.Err() == nil && uint64(len(sums)) != want {
		r.Corruptf("vector snapshot: %d block checksums for %d rows of %d, want %d", len(sums), rows, dim, want)
	}
	// The matrix is checked as its rows are used where it is mapped (and
	// read as it is on disk: little-endian); read into memory, it is all
	// here already and checked now, whole.
	var data []byte
	var dataMap io.Closer
	lazy := false
	if r.Err() == nil {
		data, dataMap = mat.Mappable(4 * room * ix.dim)
		lazy = dataMap != nil && hostLittleEndian
		check := mat.Verify
		if lazy {
			check = mat.Unchecked
		}
		if err := check(); err != nil {
			r.SetErr(err)
		}
	}
	codes, codesMap := r.Mappable(room * ix.dim)
	fine, fineMap := r.Mappable(room * ix.dim)
	signs, signsMap := r.Mappable((room + 31) / 32 * 32 * cols)
	for _, m := range []struct {
		b []byte
		c io.Closer
	}{{data, dataMap}, {codes, codesMap}, {fine, fineMap}, {signs, signsMap}} {
		ix.maps.Keep(unsafe.Pointer(unsafe.SliceData(m.b)), cap(m.b), m.c)
	}
	if len(ix.maps) > 0 {
		// The index's slices alias the mappings: unmap them once nothing
		// can reach the index (callers copy what they keep: Vector, Code).
		runtime.AddCleanup(ix, binenc.Mappings.Close, ix.maps)
	}
	if r.Err() != nil {
		return nil, r.Err()
	}
	if len(data)%4 != 0 || len(data)/4 != rows*ix.dim || len(codes) != rows*ix.dim || len(fine) != rows*ix.dim || len(signs) != (sketchRows+31)/32*32*cols {
		r.Corruptf("vector snapshot: %d rows of %d but %d bytes of values, %d/%d codes and %d of sketches", rows, ix.dim, len(data), len(codes), len(fine), len(signs))
		return nil, r.Err()
	}
	if !hostLittleEndian {
		swap32(data) // a private copy or mapping: the file is untouched
	}
	ix.data, ix.codes, ix.fine, ix.signs = float32sOf(data), int8sOf(codes), int8sOf(fine), signs
	if f, ok := dataMap.(io.ReaderAt); ok && hostLittleEndian && rows > 0 {
		ix.file, ix.fileBase, ix.fileRows = f, unsafe.SliceData(ix.data), rows
	}
	if lazy && len(sums) > 0 {
		ix.check = newPending(sums, int64(len(data)), unsafe.SliceData(ix.data))
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
	clear(ix.rowOf) // written before it is read: see bm25's dict.resize
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

// Bytes estimates the index's memory: its own (row tables, scales, and the
// matrices, on the heap or, as far as written, in anonymous memory of their
// own) and mapped from its snapshot (the matrices' rows, resident only as
// far as searches have touched them).
func (ix *Index) Bytes() (heap, mapped int64) {
	heap = 4*int64(cap(ix.rowDoc)+cap(ix.rowOf)+cap(ix.qscale)+cap(ix.qresid)+cap(ix.fscale)+cap(ix.fresid)+cap(ix.signInv)) + 2*int64(cap(ix.signPop))
	add := func(p unsafe.Pointer, n, c, size int) {
		switch {
		case ix.maps.Has(p):
			mapped += int64(n * size)
		case ix.anon.Has(p):
			heap += int64(n * size)
		default:
			heap += int64(c * size)
		}
	}
	add(unsafe.Pointer(unsafe.SliceData(ix.signs)), len(ix.signs), cap(ix.signs), 1)
	add(unsafe.Pointer(unsafe.SliceData(ix.data)), len(ix.data), cap(ix.data), 4)
	add(unsafe.Pointer(unsafe.SliceData(ix.codes)), len(ix.codes), cap(ix.codes), 1)
	add(unsafe.Pointer(unsafe.SliceData(ix.fine)), len(ix.fine), cap(ix.fine), 1)
	return heap, mapped
}

// bytesOf views a slice's elements as the little-endian bytes the snapshot
// holds: the slice's own memory on a little-endian host, a swapped copy on a
// big-endian one.
func bytesOf[T float32 | int8 | byte](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(s[0])))
	if !hostLittleEndian && unsafe.Sizeof(s[0]) == 4 {
		b = slices.Clone(b)
		swap32(b)
	}
	return b
}

// hostLittleEndian reports the host's byte order.
var hostLittleEndian = func() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()

// swap32 reverses the bytes of each 4-byte word of b.
func swap32(b []byte) {
	for i := 0; i+4 <= len(b); i += 4 {
		b[i], b[i+1], b[i+2], b[i+3] = b[i+3], b[i+2], b[i+1], b[i]
	}
}

// float32sOf views bytes (of a length and address divisible by 4, as mapped
// or allocated) as float32s, keeping the capacity.
func float32sOf(b []byte) []float32 {
	if cap(b) == 0 {
		return nil
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(b))), cap(b)/4)[:len(b)/4]
}

// int8sOf views bytes as int8s, keeping the capacity.
func int8sOf(b []byte) []int8 {
	if cap(b) == 0 {
		return nil
	}
	return unsafe.Slice((*int8)(unsafe.Pointer(unsafe.SliceData(b))), cap(b))[:len(b)]
}
