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
// Only Linux maps; elsewhere Map returns ErrUnsupported and callers read the
// bytes into memory as before.
package mmap

import (
	"errors"
	"io"
	"os"
	"sync"
)

// ErrUnsupported is returned by Map on systems where this package does not map.
var ErrUnsupported = errors.New("mmap: not supported on this system")

// Region is a mapped range. Its bytes stay valid until Close, which the
// owner calls only once nothing uses them any more.
type Region struct {
	mu     sync.Mutex // guards b and base
	b      []byte     // the caller's view: len the file bytes, cap the capacity
	base   []byte     // the whole mapping, page-rounded, for Close
	closed bool
}

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
	return unmap(b)
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
