package mmap

// Mappings guarded against other hands.
//
// A private mapping reads the pages it has not written from the file, when
// they are first touched: a file truncated under it makes the next read of a
// page past the new end fault (SIGBUS, which a Go program cannot recover
// from), and one overwritten in place (cp's O_TRUNC and write into the same
// inode, rsync --inplace, a restore tool) hands the process bytes it never
// checked. A Lease rules both out: it holds a read lease on the file
// (fcntl F_SETLEASE), so that the kernel makes any process that opens the
// file to write it, or truncates it, wait while it tells this one; the Lease
// then puts a copy of each region in its place, in anonymous memory (read
// while the file still holds the bytes that were checked), stops reading the
// file, gives the lease up, and says so through its onBreak. The other
// process goes on; this one keeps using the same bytes, from its own memory.
//
// The kernel waits for the holder for /proc/sys/fs/lease-break-time seconds
// (45 by default); copying takes about a second a few GB. A lease needs the
// file's owner (or CAP_LEASE), a local file system and no writer holding the
// file open when it is taken: where NewLease fails, callers read the bytes
// into memory instead of mapping them.

import (
	"errors"
	"io"
	"sync"
)

// ErrBroken is returned by a Lease's Mapper and View once another process
// has broken it: the file may no longer hold the bytes that were checked.
var ErrBroken = errors.New("mmap: the file's lease was broken by another process")

// A Lease guards the regions mapped through it from changes to their file by
// other processes (see above). It holds its own reference to the leased file
// until Close; the regions hold theirs until they are closed, and the lease
// lasts as long as any of them.
type Lease struct {
	fd      *sharedFD   // the leased open file, shared by the regions
	name    string      // the file's name, for errors
	writers sync.Locker // kept out of the bytes while a break copies them
	onBreak func(error) // told once the regions are the process's own (with what failed); nil: nothing

	views sync.RWMutex // read-held by each open View: a break waits for them to close

	mu      sync.Mutex // guards regions, broken and closed
	regions []*Region  // mapped through Mapper, not yet detached
	broken  bool
	closed  bool // Close dropped the Lease's own reference
}

// Mapper returns a function that maps ranges of the leased file, for
// binenc.Reader.SetMapper: Mapper's, with the regions guarded.
func (l *Lease) Mapper() func(off int64, length, capacity int) ([]byte, io.Closer, error) {
	return func(off int64, length, capacity int) ([]byte, io.Closer, error) {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.broken {
			return nil, nil, ErrBroken
		}
		if !l.fd.acquire() {
			return nil, nil, ErrClosed
		}
		r, err := mapFD(l.fd.fd, l.name, off, length, capacity, l.fd)
		if err != nil {
			_ = l.fd.release()
			return nil, nil, err
		}
		l.regions = append(l.regions, r)
		return r.Bytes(), r, nil
	}
}

// View is View for the leased file: a break waits until the view is closed,
// so its bytes hold while it is open.
func (l *Lease) View(length int) (*Region, error) {
	l.views.RLock()
	l.mu.Lock()
	broken := l.broken
	ok := !broken && l.fd.acquire()
	l.mu.Unlock()
	switch {
	case broken:
		l.views.RUnlock()
		return nil, ErrBroken
	case !ok:
		l.views.RUnlock()
		return nil, ErrClosed
	}
	r, err := viewFD(l.fd.fd, l.name, length)
	_ = l.fd.release() // the mapping needs no descriptor
	if err != nil {
		l.views.RUnlock()
		return nil, err
	}
	r.onClose = l.views.RUnlock
	return r, nil
}

// Broken reports whether another process broke the lease.
func (l *Lease) Broken() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.broken
}

// Close drops the Lease's own reference to the file: the regions mapped
// through it keep the lease until they are closed. Closing twice is a no-op.
func (l *Lease) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	l.mu.Unlock()
	return l.fd.release()
}

// yield answers a break: the regions become the process's own, the lease
// is given up, onBreak is told. Only the first call acts.
func (l *Lease) yield() {
	if !l.fd.acquire() {
		return // every region closed: the file, and with it the lease, went
	}
	defer l.fd.release()
	l.views.Lock() // the bytes of an open view must hold until it closes
	defer l.views.Unlock()
	l.mu.Lock()
	if l.broken {
		l.mu.Unlock()
		return
	}
	l.broken = true
	regions := l.regions
	l.regions = nil
	l.mu.Unlock()
	var err error
	l.writers.Lock()
	for _, r := range regions {
		err = errors.Join(err, r.detach())
	}
	l.writers.Unlock()
	err = errors.Join(err, unlease(l.fd.fd))
	forget(l)
	if l.onBreak != nil {
		l.onBreak(err)
	}
}
