package vecfile

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"unsafe"
)

// Header is the fixed part of a file, readable without decoding the rest.
type Header struct {
	Name        string
	Rev         uint16
	Dim         int
	Words       int
	SourceWords uint32
}

// reader walks a string, remembering the first error.
type reader struct {
	s   string
	off int
	err error
}

func (r *reader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: truncated at byte %d reading %s", ErrFormat, r.off, what)
	}
}

func (r *reader) bytes(n int, what string) string {
	if r.err != nil || n < 0 || n > len(r.s)-r.off {
		r.fail(what)
		return ""
	}
	v := r.s[r.off : r.off+n]
	r.off += n
	return v
}

func (r *reader) u8(what string) int {
	b := r.bytes(1, what)
	if b == "" {
		return 0
	}
	return int(b[0])
}

func (r *reader) u16(what string) uint16 {
	b := r.bytes(2, what)
	if b == "" {
		return 0
	}
	return uint16(b[0]) | uint16(b[1])<<8
}

func (r *reader) u32(what string) uint32 {
	b := r.bytes(4, what)
	if b == "" {
		return 0
	}
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

func (r *reader) f32(what string) float32 { return math.Float32frombits(r.u32(what)) }

func (r *reader) uvarint(what string) uint64 {
	if r.err != nil {
		return 0
	}
	var x uint64
	var shift uint
	for i := 0; i < binary.MaxVarintLen64; i++ {
		if r.off >= len(r.s) {
			r.fail(what)
			return 0
		}
		b := r.s[r.off]
		r.off++
		if b < 0x80 {
			return x | uint64(b)<<shift
		}
		x |= uint64(b&0x7f) << shift
		shift += 7
	}
	r.err = fmt.Errorf("%w: varint overflow at byte %d reading %s", ErrFormat, r.off, what)
	return 0
}

func (r *reader) header() Header {
	if m := r.bytes(len(Magic), "magic"); r.err == nil && m != Magic {
		r.err = fmt.Errorf("%w: bad magic %q", ErrFormat, m)
	}
	if v := r.u16("version"); r.err == nil && v != Version {
		r.err = fmt.Errorf("%w: version %d, this build reads %d", ErrFormat, v, Version)
	}
	var h Header
	h.Dim = int(r.u16("dim"))
	h.Words = int(r.u32("word count"))
	h.SourceWords = r.u32("source size")
	h.Rev = r.u16("revision")
	h.Name = r.bytes(r.u8("name length"), "name")
	if r.err == nil && (h.Dim <= 0 || h.Dim > MaxDim || h.Words > MaxWords) {
		r.err = fmt.Errorf("%w: dim %d or word count %d out of range", ErrFormat, h.Dim, h.Words)
	}
	return h
}

// ParseHeader decodes only the fixed header of data: cheap enough to run
// where the vectors may never be needed.
func ParseHeader(data string) (Header, error) {
	r := &reader{s: data}
	h := r.header()
	if r.err != nil {
		return Header{}, r.err
	}
	return h, nil
}

// Parse decodes a whole file after checking its checksum. Words and Vectors
// are substrings of data: nothing large is copied.
func Parse(data string) (*File, error) {
	if len(data) < 4 {
		return nil, fmt.Errorf("%w: %d bytes", ErrFormat, len(data))
	}
	body := data[:len(data)-4]
	want := (&reader{s: data[len(body):]}).u32("checksum")
	// The checksum reads the bytes in place: a []byte conversion would copy
	// the whole (embedded, multi-megabyte) file.
	if got := crc32.Checksum(unsafe.Slice(unsafe.StringData(body), len(body)), castagnoli()); got != want {
		return nil, fmt.Errorf("%w: checksum %08x, want %08x", ErrFormat, got, want)
	}
	r := &reader{s: body}
	h := r.header()
	f := &File{Name: h.Name, Rev: h.Rev, Dim: h.Dim, SourceWords: h.SourceWords}
	nc := r.u8("component count")
	if nc > 0 {
		f.Components = make(map[string][]float32, nc)
	}
	for i := 0; i < nc && r.err == nil; i++ {
		k := r.bytes(r.u8("component name length"), "component name")
		if len(r.s)-r.off < 4*h.Dim {
			r.fail("component")
			break
		}
		c := make([]float32, h.Dim)
		for j := range c {
			c[j] = r.f32("component")
		}
		f.Components[k] = c
	}
	words := r.bytes(int(r.u32("words length")), "words")
	if r.err != nil {
		return nil, r.err
	}
	// Every word takes at least two bytes of the rest (a rank byte and a
	// scale's share), so this bounds the allocations below by the input size.
	if h.Words > len(words)+1 || 5*h.Words > len(r.s)-r.off {
		return nil, fmt.Errorf("%w: %d words do not fit in %d bytes", ErrFormat, h.Words, len(data))
	}
	f.Words = make([]string, 0, h.Words)
	for start, i := 0, 0; i <= len(words) && h.Words > 0; i++ {
		if i == len(words) || words[i] == '\n' {
			f.Words = append(f.Words, words[start:i])
			start = i + 1
		}
	}
	if len(f.Words) != h.Words {
		return nil, fmt.Errorf("%w: %d words listed, header says %d", ErrFormat, len(f.Words), h.Words)
	}
	f.Ranks = make([]uint32, h.Words)
	var rank uint64
	for i := range f.Ranks {
		rank += r.uvarint("rank")
		if rank > math.MaxUint32 {
			return nil, fmt.Errorf("%w: rank overflow", ErrFormat)
		}
		f.Ranks[i] = uint32(rank)
	}
	if r.err != nil {
		return nil, r.err
	}
	if len(r.s)-r.off != h.Words*(4+h.Dim) {
		return nil, fmt.Errorf("%w: %d bytes of scales and vectors, want %d", ErrFormat, len(r.s)-r.off, h.Words*(4+h.Dim))
	}
	f.Scales = make([]float32, h.Words)
	for i := range f.Scales {
		f.Scales[i] = r.f32("scale")
	}
	f.Vectors = r.bytes(h.Words*h.Dim, "vectors")
	if r.err != nil {
		return nil, r.err
	}
	if err := f.validate(); err != nil {
		return nil, err
	}
	return f, nil
}
