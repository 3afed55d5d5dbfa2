package binenc

import (
	"bufio"
	"encoding/binary"
	"hash/crc32"
	"io"
	"math"
	"unsafe"
)

// Writer encodes values onto an io.Writer through a buffer. After the first
// failed write every further call does nothing and Err reports that failure.
type Writer struct {
	w   *bufio.Writer
	err error
	crc uint32
	n   int64
	buf [8]byte
	// Sections (sections.go): where the open one starts, and the ended ones.
	start    int64
	sections [][2]int64
}

// NewWriter returns a Writer onto w with a buffer of 1 MiB.
func NewWriter(w io.Writer) *Writer {
	return &Writer{w: bufio.NewWriterSize(w, 1<<20)}
}

// Err returns the first error met, or nil.
func (w *Writer) Err() error { return w.err }

// Len returns the number of bytes written so far (buffered included).
func (w *Writer) Len() int64 { return w.n }

// SetErr records err as the Writer's error unless it already has one, so an
// encoder can stop on a value it refuses to write.
func (w *Writer) SetErr(err error) {
	if w.err == nil {
		w.err = err
	}
}

// raw writes p, checksummed.
func (w *Writer) raw(p []byte) {
	if w.err != nil || len(p) == 0 {
		return
	}
	w.crc = crc32.Update(w.crc, castagnoli(), p)
	n, err := w.w.Write(p)
	w.n += int64(n)
	w.err = err
}

// Uint32 writes v in 4 bytes.
func (w *Writer) Uint32(v uint32) {
	binary.LittleEndian.PutUint32(w.buf[:4], v)
	w.raw(w.buf[:4])
}

// Uint64 writes v in 8 bytes.
func (w *Writer) Uint64(v uint64) {
	binary.LittleEndian.PutUint64(w.buf[:8], v)
	w.raw(w.buf[:8])
}

// Int64 writes v in 8 bytes (two's complement).
func (w *Writer) Int64(v int64) { w.Uint64(uint64(v)) }

// Bool writes v as a 4-byte 0 or 1.
func (w *Writer) Bool(v bool) {
	var u uint32
	if v {
		u = 1
	}
	w.Uint32(u)
}

// Float32 writes v's IEEE bits in 4 bytes.
func (w *Writer) Float32(v float32) { w.Uint32(math.Float32bits(v)) }

// Float64 writes v's IEEE bits in 8 bytes.
func (w *Writer) Float64(v float64) { w.Uint64(math.Float64bits(v)) }

// Len prefix of every variable-length value.
func (w *Writer) length(n int) { w.Uint64(uint64(n)) }

// String writes a length-prefixed string.
func (w *Writer) String(s string) {
	w.length(len(s))
	if w.err != nil || len(s) == 0 {
		return
	}
	w.raw(unsafe.Slice(unsafe.StringData(s), len(s)))
}

// Bytes writes a length-prefixed byte slice.
func (w *Writer) Bytes(p []byte) {
	w.length(len(p))
	w.raw(p)
}

// Strings writes a count then each string.
func (w *Writer) Strings(s []string) {
	w.length(len(s))
	for _, v := range s {
		w.String(v)
	}
}

// Uint32s writes a count then the values.
func (w *Writer) Uint32s(s []uint32) {
	w.length(len(s))
	w.RawUint32s(s)
}

// Uint64s writes a count then the values.
func (w *Writer) Uint64s(s []uint64) {
	w.length(len(s))
	w.RawUint64s(s)
}

// Int8s writes a count then the values.
func (w *Writer) Int8s(s []int8) {
	w.length(len(s))
	w.RawInt8s(s)
}

// Float32s writes a count then the values.
func (w *Writer) Float32s(s []float32) {
	w.length(len(s))
	w.RawFloat32s(s)
}

// Float64s writes a count then the values.
func (w *Writer) Float64s(s []float64) {
	w.length(len(s))
	w.RawFloat64s(s)
}

// RawUint32s writes the values with no count, so that several slices written
// one after another read back as one slice after a count written with Uint64.
func (w *Writer) RawUint32s(s []uint32) {
	if len(s) == 0 {
		return
	}
	if littleEndian {
		w.raw(unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), 4*len(s)))
		return
	}
	for _, v := range s {
		w.Uint32(v)
	}
}

// RawUint64s is RawUint32s for uint64 values.
func (w *Writer) RawUint64s(s []uint64) {
	if len(s) == 0 {
		return
	}
	if littleEndian {
		w.raw(unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), 8*len(s)))
		return
	}
	for _, v := range s {
		w.Uint64(v)
	}
}

// RawInt8s is RawUint32s for int8 values.
func (w *Writer) RawInt8s(s []int8) {
	if len(s) == 0 {
		return
	}
	w.raw(unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)))
}

// RawFloat32s is RawUint32s for float32 values.
func (w *Writer) RawFloat32s(s []float32) {
	if len(s) == 0 {
		return
	}
	w.RawUint32s(unsafe.Slice((*uint32)(unsafe.Pointer(&s[0])), len(s)))
}

// RawFloat64s is RawUint32s for float64 values.
func (w *Writer) RawFloat64s(s []float64) {
	if len(s) == 0 {
		return
	}
	w.RawUint64s(unsafe.Slice((*uint64)(unsafe.Pointer(&s[0])), len(s)))
}

// Finish appends the CRC-32C of everything written (not itself checksummed)
// and flushes the buffer. It returns the Writer's error.
func (w *Writer) Finish() error {
	if w.err != nil {
		return w.err
	}
	binary.LittleEndian.PutUint32(w.buf[:4], w.crc)
	return w.trailer(w.buf[:4])
}

// trailer writes p outside the checksum, flushes, and records the outcome.
func (w *Writer) trailer(p []byte) error {
	n, err := w.w.Write(p)
	w.n += int64(n)
	if err == nil {
		err = w.w.Flush()
	}
	w.err = err
	return err
}

// littleEndian reports whether the host stores integers least significant
// byte first, so that slices can be written and read as they lie in memory.
var littleEndian = func() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()

// RawBytes is RawUint32s for bytes: several slices written one after another
// read back with Reader.Bytes after a count written with Uint64.
func (w *Writer) RawBytes(p []byte) {
	if len(p) == 0 {
		return
	}
	w.raw(p)
}
