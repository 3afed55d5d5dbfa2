package binenc

// Large arrays laid out so that a reader can map them from the file instead
// of copying them: Writer.Mappable writes the length, then zero padding up to
// a multiple of MapAlign from the start of the stream, then the bytes.
// Reader.Mappable checks and skips the padding, checksums the bytes as it
// does all input, and, when it was given a Mapper and the bytes sit on a page
// boundary, returns them mapped (by internal/mmap: private, copy-on-write)
// instead of a heap copy.

import (
	"encoding/binary"
	"errors"
	"io"
	"os"
	"slices"
	"unsafe"
)

// MapAlign is the file alignment of a mappable array: 64 KiB, a multiple
// of every common page size (4, 16 and 64 KiB).
const MapAlign = 64 << 10

// MapMin is the least array size that is aligned (and so may be mapped);
// smaller ones are written and read like any other bytes. 256 KiB: the
// padding costs at most a quarter of an array's size, and at 10k memories
// the BM25 arrays and vector sketches between it and 1 MiB, copied, were
// some 500 freshly faulted heap pages of every open (a mapping costs a few
// file pages, faulted 16 at a time). A variable so that tests can map the
// arrays of a small store; a reader maps only arrays the writer aligned,
// whatever its own value.
var MapMin = 256 << 10

// Mappable writes p as a length, a padding length with that many zero bytes,
// and the bytes, padded so that they start at a multiple of MapAlign when p
// is at least MapMin bytes long. The stream must start at a file's first byte
// for a reader to map it.
func (w *Writer) Mappable(p []byte) {
	w.MappableLen(len(p))
	w.raw(p)
}

// MappableLen writes what Mappable writes before the bytes, for an array of
// n bytes that the caller then writes itself, exactly n of them, with the Raw
// methods: an array gathered from many slices (a posting list after another)
// that a reader maps as one.
func (w *Writer) MappableLen(n int) {
	w.length(n)
	pad := 0
	if n >= MapMin {
		pad = int((MapAlign - (w.n+4)%MapAlign) % MapAlign)
	}
	w.Uint32(uint32(pad))
	var zero [4096]byte
	for pad > 0 {
		k := min(pad, len(zero))
		w.raw(zero[:k])
		pad -= k
	}
}

// A Mapper maps length bytes of the input from offset off (a multiple of the
// page size), with room for capacity bytes in all; the bytes stay valid
// until the Closer is closed. An error leaves the bytes to be read.
type Mapper func(off int64, length, capacity int) ([]byte, io.Closer, error)

// SetMapper lets Mappable map arrays through m, which maps the Reader's
// input: a file read from its first byte.
func (r *Reader) SetMapper(m Mapper) { r.mapper = m }

// offset is the position of the next payload byte in the mapped file.
func (r *Reader) offset() int64 { return r.base + r.payload - r.left }

// Mappable reads what Writer.Mappable wrote. A mapping has room for capacity
// bytes in all (to append in place, committed only as written); bytes read
// into memory get exactly their length. It returns the
// mapping's Closer when it mapped the bytes (the caller owns it and closes it
// once nothing uses the bytes), or nil when it read them into memory. An
// empty array reads as nil, nil.
func (r *Reader) Mappable(capacity int) ([]byte, io.Closer) {
	n := r.Count(1)
	pad := r.Uint32()
	if r.err != nil {
		return nil, nil
	}
	if pad >= MapAlign || int64(pad) > r.left {
		r.Corruptf("padding of %d bytes", pad)
		return nil, nil
	}
	var zero [4096]byte
	for left := int(pad); left > 0; {
		k := min(left, len(zero))
		if !r.raw(zero[:k]) {
			return nil, nil
		}
		for _, b := range zero[:k] {
			if b != 0 {
				r.Corruptf("padding holds data")
				return nil, nil
			}
		}
		left -= k
	}
	if n == 0 {
		return nil, nil
	}
	if int64(n) > r.left {
		r.Corruptf("needs %d bytes, %d left", n, r.left)
		return nil, nil
	}
	capacity = max(capacity, n)
	if off := r.offset(); r.mapper != nil && n >= MapMin && off%int64(os.Getpagesize()) == 0 {
		// A mapping that fails (unsupported here, or no address space left)
		// leaves the bytes to be read into memory.
		if b, c, err := r.mapper(off, n, capacity); err == nil {
			// Checksummed like the rest, though not copied: Verify covers them.
			if !r.skip(n) {
				c.Close()
				return nil, nil
			}
			return b, c
		}
	}
	b := make([]byte, n)
	if !r.raw(b) {
		return nil, nil
	}
	return b, nil
}

// skip consumes n payload bytes, checksummed, without keeping them.
func (r *Reader) skip(n int) bool {
	for n > 0 {
		if r.pos == r.end {
			r.pos, r.end = 0, 0
			m, err := io.ReadAtLeast(r.src, r.buf, 1)
			r.arrived(r.buf[:m])
			r.end = m
			if m == 0 {
				if err == nil || err == io.EOF {
					err = io.ErrUnexpectedEOF
				}
				r.err = errors.Join(ErrCorrupt, err)
				return false
			}
		}
		k := min(n, r.end-r.pos)
		r.pos += k
		r.left -= int64(k)
		n -= k
	}
	return true
}

// MappableUint32s reads what Mappable wrote of the little-endian bytes of
// uint32 values (RawUint32s after MappableLen), as Mappable does, viewed as
// the values: mapped (private, so a big-endian host swaps them in place) or
// read into memory. Its capacity is the array's length.
func (r *Reader) MappableUint32s() ([]uint32, io.Closer) {
	b, c := r.Mappable(0)
	if len(b)%4 != 0 {
		r.Corruptf("an array of uint32 values in %d bytes", len(b))
		if c != nil {
			c.Close()
		}
		return nil, nil
	}
	if len(b) == 0 {
		return nil, c
	}
	s := unsafe.Slice((*uint32)(unsafe.Pointer(&b[0])), len(b)/4)
	if !littleEndian {
		for i := range s {
			s[i] = binary.LittleEndian.Uint32(b[4*i:])
		}
	}
	return s, c
}

// Mappings are the arrays an index keeps mapped from its snapshot (those
// Mappable and MappableUint32s returned with a Closer): their address
// ranges, which tell a mapped array from one on the heap, and what unmaps
// them. The addresses are outside the Go heap, so they are all there is to
// keep.
type Mappings []mapping

type mapping struct {
	lo, hi uintptr
	c      io.Closer
}

// Keep records the size bytes at p as mapped, unmapped by c; with c nil (the
// array was read into memory) it records nothing.
func (m *Mappings) Keep(p unsafe.Pointer, size int, c io.Closer) {
	if c != nil {
		*m = append(*m, mapping{uintptr(p), uintptr(p) + uintptr(size), c})
	}
}

// Has reports whether p points into one of the mapped arrays.
func (m Mappings) Has(p unsafe.Pointer) bool {
	for _, a := range m {
		if p != nil && uintptr(p) >= a.lo && uintptr(p) < a.hi {
			return true
		}
	}
	return false
}

// Release unmaps and forgets every array that none of inUse points into:
// arrays their owner has moved off (under its exclusive lock, so that no
// reader still holds a slice of them). The kept ones go to a new slice, so
// that a copy handed to runtime.AddCleanup (for Close) still lists every
// array: closing one twice is harmless to the Closers this package is given.
func (m *Mappings) Release(inUse ...unsafe.Pointer) {
	used := func(a mapping) bool {
		for _, p := range inUse {
			if p != nil && uintptr(p) >= a.lo && uintptr(p) < a.hi {
				return true
			}
		}
		return false
	}
	if !slices.ContainsFunc(*m, func(a mapping) bool { return !used(a) }) {
		return // the common case, after every write: nothing moved
	}
	var kept Mappings
	for _, a := range *m {
		if used(a) {
			kept = append(kept, a)
		} else {
			_ = a.c.Close()
		}
	}
	*m = kept
}

// Close unmaps every array: for a runtime.AddCleanup once nothing can reach
// the index whose slices alias them.
func (m Mappings) Close() {
	for _, a := range m {
		_ = a.c.Close()
	}
}
