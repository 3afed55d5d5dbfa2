//go:build !linux

package mmap

import (
	"os"
	"sync"
)

// mapFile returns ErrUnsupported: this package maps on Linux only.
func mapFile(*os.File, int64, int, int, *sharedFD) (*Region, error) { return nil, ErrUnsupported }

// dupFD returns ErrUnsupported: nothing maps here to need it.
func dupFD(*os.File) (int, error) { return -1, ErrUnsupported }

func unmap([]byte) error { return nil }

// Anon returns ErrUnsupported: this package maps on Linux only.
func Anon(capacity int) (*Region, error) { return nil, ErrUnsupported }

// View returns ErrUnsupported: this package maps on Linux only.
func View(f *os.File, length int) (*Region, error) { return nil, ErrUnsupported }

func pread(int, []byte, int64) (int, error) { return 0, ErrUnsupported }

func closeFD(int) error { return nil }

func mapFD(int, string, int64, int, int, *sharedFD) (*Region, error) { return nil, ErrUnsupported }

func viewFD(int, string, int) (*Region, error) { return nil, ErrUnsupported }

// NewLease returns ErrUnsupported: nothing maps here to need a guard.
func NewLease(f *os.File, writers sync.Locker, onBreak func(error)) (*Lease, error) {
	return nil, ErrUnsupported
}

func unlease(int) error { return nil }

func forget(*Lease) {}

func (r *Region) detach() error { return nil }
