package binenc

// Sectioned streams, so that a large snapshot can be verified and decoded on
// several goroutines at once. A Writer's output is cut into sections by
// EndSection: each section is an ordinary stream (its payload and the
// CRC-32C trailer of that payload alone), and FinishSections closes the
// output with a table of contents (each section's offset and length, itself a
// stream with its own trailer) and an 8-byte footer holding the table's
// offset. A reader finds the table from the end of the input, checks that
// the sections tile the input exactly, and hands out one Reader per section
// (Sections.Next) that any goroutine may decode and Verify independently.
//
// Offsets stay those of the whole output, so arrays written with Mappable
// inside a section are still aligned in the file and can be mapped.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// footerSize is the size of the footer: the table of contents' offset.
const footerSize = 8

// EndSection closes the section written since the previous one (or the
// start): it appends the CRC-32C of the section's bytes as its trailer and
// starts a new section with a fresh checksum.
func (w *Writer) EndSection() {
	if w.err != nil {
		return
	}
	binary.LittleEndian.PutUint32(w.buf[:4], w.crc)
	n, err := w.w.Write(w.buf[:4])
	w.n += int64(n)
	w.err = err
	w.sections = append(w.sections, [2]int64{w.start, w.n - w.start})
	w.start, w.crc = w.n, 0
}

// FinishSections ends the open section if anything was written to it, then
// writes the table of contents and the footer, and flushes the buffer. It
// returns the Writer's error.
func (w *Writer) FinishSections() error {
	if w.err != nil {
		return w.err
	}
	if w.n > w.start {
		w.EndSection()
	}
	toc := w.n
	w.Uint64(uint64(len(w.sections)))
	for _, s := range w.sections {
		w.Uint64(uint64(s[0]))
		w.Uint64(uint64(s[1]))
	}
	if err := w.Finish(); err != nil {
		return err
	}
	binary.LittleEndian.PutUint64(w.buf[:8], uint64(toc))
	return w.trailer(w.buf[:8])
}

// Sections is a sectioned input: its table of contents, checked, and the
// sections not yet handed out.
type Sections struct {
	src    io.ReaderAt
	view   []byte     // the whole input in memory (SetView), or nil
	spans  [][2]int64 // offset, length (trailer included) of every section
	next   int
	mapper Mapper
}

// OpenSections reads the table of contents of size bytes of src, written by
// FinishSections, and checks that its sections tile the input before it
// (each at least a trailer long). It fails with ErrCorrupt when they do not,
// which includes an input cut anywhere or not written with sections.
func OpenSections(src io.ReaderAt, size int64) (*Sections, error) {
	if size < footerSize+TrailerSize+8 {
		return nil, fmt.Errorf("%w: %d bytes hold no table of sections", ErrCorrupt, size)
	}
	var foot [footerSize]byte
	if _, err := src.ReadAt(foot[:], size-footerSize); err != nil {
		return nil, fmt.Errorf("%w: read the footer: %v", ErrCorrupt, err)
	}
	toc := binary.LittleEndian.Uint64(foot[:])
	tocLen := uint64(size - footerSize)
	if toc > tocLen-TrailerSize-8 {
		return nil, fmt.Errorf("%w: table of sections at %d of %d bytes", ErrCorrupt, toc, size)
	}
	tocLen -= toc
	b := make([]byte, tocLen)
	if _, err := src.ReadAt(b, int64(toc)); err != nil {
		return nil, fmt.Errorf("%w: read the table of sections: %v", ErrCorrupt, err)
	}
	r := NewBytesReader(b)
	n := r.Count(16)
	spans := make([][2]int64, n)
	var at uint64
	for i := range spans {
		off, length := r.Uint64(), r.Uint64()
		if r.Err() == nil && (off != at || length < TrailerSize || length > toc-at) {
			r.Corruptf("section %d at %d of %d bytes, want it at %d inside %d", i, off, length, at, toc)
		}
		spans[i] = [2]int64{int64(off), int64(length)}
		at += length
	}
	if err := r.Verify(); err != nil {
		return nil, fmt.Errorf("table of sections: %w", err)
	}
	if at != toc {
		return nil, fmt.Errorf("%w: sections end at %d, the table starts at %d", ErrCorrupt, at, toc)
	}
	return &Sections{src: src, spans: spans}, nil
}

// SetMapper lets the Readers' Mappable map arrays through m, which maps the
// input (a file) by absolute offset.
func (s *Sections) SetMapper(m Mapper) { s.mapper = m }

// SetView makes the Readers decode straight from b, the whole input (a
// read-only mapping of the file, say), instead of reading it through the
// ReaderAt into buffers of their own: no copy of the input, and each
// section's checksum computed over it in one pass at Verify. Nothing a
// Reader returns aliases b, so b may be unmapped once every section has been
// read. b must hold exactly the input OpenSections checked.
func (s *Sections) SetView(b []byte) { s.view = b }

// Len returns the number of sections.
func (s *Sections) Len() int { return len(s.spans) }

// Left returns the number of sections not yet handed out.
func (s *Sections) Left() int { return len(s.spans) - s.next }

// Next returns a Reader of the next section, to be read to its end and
// verified (Reader.Verify) by whoever decodes it, on any goroutine. Past the
// last section it returns a Reader that fails with ErrCorrupt. Next itself
// is not safe for concurrent use.
func (s *Sections) Next() *Reader {
	if s.next >= len(s.spans) {
		r := NewBytesReader(nil)
		r.Corruptf("section %d of %d", s.next+1, len(s.spans))
		s.next++
		return r
	}
	sp := s.spans[s.next]
	s.next++
	if s.view != nil && int64(len(s.view)) >= sp[0]+sp[1] {
		r := newLazyReader(s.view[sp[0] : sp[0]+sp[1]])
		r.base, r.mapper = sp[0], s.mapper
		return r
	}
	r := NewReaderSize(io.NewSectionReader(s.src, sp[0], sp[1]), sp[1], int(min(sp[1], readerBuf)))
	r.base, r.mapper = sp[0], s.mapper
	return r
}

// Done fails with ErrCorrupt unless every section has been handed out.
func (s *Sections) Done() error {
	if s.next != len(s.spans) {
		return fmt.Errorf("%w: %d sections, %d read", ErrCorrupt, len(s.spans), s.next)
	}
	return nil
}

// Spans returns the offset and length of each section (its trailer
// included), in order: for tools and tests that look inside a file.
func Spans(data []byte) ([][2]int64, error) {
	s, err := OpenSections(bytesReaderAt(data), int64(len(data)))
	if err != nil {
		return nil, err
	}
	return s.spans, nil
}

// bytesReaderAt reads a byte slice at offsets.
type bytesReaderAt []byte

func (b bytesReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off >= int64(len(b)) {
		return 0, io.EOF
	}
	n := copy(p, b[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// NewBytesReader returns a Reader of b, a payload followed by its trailer,
// that decodes from b itself instead of copying it into a buffer of its own.
func NewBytesReader(b []byte) *Reader {
	size := int64(len(b))
	rd := &Reader{src: eofReader{}, buf: b, end: len(b), left: size - TrailerSize, unhashed: size - TrailerSize, payload: size - TrailerSize}
	if rd.left < 0 {
		rd.err = fmt.Errorf("%w: %d bytes is shorter than the trailer", ErrCorrupt, size)
		rd.end = 0
		return rd
	}
	rd.arrived(b)
	return rd
}

// newLazyReader is NewBytesReader that checksums b at Verify instead of at
// once, on the goroutine that decodes it.
func newLazyReader(b []byte) *Reader {
	size := int64(len(b))
	rd := &Reader{src: eofReader{}, buf: b, end: len(b), left: size - TrailerSize, payload: size - TrailerSize, lazy: true}
	if rd.left < 0 {
		rd.err = fmt.Errorf("%w: %d bytes is shorter than the trailer", ErrCorrupt, size)
		rd.end = 0
	}
	return rd
}

// NewPayloadReader returns a Reader of b, a payload with no trailer, that
// decodes from b itself and never checksums it: for decoding again, later,
// bytes a Reader has verified (MapPayload). Its Verify fails; use Unchecked.
func NewPayloadReader(b []byte) *Reader {
	n := int64(len(b))
	return &Reader{src: eofReader{}, buf: b, end: len(b), left: n, payload: n, lazy: true}
}

// Rest reads the rest of the payload into a new slice, checksummed as
// read: what MapPayload would have mapped (from the read position on),
// where it could not map.
func (r *Reader) Rest() []byte {
	b := make([]byte, r.left)
	if !r.raw(b) {
		return nil
	}
	return b
}

// SkipRest consumes the rest of the payload, checksummed, keeping none of
// it: after a decoder read it from elsewhere (MapPayload).
func (r *Reader) SkipRest() bool {
	if r.err != nil {
		return false
	}
	return r.skip(int(r.left))
}

// MapPayload maps the payload of the Reader's section (all of it, whatever
// has been read) through the mapper Sections.SetMapper gave, so that the
// bytes outlive the Reader and the input it reads (a view unmapped after
// the load): for a decoder that keeps them to decode later. The section
// need not start on a page: the mapping starts at the page that holds it.
// It fails without a mapper, or where mapping fails; the bytes are those
// checked only once the Reader is verified. The caller closes the Closer
// once nothing uses the bytes.
func (r *Reader) MapPayload() ([]byte, io.Closer, error) {
	if r.mapper == nil {
		return nil, nil, errors.New("binenc: no mapper for this input")
	}
	page := int64(os.Getpagesize())
	off := r.base - r.base%page
	lead := int(r.base - off)
	n := lead + int(r.payload)
	b, c, err := r.mapper(off, n, n)
	if err != nil {
		return nil, nil, err
	}
	if len(b) != n {
		c.Close()
		return nil, nil, fmt.Errorf("binenc: mapped %d bytes, want %d", len(b), n)
	}
	return b[lead:n:n], c, nil
}

// eofReader is an empty input.
type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }
