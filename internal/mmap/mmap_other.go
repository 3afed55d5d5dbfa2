//go:build !linux

package mmap

import "os"

// Map returns ErrUnsupported: this package maps on Linux only.
func Map(f *os.File, off int64, length, capacity int) (*Region, error) {
	return nil, ErrUnsupported
}

func unmap([]byte) error { return nil }

// Anon returns ErrUnsupported: this package maps on Linux only.
func Anon(capacity int) (*Region, error) { return nil, ErrUnsupported }

// View returns ErrUnsupported: this package maps on Linux only.
func View(f *os.File, length int) (*Region, error) { return nil, ErrUnsupported }

func pread(int, []byte, int64) (int, error) { return 0, ErrUnsupported }

func closeFD(int) error { return nil }
