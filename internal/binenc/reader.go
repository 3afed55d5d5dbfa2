package binenc

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"unsafe"
)

// Reader decodes what a Writer wrote. It knows the input's size, so a corrupt
// length never makes it allocate more than the remaining input could hold;
// after the first error every call returns zero values and Err reports it. It
// never panics on any input.
//
// It reads its input in large blocks into its own buffer and checksums each
// block as it arrives (the payload part of it), so decoding many small values
// costs a copy each, not a call into a reader and the CRC.
type Reader struct {
	src      io.Reader
	buf      []byte
	pos, end int // buf[pos:end] is read from src, not yet consumed
	err      error
	crc      uint32
	left     int64  // bytes before the trailer not yet consumed
	unhashed int64  // bytes before the trailer not yet read from src
	payload  int64  // bytes before the trailer
	mapper   Mapper // maps the input for Mappable (SetMapper); nil: copy
	base     int64  // the input's offset in the mapped file (a section's)
	lazy     bool   // buf holds the whole input, checksummed at Verify
	scratch  [8]byte
}

// readerBuf is the Reader's block size.
const readerBuf = 1 << 20

// NewReader returns a Reader of size bytes from r: the payload followed by the
// TrailerSize-byte trailer Finish wrote.
func NewReader(r io.Reader, size int64) *Reader {
	return NewReaderSize(r, size, readerBuf)
}

// NewReaderSize is NewReader with a buffer of bufSize bytes (at least 1):
// a small one for a reader of a few fields at the start of a large input,
// which a full buffer would read (and fault in) a megabyte of.
func NewReaderSize(r io.Reader, size int64, bufSize int) *Reader {
	rd := &Reader{src: r, buf: make([]byte, max(bufSize, 1)), left: size - TrailerSize, unhashed: size - TrailerSize, payload: size - TrailerSize}
	if rd.left < 0 {
		rd.err = fmt.Errorf("%w: %d bytes is shorter than the trailer", ErrCorrupt, size)
	}
	return rd
}

// Err returns the first error met, or nil.
func (r *Reader) Err() error { return r.err }

// Remaining returns the payload bytes not yet read.
func (r *Reader) Remaining() int64 { return r.left }

// SetErr records err as the Reader's error unless it already has one, so a
// decoder can stop on a value it finds invalid.
func (r *Reader) SetErr(err error) {
	if r.err == nil {
		r.err = err
	}
}

// Corruptf records a formatted ErrCorrupt.
func (r *Reader) Corruptf(format string, args ...any) {
	r.SetErr(fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...)))
}

// arrived checksums the payload part of b, just read from src, in order.
func (r *Reader) arrived(b []byte) {
	n := min(int64(len(b)), r.unhashed)
	if n > 0 {
		r.crc = crc32.Update(r.crc, castagnoli(), b[:n])
		r.unhashed -= n
	}
}

// take copies len(p) bytes of input into p, from the buffer and then from
// src; it does not count them against the payload.
func (r *Reader) take(p []byte) error {
	n := copy(p, r.buf[r.pos:r.end])
	r.pos += n
	p = p[n:]
	if len(p) >= len(r.buf)/2 { // large: straight from src
		m, err := io.ReadFull(r.src, p)
		r.arrived(p[:m])
		return err
	}
	for len(p) > 0 {
		r.pos, r.end = 0, 0
		m, err := io.ReadAtLeast(r.src, r.buf, len(p))
		r.arrived(r.buf[:m])
		r.end = m
		k := copy(p, r.buf[:m])
		r.pos, p = k, p[k:]
		if err != nil && len(p) > 0 {
			return err
		}
	}
	return nil
}

// raw fills p from the payload, checksummed.
func (r *Reader) raw(p []byte) bool {
	if r.err != nil {
		return false
	}
	if int64(len(p)) > r.left {
		r.Corruptf("needs %d bytes, %d left", len(p), r.left)
		return false
	}
	if err := r.take(p); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			err = fmt.Errorf("%w: input ends early: %v", ErrCorrupt, err)
		}
		r.err = err
		return false
	}
	r.left -= int64(len(p))
	return true
}

// Uint32 reads 4 bytes.
func (r *Reader) Uint32() uint32 {
	// The fast path: the bytes are payload, already in the buffer (so
	// already checksummed, or, read lazily, to be at Verify).
	if r.err == nil && r.left >= 4 && r.end-r.pos >= 4 {
		v := binary.LittleEndian.Uint32(r.buf[r.pos:])
		r.pos += 4
		r.left -= 4
		return v
	}
	if !r.raw(r.scratch[:4]) {
		return 0
	}
	return binary.LittleEndian.Uint32(r.scratch[:4])
}

// Uint64 reads 8 bytes.
func (r *Reader) Uint64() uint64 {
	if r.err == nil && r.left >= 8 && r.end-r.pos >= 8 { // as in Uint32
		v := binary.LittleEndian.Uint64(r.buf[r.pos:])
		r.pos += 8
		r.left -= 8
		return v
	}
	if !r.raw(r.scratch[:8]) {
		return 0
	}
	return binary.LittleEndian.Uint64(r.scratch[:8])
}

// Int64 reads 8 bytes.
func (r *Reader) Int64() int64 { return int64(r.Uint64()) }

// Offset is the number of payload bytes read so far.
func (r *Reader) Offset() int64 { return r.payload - r.left }

// Bool reads what Writer.Bool wrote; anything but 0 or 1 is corrupt.
func (r *Reader) Bool() bool {
	switch r.Uint32() {
	case 0:
		return false
	case 1:
		return true
	default:
		r.Corruptf("bad boolean")
		return false
	}
}

// Float32 reads 4 bytes of IEEE bits.
func (r *Reader) Float32() float32 { return math.Float32frombits(r.Uint32()) }

// Float64 reads 8 bytes of IEEE bits.
func (r *Reader) Float64() float64 { return math.Float64frombits(r.Uint64()) }

// Count reads a length prefix for elements of at least size bytes each and
// returns it, or 0 with ErrCorrupt if that many could not fit in the rest of
// the input. Decoders use it before allocating for a count they wrote with
// Uint64.
func (r *Reader) Count(size int) int {
	n := r.Uint64()
	if r.err != nil {
		return 0
	}
	if size < 1 {
		size = 1
	}
	if n > uint64(r.left)/uint64(size) {
		r.Corruptf("length %d of %d-byte items exceeds the %d bytes left", n, size, r.left)
		return 0
	}
	return int(n)
}

// String reads a length-prefixed string.
func (r *Reader) String() string {
	n := r.Count(1)
	if n == 0 {
		return ""
	}
	b := make([]byte, n)
	if !r.raw(b) {
		return ""
	}
	return unsafe.String(&b[0], n)
}

// Bytes reads a length-prefixed byte slice; an empty one reads as nil.
func (r *Reader) Bytes() []byte {
	n := r.Count(1)
	if n == 0 {
		return nil
	}
	b := make([]byte, n)
	if !r.raw(b) {
		return nil
	}
	return b
}

// BytesView reads what Bytes reads. A Reader that decodes its whole input
// where it lies (NewBytesReader, NewPayloadReader, a section of a view)
// returns a slice of that input, valid as long as the input is, not a copy:
// for a decoder that only looks at the bytes. Other Readers return a copy.
func (r *Reader) BytesView() []byte {
	n := r.Count(1)
	if n == 0 {
		return nil
	}
	if _, whole := r.src.(eofReader); whole && r.end-r.pos >= n {
		b := r.buf[r.pos : r.pos+n : r.pos+n]
		r.pos += n
		r.left -= int64(n)
		return b
	}
	b := make([]byte, n)
	if !r.raw(b) {
		return nil
	}
	return b
}

// Strings reads a count then that many strings.
func (r *Reader) Strings() []string {
	n := r.Count(8) // each string has at least its 8-byte length
	if n == 0 {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = r.String()
	}
	if r.err != nil {
		return nil
	}
	return out
}

// Uint32s reads a count then the values; an empty slice reads as nil.
func (r *Reader) Uint32s() []uint32 {
	n := r.Count(4)
	if n == 0 {
		return nil
	}
	s := make([]uint32, n)
	if !r.raw(unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), 4*n)) {
		return nil
	}
	if !littleEndian {
		b := unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), 4*n)
		for i := range s {
			s[i] = binary.LittleEndian.Uint32(b[4*i:])
		}
	}
	return s
}

// Uint64s reads a count then the values; an empty slice reads as nil.
func (r *Reader) Uint64s() []uint64 {
	n := r.Count(8)
	if n == 0 {
		return nil
	}
	s := make([]uint64, n)
	if !r.raw(unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), 8*n)) {
		return nil
	}
	if !littleEndian {
		b := unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), 8*n)
		for i := range s {
			s[i] = binary.LittleEndian.Uint64(b[8*i:])
		}
	}
	return s
}

// Int8s reads a count then the values; an empty slice reads as nil.
func (r *Reader) Int8s() []int8 {
	n := r.Count(1)
	if n == 0 {
		return nil
	}
	s := make([]int8, n)
	if !r.raw(unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), n)) {
		return nil
	}
	return s
}

// Float32s reads a count then the values; an empty slice reads as nil.
func (r *Reader) Float32s() []float32 {
	u := r.Uint32s()
	if len(u) == 0 {
		return nil
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&u[0])), len(u))
}

// Float64s reads a count then the values; an empty slice reads as nil.
func (r *Reader) Float64s() []float64 {
	u := r.Uint64s()
	if len(u) == 0 {
		return nil
	}
	return unsafe.Slice((*float64)(unsafe.Pointer(&u[0])), len(u))
}

// Verify reads the trailer once the whole payload has been read and checks it
// against the CRC-32C of the payload. It fails with ErrCorrupt on a mismatch
// or on unread payload, and returns the Reader's error.
func (r *Reader) Verify() error {
	if r.err != nil {
		return r.err
	}
	if r.left != 0 {
		r.Corruptf("%d bytes of payload left unread", r.left)
		return r.err
	}
	if r.lazy {
		// The whole section is in memory: a large one (the vector matrices)
		// is checksummed on several cores (crc.go).
		r.crc = crcParallel(r.buf[:r.payload])
	}
	if err := r.take(r.scratch[:4]); err != nil {
		r.Corruptf("trailer: %v", err)
		return r.err
	}
	if got := binary.LittleEndian.Uint32(r.scratch[:4]); got != r.crc {
		r.Corruptf("checksum %08x, want %08x", got, r.crc)
		return r.err
	}
	if r.pos < r.end {
		r.Corruptf("data after the trailer")
	} else if n, _ := r.src.Read(r.scratch[:1]); n != 0 {
		r.Corruptf("data after the trailer")
	}
	return r.err
}

// Unchecked ends a Reader whose bytes its caller checks by other means (the
// block checksums of a mapped matrix that is read lazily): it fails, as
// Verify does, unless the payload was read to its end, but neither reads
// nor compares the checksum, so that bytes mapped and skipped are not read.
func (r *Reader) Unchecked() error {
	if r.err == nil && r.left != 0 {
		r.Corruptf("%d bytes of payload left unread", r.left)
	}
	return r.err
}

// StringsShared reads what Writer.Strings wrote, as Strings does, but carves
// the strings out of a few 64 KiB buffers instead of allocating each one: for
// many short strings that are kept together (a buffer lives while any of its
// strings does).
func (r *Reader) StringsShared() []string {
	n := r.Count(8) // each string has at least its 8-byte length
	if n == 0 {
		return nil
	}
	out := make([]string, n)
	var chunk []byte
	for i := range out {
		m := r.Count(1)
		if r.err != nil {
			return nil
		}
		if m == 0 {
			continue
		}
		if m > len(chunk) {
			chunk = make([]byte, max(m, int(min(64<<10, r.left))))
		}
		if !r.raw(chunk[:m]) {
			return nil
		}
		out[i] = unsafe.String(&chunk[0], m)
		chunk = chunk[m:]
	}
	return out
}

// Uint32sTo reads what Uint32s reads into dst's memory, which it returns
// resliced, or into a new slice when dst is too short: for decoders that
// reuse scratch space. An empty slice reads as dst[:0].
func (r *Reader) Uint32sTo(dst []uint32) []uint32 {
	n := r.Count(4)
	if n == 0 {
		return dst[:0]
	}
	if cap(dst) < n {
		dst = make([]uint32, n)
	}
	s := dst[:n]
	if !r.raw(unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), 4*n)) {
		return dst[:0]
	}
	if !littleEndian {
		b := unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), 4*n)
		for i := range s {
			s[i] = binary.LittleEndian.Uint32(b[4*i:])
		}
	}
	return s
}

// BytesShared reads what Bytes reads, but carves the bytes out of *arena,
// which it replaces with a new 64 KiB buffer when too little is left (as
// StringsShared does): for many short arrays kept together. The result's
// capacity is its length, so appending to it never reaches its neighbours.
func (r *Reader) BytesShared(arena *[]byte) []byte {
	n := r.Count(1)
	if n == 0 {
		return nil
	}
	if n > len(*arena) {
		*arena = make([]byte, max(n, int(min(64<<10, r.left))))
	}
	b := (*arena)[:n:n]
	if !r.raw(b) {
		return nil
	}
	*arena = (*arena)[n:]
	return b
}
