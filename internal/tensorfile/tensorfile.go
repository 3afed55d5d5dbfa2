// Package tensorfile reads and writes Engram tensor files (.etf): a JSON
// header and named tensors (float32, float16, int8 rows with a scale each, or
// raw bytes) in one checksummed file that go:embed carries. The converters in
// tools/modelconv write them; embed/bert and embed/static read them.
package tensorfile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"unsafe"
)

// Magic opens every file; Version is the layout this package reads.
const (
	Magic   = "ENGRAMTF"
	Version = 1
	// Align is the alignment of each tensor's data within the file.
	Align = 64
)

// DType is how a tensor's values are stored.
type DType uint8

// The stored types.
const (
	Bytes   DType = 0 // raw bytes (a 1-D tensor of its length)
	Float32 DType = 1
	Float16 DType = 2
	// Int8Rows is int8 values with one float32 scale per row (the first
	// dimension): all rows' scales, then the rows. A value is q × scale.
	Int8Rows DType = 3
)

func (d DType) String() string {
	switch d {
	case Bytes:
		return "bytes"
	case Float32:
		return "float32"
	case Float16:
		return "float16"
	case Int8Rows:
		return "int8rows"
	}
	return fmt.Sprintf("dtype(%d)", uint8(d))
}

// ErrCorrupt is returned, wrapped, for input that is not a valid file.
var ErrCorrupt = errors.New("tensorfile: corrupt file")

// Tensor is one named tensor; Data references the file's bytes in place.
type Tensor struct {
	Name  string
	DType DType
	Shape []int
	Data  string
}

// File is a parsed file.
type File struct {
	Meta    []byte // the JSON header
	Tensors []Tensor
	byName  map[string]int
}

// Tensor returns the named tensor.
func (f *File) Tensor(name string) (*Tensor, bool) {
	i, ok := f.byName[name]
	if !ok {
		return nil, false
	}
	return &f.Tensors[i], true
}

// Len is the number of values (the product of the shape).
func (t *Tensor) Len() int {
	n := 1
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// rows is the number of rows an Int8Rows tensor has a scale for.
func (t *Tensor) rows() int {
	if len(t.Shape) == 0 {
		return 1
	}
	if len(t.Shape) == 1 {
		return 1
	}
	return t.Shape[0]
}

// wantSize is the byte length the tensor's dtype and shape imply.
func (t *Tensor) wantSize() (int, bool) {
	n := 1
	for _, d := range t.Shape {
		if d < 0 || (d > 0 && n > math.MaxInt32/d) {
			return 0, false
		}
		n *= d
	}
	switch t.DType {
	case Bytes:
		return n, true
	case Float32:
		return 4 * n, true
	case Float16:
		return 2 * n, true
	case Int8Rows:
		return 4*t.rows() + n, true
	}
	return 0, false
}

// Meta returns the JSON header of the file in data, reading nothing else (no
// checksum): what a caller needs to name a model without decoding it.
func Meta(data string) ([]byte, error) {
	if len(data) < len(Magic)+8 || data[:len(Magic)] != Magic {
		return nil, fmt.Errorf("%w: no %s header", ErrCorrupt, Magic)
	}
	r := reader{s: data, p: len(Magic)}
	if v := r.u32(); v != Version {
		return nil, fmt.Errorf("tensorfile: version %d, this build reads %d", v, Version)
	}
	m := r.bytes(int(r.u32()))
	if r.err != nil {
		return nil, r.err
	}
	return []byte(m), nil
}

// Parse decodes a file held in data (a go:embed string, say) without copying
// tensor data. It checks the checksum, the layout and every tensor's size, and
// never panics on any input.
func Parse(data string) (*File, error) { return parse(data, true) }

// ParseBuiltIn is Parse without the checksum, for a file built into the
// binary (whose checksum a test of its package checks): the checksum would
// read every byte of the file, tens of megabytes a process may not need
// all of. The layout and every tensor's size are still checked.
func ParseBuiltIn(data string) (*File, error) { return parse(data, false) }

func parse(data string, checksum bool) (*File, error) {
	if len(data) < len(Magic)+8+4+4 || data[:len(Magic)] != Magic {
		return nil, fmt.Errorf("%w: no %s header", ErrCorrupt, Magic)
	}
	body := data[:len(data)-4]
	if checksum {
		want := binary.LittleEndian.Uint32([]byte(data[len(data)-4:]))
		// The checksum reads the string's bytes in place: never written to.
		if got := crc32.ChecksumIEEE(unsafe.Slice(unsafe.StringData(body), len(body))); got != want {
			return nil, fmt.Errorf("%w: checksum %08x, file says %08x", ErrCorrupt, got, want)
		}
	}
	r := reader{s: body, p: len(Magic)}
	if v := r.u32(); v != Version {
		if r.err != nil {
			return nil, r.err
		}
		return nil, fmt.Errorf("tensorfile: version %d, this build reads %d", v, Version)
	}
	f := &File{Meta: []byte(r.bytes(int(r.u32())))}
	n := int(r.u32())
	if r.err == nil && n > len(body)/20 {
		return nil, fmt.Errorf("%w: %d tensors cannot fit in %d bytes", ErrCorrupt, n, len(body))
	}
	f.byName = make(map[string]int, n)
	for i := 0; i < n && r.err == nil; i++ {
		t := Tensor{Name: r.bytes(int(r.u16())), DType: DType(r.u8())}
		nd := int(r.u8())
		for j := 0; j < nd; j++ {
			t.Shape = append(t.Shape, int(r.u32()))
		}
		off, size := r.u64(), r.u64()
		if r.err != nil {
			break
		}
		want, ok := t.wantSize()
		if !ok {
			return nil, fmt.Errorf("%w: tensor %q has dtype %v and shape %v", ErrCorrupt, t.Name, t.DType, t.Shape)
		}
		if size != uint64(want) || off%Align != 0 || off > uint64(len(body)) || size > uint64(len(body))-off {
			return nil, fmt.Errorf("%w: tensor %q: %d bytes at %d (want %d) in a %d-byte file", ErrCorrupt, t.Name, size, off, want, len(body))
		}
		t.Data = body[off : off+size]
		if _, dup := f.byName[t.Name]; dup {
			return nil, fmt.Errorf("%w: tensor %q twice", ErrCorrupt, t.Name)
		}
		f.byName[t.Name] = len(f.Tensors)
		f.Tensors = append(f.Tensors, t)
	}
	if r.err != nil {
		return nil, r.err
	}
	return f, nil
}

// reader walks the header with a sticky error.
type reader struct {
	s   string
	p   int
	err error
}

func (r *reader) take(n int) string {
	if r.err != nil {
		return ""
	}
	if n < 0 || n > len(r.s)-r.p {
		r.err = fmt.Errorf("%w: header needs %d bytes at %d of %d", ErrCorrupt, n, r.p, len(r.s))
		return ""
	}
	s := r.s[r.p : r.p+n]
	r.p += n
	return s
}

func (r *reader) bytes(n int) string { return r.take(n) }
func (r *reader) u8() uint8 {
	if s := r.take(1); s != "" {
		return s[0]
	}
	return 0
}
func (r *reader) u16() uint16 {
	if s := r.take(2); s != "" {
		return binary.LittleEndian.Uint16([]byte(s))
	}
	return 0
}
func (r *reader) u32() uint32 {
	if s := r.take(4); s != "" {
		return binary.LittleEndian.Uint32([]byte(s))
	}
	return 0
}
func (r *reader) u64() uint64 {
	if s := r.take(8); s != "" {
		return binary.LittleEndian.Uint64([]byte(s))
	}
	return 0
}
