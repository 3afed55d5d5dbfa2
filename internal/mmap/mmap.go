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
	"sync/atomic"
)

// ErrUnsupported is returned by Map on systems where this package does not map.
var ErrUnsupported = errors.New("mmap: not supported on this system")

// Region is a mapped range. Its bytes stay valid until Close, which the
// owner calls only once nothing uses them any more.
type Region struct {
	mu       sync.RWMutex // guards b, base, file, closed and detached
	b        []byte       // the caller's view: len the file bytes, cap the capacity
	base     []byte       // the whole mapping, page-rounded, for Close
	file     *sharedFD    // the file's descriptor for ReadAt; nil: none
	off      int64        // the file offset of b[0]
	closed   bool
	detached bool   // the file's pages were made private (Lease): ReadAt no longer reads the file
	onClose  func() // run once by Close, after the unmap; nil: nothing
}

// ReadAt reads len(p) of the file's bytes from offset off of the region (as
// mapped, not as since written through the mapping) into p, without mapping
// them: io.ReaderAt over the region's file bytes.
func (r *Region) ReadAt(p []byte, off int64) (int, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	switch {
	case r.closed || r.file == nil:
		return 0, ErrClosed
	case r.detached:
		return 0, ErrDetached
	case off < 0 || off > int64(len(r.b)):
		return 0, fmt.Errorf("mmap: read at %d of a %d-byte region", off, len(r.b))
	}
	want := len(p)
	if left := int64(len(r.b)) - off; int64(want) > left {
		p = p[:left]
	}
	n, err := pread(r.file.fd, p, r.off+off)
	if err == nil && n < want {
		err = io.EOF
	}
	return n, err
}

// ErrClosed is returned by ReadAt after Close, and by a region made without a file.
var ErrClosed = errors.New("mmap: region closed or without a file")

// ErrDetached is returned by ReadAt once the region's pages were made its own
// because another process was about to change the file (Lease): the file no
// longer holds the region's bytes, the mapping does.
var ErrDetached = errors.New("mmap: region detached from its file")

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
	if r.file != nil {
		err = errors.Join(err, r.file.release())
		r.file = nil
	}
	if r.onClose != nil {
		r.onClose()
		r.onClose = nil
	}
	return err
}

// roundUp rounds n up to a multiple of page (a power of two).
func roundUp(n, page int) int { return (n + page - 1) &^ (page - 1) }

// Mapper returns a function that maps ranges of f, for binenc.Reader.SetMapper.
// Its regions share one duplicate of f's descriptor, closed with the last
// of them, so that a snapshot's arrays hold one descriptor, not one each.
func Mapper(f *os.File) func(off int64, length, capacity int) ([]byte, io.Closer, error) {
	var shared *sharedFD
	var mu sync.Mutex
	return func(off int64, length, capacity int) ([]byte, io.Closer, error) {
		mu.Lock()
		defer mu.Unlock()
		if !shared.acquire() {
			s, err := newSharedFD(f)
			if err != nil {
				return nil, nil, err
			}
			shared = s
		}
		r, err := mapFile(f, off, length, capacity, shared)
		if err != nil {
			_ = shared.release()
			return nil, nil, err
		}
		return r.Bytes(), r, nil
	}
}

// Map maps length bytes of f from offset off, which must be a multiple of
// the page size, followed by zeroed memory up to capacity bytes in all (at
// least length). The bytes from off to off+length must lie inside the file.
// The mapping outlives f: the caller may close the file afterwards (the
// region keeps a duplicate descriptor for ReadAt).
func Map(f *os.File, off int64, length, capacity int) (*Region, error) {
	s, err := newSharedFD(f)
	if err != nil {
		return nil, err
	}
	r, err := mapFile(f, off, length, capacity, s)
	if err != nil {
		_ = s.release()
	}
	return r, err
}

// sharedFD is a duplicate descriptor of a file, shared by the regions
// mapped from it and closed when the last of them is.
type sharedFD struct {
	fd     int
	refs   atomic.Int32
	onLast func() // run by the last release, before the descriptor closes; nil: nothing
}

// newSharedFD duplicates f's descriptor, with one reference: the caller's.
func newSharedFD(f *os.File) (*sharedFD, error) {
	fd, err := dupFD(f)
	if err != nil {
		return nil, err
	}
	s := &sharedFD{fd: fd}
	s.refs.Store(1)
	return s, nil
}

// acquire takes a reference, unless s is nil or already closed.
func (s *sharedFD) acquire() bool {
	for s != nil {
		n := s.refs.Load()
		if n == 0 {
			return false
		}
		if s.refs.CompareAndSwap(n, n+1) {
			return true
		}
	}
	return false
}

// release drops a reference, closing the descriptor with the last.
func (s *sharedFD) release() error {
	if s.refs.Add(-1) == 0 {
		if s.onLast != nil {
			s.onLast()
		}
		return closeFD(s.fd)
	}
	return nil
}
