// Package mmap maps a byte range of a file into memory privately, with room
// to grow, so that a large array stored in a file (an index snapshot's
// vectors) is used in place instead of being copied onto the Go heap.
//
// The mapping is copy-on-write: the process may change and append to the
// bytes, and the file never sees it. Pages only read are file cache, which
// the kernel can drop and read again under memory pressure; pages never
// touched cost nothing; pages written become the process's own. Past the
// file's bytes the region continues, up to its capacity, with zeroed memory
// that is committed only when first written.
//
// A region also reads its file's bytes without mapping them (ReadAt): a
// page a process maps becomes part of its resident set, and the kernel maps
// the cached pages around each one faulted (64 KiB by default, whatever
// madvise says), so a few scattered rows read through the mapping would make
// the rest of their neighbourhood resident too.
//
// Only Linux maps; elsewhere Map returns ErrUnsupported and callers read the
// bytes into memory as before.
package mmap

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
)

// ErrUnsupported is returned by Map on systems where this package does not map.
var ErrUnsupported = errors.New("mmap: not supported on this system")

// Region is a mapped range. Its bytes stay valid until Close, which the
// owner calls only once nothing uses them any more.
type Region struct {
	mu     sync.RWMutex // guards b, base and fd
	b      []byte       // the caller's view: len the file bytes, cap the capacity
	base   []byte       // the whole mapping, page-rounded, for Close
	fd     int          // a duplicate of the file's descriptor for ReadAt; -1: none
	off    int64        // the file offset of b[0]
	closed bool
}

// ReadAt reads len(p) of the file's bytes from offset off of the region (as
// mapped, not as since written through the mapping) into p, without mapping
// them: io.ReaderAt over the region's file bytes.
func (r *Region) ReadAt(p []byte, off int64) (int, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	switch {
	case r.closed || r.fd < 0:
		return 0, ErrClosed
	case off < 0 || off > int64(len(r.b)):
		return 0, fmt.Errorf("mmap: read at %d of a %d-byte region", off, len(r.b))
	}
	want := len(p)
	if left := int64(len(r.b)) - off; int64(want) > left {
		p = p[:left]
	}
	n, err := pread(r.fd, p, r.off+off)
	if err == nil && n < want {
		err = io.EOF
	}
	return n, err
}

// ErrClosed is returned by ReadAt after Close, and by a region made without a file.
var ErrClosed = errors.New("mmap: region closed or without a file")

// Bytes returns the region's bytes: the file's length bytes, with capacity
// for the rest of the region. Nil after Close.
func (r *Region) Bytes() []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.b
}

// Close unmaps the region. Any slice of its bytes must no longer be used:
// reading one afterwards faults. Closing twice is a no-op.
func (r *Region) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	r.closed = true
	b := r.base
	r.b, r.base = nil, nil
	err := unmap(b)
	if r.fd >= 0 {
		err = errors.Join(err, closeFD(r.fd))
		r.fd = -1
	}
	return err
}

// roundUp rounds n up to a multiple of page (a power of two).
func roundUp(n, page int) int { return (n + page - 1) &^ (page - 1) }

// Mapper returns a function that maps ranges of f, for binenc.Reader.SetMapper.
func Mapper(f *os.File) func(off int64, length, capacity int) ([]byte, io.Closer, error) {
	return func(off int64, length, capacity int) ([]byte, io.Closer, error) {
		r, err := Map(f, off, length, capacity)
		if err != nil {
			return nil, nil, err
		}
		return r.Bytes(), r, nil
	}
}
