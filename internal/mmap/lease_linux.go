package mmap

import (
	"fmt"
	"os"
	"os/signal"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// leases are the Leases held, which the kernel's signal (SIGIO, for every
// lease of the process alike) may concern: each is asked whether a break is
// under way. A Lease leaves with its file's last reference, before the
// descriptor closes, so a descriptor number asked about is never another
// file's.
var leases struct {
	sync.Mutex // guards all
	all        map[*Lease]struct{}
	watching   sync.Once
}

// NewLease takes a read lease on f, opened read-only, and returns what maps
// it under that guard. writers is held while a break copies the regions:
// whoever writes into the mapped bytes must hold it then (reads need not).
// onBreak, when not nil, is told once another process broke the lease and
// the regions are the process's own (with what failed on the way: a region
// that could not be copied is no longer safe to read). NewLease fails when
// the lease cannot be had (see the package comment).
func NewLease(f *os.File, writers sync.Locker, onBreak func(error)) (*Lease, error) {
	// The signal must be caught before the first lease: by default it ends the process.
	leases.watching.Do(watchLeases)
	s, err := newSharedFD(f)
	if err != nil {
		return nil, err
	}
	if _, err := unix.FcntlInt(uintptr(s.fd), unix.F_SETLEASE, unix.F_RDLCK); err != nil {
		_ = s.release()
		return nil, fmt.Errorf("mmap: lease %s: %w", f.Name(), err)
	}
	l := &Lease{fd: s, name: f.Name(), writers: writers, onBreak: onBreak}
	s.onLast = func() { forget(l) }
	leases.Lock()
	if leases.all == nil {
		leases.all = map[*Lease]struct{}{}
	}
	leases.all[l] = struct{}{}
	leases.Unlock()
	return l, nil
}

// watchLeases starts the goroutine that answers breaks.
func watchLeases() {
	ch := make(chan os.Signal, 8)
	signal.Notify(ch, unix.SIGIO)
	go func() {
		for range ch {
			for _, l := range breaking() {
				go l.yield()
			}
		}
	}()
}

// breaking returns the Leases whose break is under way: F_GETLEASE then
// answers the type the lease is being downgraded to, F_UNLCK.
func breaking() []*Lease {
	leases.Lock()
	defer leases.Unlock()
	var out []*Lease
	for l := range leases.all {
		if t, err := unix.FcntlInt(uintptr(l.fd.fd), unix.F_GETLEASE, 0); err == nil && t == unix.F_UNLCK {
			out = append(out, l)
		}
	}
	return out
}

// forget takes l out of the leases asked about.
func forget(l *Lease) {
	leases.Lock()
	delete(leases.all, l)
	leases.Unlock()
}

// unlease gives the lease on fd up, which lets the waiting process go on.
func unlease(fd int) error {
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETLEASE, unix.F_UNLCK); err != nil {
		return fmt.Errorf("mmap: give the lease up: %w", err)
	}
	return nil
}

// detach moves a copy of the region's file pages into its place, private
// anonymous memory, and stops ReadAt reading the file. Making the mapped
// pages private where they are would not do: truncating a file removes its
// pages past the new end from every mapping, private copies included. The
// caller keeps writers of the bytes out while it runs; readers may go on
// (the move is one mremap, under which a read waits and then finds the copy).
func (r *Region) detach() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed || r.detached || r.file == nil {
		return nil
	}
	n := roundUp(len(r.b), os.Getpagesize())
	if n > 0 {
		p, err := unix.MmapPtr(-1, 0, nil, uintptr(n), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE)
		if err != nil {
			return fmt.Errorf("mmap: reserve %d bytes for a copy of %d mapped: %w", n, len(r.b), err)
		}
		copy(unsafe.Slice((*byte)(p), n), r.base[:n])
		if _, err := unix.MremapPtr(p, uintptr(n), unsafe.Pointer(unsafe.SliceData(r.base)), uintptr(n), unix.MREMAP_MAYMOVE|unix.MREMAP_FIXED); err != nil {
			_ = unix.MunmapPtr(p, uintptr(n))
			return fmt.Errorf("mmap: move the copy of %d mapped bytes into place: %w", len(r.b), err)
		}
	}
	r.detached = true
	return nil
}
