package mmap

import (
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// mapFile is Map with the region's descriptor given: the caller's
// reference to it becomes the region's, or stays the caller's to release
// when mapping fails.
func mapFile(f *os.File, off int64, length, capacity int, file *sharedFD) (*Region, error) {
	return mapFD(file.fd, f.Name(), off, length, capacity, file)
}

// mapFD is mapFile from a descriptor: the file's, or a duplicate of it.
func mapFD(fd int, name string, off int64, length, capacity int, file *sharedFD) (*Region, error) {
	page := os.Getpagesize()
	switch {
	case off < 0 || off%int64(page) != 0:
		return nil, fmt.Errorf("mmap: offset %d is not a multiple of the page size %d", off, page)
	case length < 0 || capacity < length:
		return nil, fmt.Errorf("mmap: length %d, capacity %d", length, capacity)
	}
	total := roundUp(max(capacity, 1), page)
	// One anonymous reservation for the whole capacity, then the file's pages
	// over its start: appends past the file land in the zeroed rest.
	base, err := unix.MmapPtr(-1, 0, nil, uintptr(total), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE)
	if err != nil {
		return nil, fmt.Errorf("mmap: reserve %d bytes: %w", total, err)
	}
	all := unsafe.Slice((*byte)(base), total)
	if length > 0 {
		if _, err := unix.MmapPtr(fd, off, base, uintptr(roundUp(length, page)), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_FIXED); err != nil {
			_ = unix.MunmapPtr(base, uintptr(total))
			return nil, fmt.Errorf("mmap: map %d bytes of %s at %d: %w", length, name, off, err)
		}
	}
	return &Region{b: all[:length:capacity], base: all, file: file, off: off}, nil
}

// dupFD duplicates f's descriptor (close-on-exec), for ReadAt after f is closed.
func dupFD(f *os.File) (int, error) {
	fd, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("mmap: duplicate the descriptor of %s: %w", f.Name(), err)
	}
	return fd, nil
}

// Anon maps capacity bytes of zeroed private memory, committed only as
// written: an array outside the Go heap, which the collector neither scans
// nor counts towards its goal. Its Bytes have length 0.
func Anon(capacity int) (*Region, error) {
	if capacity <= 0 {
		return nil, fmt.Errorf("mmap: anonymous region of %d bytes", capacity)
	}
	total := roundUp(capacity, os.Getpagesize())
	base, err := unix.MmapPtr(-1, 0, nil, uintptr(total), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE)
	if err != nil {
		return nil, fmt.Errorf("mmap: reserve %d bytes: %w", total, err)
	}
	all := unsafe.Slice((*byte)(base), total)
	return &Region{b: all[:0:capacity], base: all}, nil
}

func pread(fd int, p []byte, off int64) (int, error) {
	n := 0
	for n < len(p) {
		m, err := unix.Pread(fd, p[n:], off+int64(n))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return n, fmt.Errorf("mmap: read %d bytes at %d: %w", len(p), off, err)
		}
		if m == 0 {
			break
		}
		n += m
	}
	return n, nil
}

func closeFD(fd int) error { return unix.Close(fd) }

func unmap(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	return unix.MunmapPtr(unsafe.Pointer(&b[0]), uintptr(len(b)))
}

// View maps the first length bytes of f read-only and shared: for reading a
// whole file once without copying it. The page table is filled by faults
// from the page cache as the bytes are read, on whichever goroutines read
// them: at 1M memories (a 4.1 GB snapshot read on two goroutines) that took
// 0.86–0.97 s and 0.87–0.95 s of CPU, against 1.0–1.05 s and 0.96–0.99 s
// when MAP_POPULATE filled it first, serially, in the mmap call (kernel
// 6.18, whose fault-around maps many cached pages per fault). Writing to the
// bytes faults.
func View(f *os.File, length int) (*Region, error) {
	return viewFD(int(f.Fd()), f.Name(), length)
}

// viewFD is View from a descriptor.
func viewFD(fd int, name string, length int) (*Region, error) {
	if length <= 0 {
		return nil, fmt.Errorf("mmap: view of %d bytes", length)
	}
	b, err := unix.Mmap(fd, 0, length, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("mmap: view %d bytes of %s: %w", length, name, err)
	}
	return &Region{b: b, base: b}, nil
}
