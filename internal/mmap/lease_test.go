//go:build linux

package mmap

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"
)

// leased writes data to a new file and leases it, mapped whole; it skips
// where leases are not had (another system, a file system without them).
func leased(t *testing.T, data []byte) (path string, l *Lease, b []byte, broke chan error) {
	t.Helper()
	path, f := tempFile(t, data)
	broke = make(chan error, 1)
	l, err := NewLease(f, new(sync.Mutex), func(err error) { broke <- err })
	if errors.Is(err, ErrUnsupported) && runtime.GOOS != "linux" {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	b, c, err := l.Mapper()(0, len(data), len(data)+os.Getpagesize())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return path, l, b, broke
}

// pattern is n bytes that differ from page to page and from other's.
func pattern(n int, seed byte) []byte {
	p := make([]byte, n)
	for i := range p {
		p[i] = byte(i/7) ^ seed
	}
	return p
}

// TestLeaseBreak changes a leased, mapped file in every way another hand
// does: the mapping keeps the bytes it had, no read faults, and the lease
// says it broke.
func TestLeaseBreak(t *testing.T) {
	page := os.Getpagesize()
	data := pattern(40*page+123, 0)
	other := pattern(3*page, 0x5a)
	otherPath := filepath.Join(t.TempDir(), "other")
	if err := os.WriteFile(otherPath, other, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		change func(t *testing.T, path string) error
	}{
		{"truncate to a page", func(t *testing.T, path string) error { return os.Truncate(path, int64(page)) }},
		{"truncate to nothing", func(t *testing.T, path string) error { return os.Truncate(path, 0) }},
		{"overwrite in place", func(t *testing.T, path string) error { return os.WriteFile(path, other, 0o644) }},
		{"cp over it", func(t *testing.T, path string) error {
			return exec.Command("cp", otherPath, path).Run()
		}},
		{"random bytes without truncating", func(t *testing.T, path string) error {
			f, err := os.OpenFile(path, os.O_WRONLY, 0)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = f.WriteAt(pattern(len(data), 0x33), 0)
			return err
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path, l, b, broke := leased(t, data)
			// Some pages read (file cache), some written (already private), most untouched.
			_ = b[5*page]
			b[9*page] = data[9*page]
			if err := c.change(t, path); err != nil {
				t.Fatal(err)
			}
			if err := <-broke; err != nil {
				t.Fatalf("break: %v", err)
			}
			if !bytes.Equal(b, data) {
				t.Fatal("the mapping's bytes changed with the file")
			}
			if !l.Broken() {
				t.Fatal("the lease does not say it broke")
			}
			if _, _, err := l.Mapper()(0, page, page); !errors.Is(err, ErrBroken) {
				t.Fatalf("mapping after the break: %v, want ErrBroken", err)
			}
			if _, err := l.View(page); !errors.Is(err, ErrBroken) {
				t.Fatalf("view after the break: %v, want ErrBroken", err)
			}
		})
	}
}

// TestLeaseBreakReadAt: a detached region no longer reads the file, whose
// bytes are not its own any more.
func TestLeaseBreakReadAt(t *testing.T) {
	page := os.Getpagesize()
	data := pattern(4*page, 1)
	path, l, b, broke := leased(t, data)
	l.mu.Lock()
	r := l.regions[0]
	l.mu.Unlock()
	p := make([]byte, 100)
	if _, err := r.ReadAt(p, int64(page)); err != nil || !bytes.Equal(p, data[page:page+100]) {
		t.Fatalf("ReadAt before the break: %v", err)
	}
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	if err := <-broke; err != nil {
		t.Fatal(err)
	}
	if _, err := r.ReadAt(p, int64(page)); !errors.Is(err, ErrDetached) {
		t.Fatalf("ReadAt after the break: %v, want ErrDetached", err)
	}
	if !bytes.Equal(b, data) {
		t.Fatal("bytes changed")
	}
}

// TestLeaseNonBlockingOpen: truncate(1) opens without blocking, so it fails
// while the lease holds, and the break still goes ahead; tried again, it
// truncates a file nothing maps any more.
func TestLeaseNonBlockingOpen(t *testing.T) {
	if _, err := exec.LookPath("truncate"); err != nil {
		t.Skip("no truncate(1) here")
	}
	page := os.Getpagesize()
	data := pattern(8*page, 2)
	path, _, b, broke := leased(t, data)
	_ = exec.Command("truncate", "-s", "0", path).Run() // EAGAIN, or truncated after the break
	if err := <-broke; err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("truncate", "-s", "0", path).CombinedOutput(); err != nil {
		t.Fatalf("truncate after the break: %v: %s", err, out)
	}
	if !bytes.Equal(b, data) {
		t.Fatal("bytes changed")
	}
}

// TestLeaseWaitsForView: a break waits until the view that load decodes
// from is closed, so the view's bytes hold while it is open.
func TestLeaseWaitsForView(t *testing.T) {
	page := os.Getpagesize()
	data := pattern(16*page, 3)
	path, l, _, broke := leased(t, data)
	v, err := l.View(len(data))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := os.Truncate(path, 0); err != nil {
			t.Error(err)
		}
	}()
	time.Sleep(50 * time.Millisecond) // let the truncation start waiting
	select {
	case <-done:
		t.Fatal("the file was truncated under an open view")
	default:
	}
	if !bytes.Equal(v.Bytes(), data) { // a fault here would end the test binary
		t.Fatal("view bytes changed")
	}
	v.Close()
	<-done
	if err := <-broke; err != nil {
		t.Fatal(err)
	}
}

// TestLeaseRefused: a file another descriptor holds open for writing cannot
// be leased; the caller reads it instead.
func TestLeaseRefused(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("leases are Linux's")
	}
	path, f := tempFile(t, pattern(page(), 4))
	w, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if l, err := NewLease(f, new(sync.Mutex), nil); err == nil {
		l.Close()
		t.Fatal("leased a file open for writing")
	}
}

// TestLeaseClosedRegions: once the lease and its regions are closed, the
// file is free and nothing is told of changes to it.
func TestLeaseClosedRegions(t *testing.T) {
	page := os.Getpagesize()
	data := pattern(4*page, 5)
	path, f := tempFile(t, data)
	broke := make(chan error, 1)
	l, err := NewLease(f, new(sync.Mutex), func(err error) { broke <- err })
	if err != nil {
		t.Skip(err)
	}
	_, c, err := l.Mapper()(0, len(data), len(data))
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	l.Close()
	f.Close() // the test's own descriptor: the last one of the leased file
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-broke:
		t.Fatalf("told of a break after everything closed: %v", err)
	default:
	}
	leases.Lock()
	n := len(leases.all)
	leases.Unlock()
	if n != 0 {
		t.Fatalf("%d leases still asked about", n)
	}
}

func page() int { return os.Getpagesize() }
