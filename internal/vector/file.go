package vector

// Float32 rows read from the snapshot file instead of through its mapping.
//
// A page read through a mapping joins the process's resident set, and the
// kernel maps the cached pages around each faulted one as well (64 KiB by
// default; madvise does not change it), so the few float32 rows a search
// rescores, scattered over the matrix, would make most of it resident
// within a few hundred searches (at 1M 512-d rows, 1.9 of the 3.2 KB a
// memory of RSS in engram bench were mapped file pages). Read with pread
// into the caller's buffer, a row costs a system call and leaves the
// page cache to the kernel. Rows written since the load (Set, Remove's
// move, rows added) are read from memory, where the writes are; Remove
// reads the row it moves from the file too.

import (
	"unsafe"

	"github.com/engram-memory/engram/internal/binenc"
)

// change records that row r is written from now on in memory, not the file.
func (ix *Index) change(r int) {
	ix.checkRows(r, r+1) // the bytes it replaces were checked (check.go)
	if ix.file == nil || r >= ix.fileRows {
		return
	}
	if ix.changed == nil {
		ix.changed = make([]uint64, (ix.fileRows+63)/64)
	}
	ix.changed[r/64] |= 1 << (r % 64)
}

// fileCurrent reports whether data is still the matrix the file holds
// (mapped from it, not moved onto the heap since).
func (ix *Index) fileCurrent() bool {
	return ix.file != nil && unsafe.SliceData(ix.data) == ix.fileBase
}

// fromFile reports whether row r is read from the file.
func (ix *Index) fromFile(r int) bool {
	return r < ix.fileRows && ix.fileCurrent() && (ix.changed == nil || ix.changed[r/64]&(1<<(r%64)) == 0)
}

// rowF32 returns row r's float32 values: buf (len dim) filled from the file
// when the row is read from it, else the row in data. A failed read falls
// back to data, which maps the same bytes.
func (ix *Index) rowF32(r int, buf []float32) []float32 {
	ix.checkRows(r, r+1)
	if ix.fromFile(r) {
		b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(buf))), 4*ix.dim)
		if n, err := ix.file.ReadAt(b, int64(r)*int64(len(b))); err == nil && n == len(b) {
			return buf
		}
	}
	return ix.data[r*ix.dim : (r+1)*ix.dim : (r+1)*ix.dim]
}

// readRow copies row r's float32 values into dst (len dim), from the file
// when the row is read from it.
func (ix *Index) readRow(dst []float32, r int) {
	if src := ix.rowF32(r, dst); &src[0] != &dst[0] {
		copy(dst, src)
	}
}

// writeData writes the float32 matrix as WriteSnapshot's mappable array and
// returns the checksums of its blocks (check.go): rows read from the file
// are copied through a buffer a run at a time, without mapping them.
func (ix *Index) writeData(w *binenc.Writer) []uint32 {
	var sums blockSums
	rows := len(ix.rowDoc)
	if rows == 0 || !ix.fileCurrent() {
		b := bytesOf(ix.data)
		w.Mappable(b)
		sums.write(b)
		return sums.done()
	}
	w.MappableLen(4 * len(ix.data))
	const run = 256
	buf := make([]float32, run*ix.dim)
	for lo := 0; lo < rows; lo += run {
		hi := min(lo+run, rows)
		all := true
		for r := lo; r < hi && all; r++ {
			all = ix.fromFile(r)
		}
		if all {
			b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(buf))), 4*(hi-lo)*ix.dim)
			if n, err := ix.file.ReadAt(b, int64(lo)*int64(4*ix.dim)); err == nil && n == len(b) {
				w.RawFloat32s(buf[:(hi-lo)*ix.dim])
				sums.write(bytesOf(buf[:(hi-lo)*ix.dim]))
				continue
			}
		}
		for r := lo; r < hi; r++ {
			row := ix.rowF32(r, buf[:ix.dim])
			w.RawFloat32s(row)
			sums.write(bytesOf(row))
		}
	}
	return sums.done()
}
