package vector

// Matrices outside the Go heap.
//
// The collector sets its next goal from the live heap: GOGC=100 lets the
// heap grow to twice what the last cycle found live. A rebuild reserves the
// vector matrices up front (3.1 KB a row at 512-d), pointer-free arrays
// that need no marking but count towards that goal all the same: at 1M rows
// the 3.1 GB reserved let the heap reach 7.8 GB before a cycle, against 4.2
// GB live, and the rebuild peaked at 8.2 GB resident (engram search on a 1M
// store without its snapshot, GODEBUG=gctrace=1). In anonymous memory of
// their own the matrices cost what is written, and the goal follows the
// memories, postings and maps alone. An array grown past its room moves to
// the heap, and its anonymous memory (or a snapshot's mapping) is unmapped
// then (releaseMoved).

import (
	"runtime"
	"unsafe"

	"github.com/engram-memory/engram/internal/mmap"
)

// offHeapMin is the least reservation, in bytes of float32 rows, whose
// matrices are made off the heap.
const offHeapMin = 1 << 20

// offHeap returns an empty slice with room for capacity elements: when
// capacity exceeds need (Reserve's choice, from offHeapMin) and this system
// maps, anonymous memory, committed only as written and unmapped once ix
// is unreachable; else the heap's, need of them (a heap array's room would
// count, written or not).
func offHeap[T float32 | int8 | byte](ix *Index, capacity, need int) []T {
	if capacity <= need {
		return make([]T, 0, need)
	}
	size := int(unsafe.Sizeof(*new(T)))
	r, err := mmap.Anon(capacity * size)
	if err != nil {
		return make([]T, 0, need)
	}
	b := r.Bytes()
	ix.anon.Keep(unsafe.Pointer(unsafe.SliceData(b)), cap(b), r)
	runtime.AddCleanup(ix, func(r *mmap.Region) { r.Close() }, r)
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), capacity)[:0]
}

// releaseMoved unmaps the matrices' mappings, a snapshot's or anonymous,
// that no matrix is in any more (an array grown past its room onto the
// heap, or reserved anew); the caller holds the write lock, so no search
// still reads them.
func (ix *Index) releaseMoved() {
	if p := ix.check; p != nil && unsafe.SliceData(ix.data) != p.base {
		ix.settle() // the float32 rows moved: check the copied ones while the file is open (check.go)
	}
	if len(ix.maps) == 0 && len(ix.anon) == 0 {
		return
	}
	inUse := []unsafe.Pointer{unsafe.Pointer(unsafe.SliceData(ix.data)), unsafe.Pointer(unsafe.SliceData(ix.codes)),
		unsafe.Pointer(unsafe.SliceData(ix.fine)), unsafe.Pointer(unsafe.SliceData(ix.signs))}
	ix.maps.Release(inUse...)
	ix.anon.Release(inUse...)
}
